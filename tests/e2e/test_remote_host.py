"""`RemoteHosts` against a real `xum server` subprocess and the fake LLM: a turn streams to the
client delta by delta, an approval is answered from the client, and a client whose socket drops
mid-reply gets what streamed before the drop."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.support.xum_server import xum_server
from xum.engine import events as E
from xum.host.pending import PendingQuestion
from xum.host.remote import RemoteHosts
from xum.host.server_target import ServerTarget, resolve_server
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

MODEL = "anthropic:claude-sonnet-5-5"
TOKEN = "remote-token-0123456789abcdef"


class Recorder:
    """A HostListener that keeps what it is told and wakes waiters on each call."""

    def __init__(self) -> None:
        self.events: list[tuple[str, E.Event]] = []
        self.statuses: list[str] = []
        self.questions: list[PendingQuestion] = []
        self._changed = asyncio.Event()

    async def opening(self, workspace_id: str) -> None:
        return None

    def event(self, workspace_id: str, event: E.Event) -> None:
        self.events.append((workspace_id, event))
        self._changed.set()

    def status_changed(self, workspace_id: str) -> None:
        self.statuses.append(workspace_id)
        self._changed.set()

    def turn_failed(self, workspace_id: str, error: Exception) -> None:
        return None

    def question_opened(self, pending: PendingQuestion) -> None:
        self.questions.append(pending)
        self._changed.set()

    def question_closed(self, pending: PendingQuestion) -> None:
        self._changed.set()

    def workspaces_changed(self) -> None:
        return None

    def of(self, ws: str) -> list[E.Event]:
        return [e for w, e in self.events if w == ws]

    async def until(self, done: Callable[[], bool], timeout: float = 30.0) -> None:
        async with asyncio.timeout(timeout):
            while not done():
                self._changed.clear()
                await self._changed.wait()


def _server_env(fake: FakeLLM) -> dict[str, str]:
    # The token goes to the server only: the client must find it through server.lock.
    return {
        "XUM_SERVER_AUTH_TOKEN": TOKEN,
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake.url,
    }


def _ended(rec: Recorder, ws: str, count: int = 1) -> Callable[[], bool]:
    return lambda: sum(isinstance(e, E.TurnEnd) for e in rec.of(ws)) >= count


def test_a_turn_streams_to_the_client_delta_by_delta(
    xum_root: Path, tmp_path: Path, fake_llm: FakeLLM, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # the token stays out of every log, debug included
    repo = make_repo(tmp_path / "repo")
    words = "one two three four five six seven eight nine ten"
    fake_llm.script(fakellm.text(words, chunk_size=4, delay=0.01))

    async def scenario(url: str) -> None:
        target = resolve_server(env={})  # found through $XUM_ROOT/server.lock
        assert target.url == url and target.token == TOKEN
        assert TOKEN not in repr(target)
        rec = Recorder()
        async with RemoteHosts(target, rec) as hosts:
            record = await hosts.create(str(repo), "local", model=MODEL, title="remote")
            assert [w.id for w in await hosts.list_workspaces()] == [record.id]
            await hosts.subscribe(record.id)
            assert await hosts.send(record, "count") == "started"
            await rec.until(_ended(rec, record.id))
        events = rec.of(record.id)
        kinds = [type(e) for e in events]
        assert kinds[0] is E.TurnStart and kinds[-1] is E.TurnEnd
        reply = kinds.index(E.AssistantMessage)
        deltas = [e for e in events[:reply] if isinstance(e, E.TextDelta)]
        assert len(deltas) >= 3  # token by token, before the reply was committed
        assert "".join(d.text for d in deltas) == words
        end = events[-1]
        assert isinstance(end, E.TurnEnd) and end.reason == "completed"
        seqs = [e.seq for e in events if isinstance(e, E.Committed)]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        assert caplog.records and TOKEN not in caplog.text

    with xum_server(env=_server_env(fake_llm)) as url:
        asyncio.run(scenario(url))


def test_an_approval_is_answered_from_the_client(
    xum_root: Path, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    repo = make_repo(tmp_path / "repo")
    fake_llm.script(
        fakellm.tool_call("bash", {"script": "touch made.txt", "display_name": "touch"}),
        fakellm.reply("Made it."),
    )

    async def scenario(url: str) -> None:
        rec = Recorder()
        async with RemoteHosts(ServerTarget(url, TOKEN), rec) as hosts:
            record = await hosts.create(str(repo), "local", model=MODEL)
            changed = await hosts.change_settings(record.id, permissions="ask")
            assert changed.permissions == "ask"
            await hosts.subscribe(record.id)
            await hosts.send(record.id, "make the file")
            await rec.until(lambda: bool(hosts.approval_requests(record.id)))
            (request,) = hosts.approval_requests(record.id)
            assert request.subject == "touch made.txt"
            assert not (repo / "made.txt").exists()  # it waits for the answer
            assert not await hosts.answer_approval(record.id, "no-such-request", "once")
            assert await hosts.answer_approval(record.id, request.request_id, "once")
            await rec.until(_ended(rec, record.id))
            assert hosts.approval_requests(record.id) == []
        resolved = [e for e in rec.of(record.id) if isinstance(e, E.ApprovalResolved)]
        assert [(r.decision, r.by) for r in resolved] == [("once", "user")]
        assert (repo / "made.txt").exists()

    with xum_server(env=_server_env(fake_llm)) as url:
        asyncio.run(scenario(url))


def test_a_client_that_reconnects_mid_reply_gets_what_streamed_before(
    xum_root: Path, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    repo = make_repo(tmp_path / "repo")
    # The reply streams a few deltas, then the model goes silent until the client hangs up.
    fake_llm.script(
        fakellm.text(
            "alpha beta gamma delta epsilon zeta eta theta",
            chunk_size=3,
            stall=fakellm.Stall(after_event=8),
        )
    )

    async def scenario(url: str) -> None:
        rec = Recorder()
        async with RemoteHosts(ServerTarget(url, TOKEN), rec, reconnect_delay_s=0.05) as hosts:
            record = await hosts.create(str(repo), "local", model=MODEL)
            ws = record.id
            await hosts.subscribe(ws)
            await hosts.send(record, "stream")
            await rec.until(lambda: sum(isinstance(e, E.TextDelta) for e in rec.of(ws)) >= 2)
            before = "".join(e.text for e in rec.of(ws) if isinstance(e, E.TextDelta))
            seen = len(rec.events)
            await hosts.reconnect()
            await rec.until(lambda: hosts.connections >= 2 and _partial_after(rec, ws, seen))
            resumed = [e for w, e in rec.events[seen:] if w == ws]
            first = next(i for i, e in enumerate(resumed) if isinstance(e, E.DiscardPartial))
            text = "".join(e.text for e in resumed[first:] if isinstance(e, E.TextDelta))
            assert before and text.startswith(before)
            # Nothing committed is delivered twice across the reconnect.
            seqs = [e.seq for e in rec.of(ws) if isinstance(e, E.Committed)]
            assert len(seqs) == len(set(seqs))
            # A second client attaching now gets the reply so far as well.
            late = Recorder()
            async with RemoteHosts(ServerTarget(url, TOKEN), late) as other:
                await other.subscribe(ws, after_seq=hosts.last_seq(ws))
                got = "".join(e.text for e in late.of(ws) if isinstance(e, E.TextDelta))
                assert got.startswith(before)
            interrupted, unsent = await hosts.interrupt(ws)
            assert interrupted and unsent == []
            await rec.until(_ended(rec, ws))
        end = rec.of(ws)[-1]
        assert isinstance(end, E.TurnEnd) and end.reason == "interrupted"

    with xum_server(env=_server_env(fake_llm)) as url:
        asyncio.run(scenario(url))


def _partial_after(rec: Recorder, ws: str, start: int) -> bool:
    later = [e for w, e in rec.events[start:] if w == ws]
    return any(isinstance(e, E.DiscardPartial) for e in later) and any(
        isinstance(e, E.TextDelta) for e in later
    )


QUESTION = {
    "question": "Which database should the plan target?",
    "header": "Database",
    "multiSelect": False,
    "options": [
        {"label": "Postgres", "description": "The production database."},
        {"label": "SQLite", "description": "Simple, local."},
    ],
}


def test_a_question_reaches_the_client_and_is_answered_from_it(
    xum_root: Path, tmp_path: Path, fake_llm: FakeLLM
) -> None:
    repo = make_repo(tmp_path / "repo")
    fake_llm.script(fakellm.tool_call("ask_user_question", {"questions": [QUESTION]}))
    fake_llm.set_default(fakellm.reply("Planning for Postgres."))

    async def scenario(url: str) -> None:
        rec = Recorder()
        async with RemoteHosts(ServerTarget(url, TOKEN), rec) as hosts:
            record = await hosts.create(str(repo), "local", model=MODEL, agent="plan")
            await hosts.subscribe(record.id)
            await hosts.send(record, "plan it")
            await rec.until(lambda: hosts.pending_question(record.id) is not None)
            pending = hosts.pending_question(record.id)
            assert pending is not None and rec.questions == [pending]
            (question,) = pending.questions
            assert question.header == "Database" and question.options[0].label == "Postgres"
            await rec.until(lambda: (hosts.status(record.id) or {}).get("state") == "waiting")
            assert not await hosts.answer_question(record.id, "nope", {})
            answers = {question.question: "Postgres"}
            assert await hosts.answer_question(record.id, pending.id, answers)
            await rec.until(_ended(rec, record.id))
            assert hosts.pending_question(record.id) is None and pending.settled
        result = next(e for e in rec.of(record.id) if isinstance(e, E.ToolResult))
        assert "Postgres" in result.output

    with xum_server(env=_server_env(fake_llm)) as url:
        asyncio.run(scenario(url))
