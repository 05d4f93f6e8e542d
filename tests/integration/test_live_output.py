"""Live tool output end to end: a turn against the fake LLM server, the real workspace wiring
(hooks, trust, project secrets, masking), real bash processes, and the `tool-output` events the
session emits (what `xum run --json` prints and the server sends).

Order is made with barriers, never sleeps: a command blocks until a file the test creates
appears, and the test polls the events with a deadline.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from tests.support.hooks import hook
from xum.engine.agent import AgentSession, TurnResult
from xum.store.secrets import set_project_secret
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.opening import open_session
from xum.tools.live import LIVE_CUT_MARKER, MAX_LIVE_CHARS
from xum.workspaces.assembly import WorkspaceSession
from xum.workspaces.safety.trust import set_trusted

pytestmark = pytest.mark.repo(name="proj", files={"app.py": "x = 1\n"}, message="first")


SECRET = "sk-live-0123456789abcdef"
Event = dict[str, Any]  # an event as front-ends receive it


def wait_for(path: Path) -> str:
    """A shell barrier: block until the test creates `path`."""
    return f'while [ ! -e "{path}" ]; do sleep 0.01; done'


@dataclass
class Live:
    session: AgentSession
    events: list[Event] = field(default_factory=list)
    opened: WorkspaceSession | None = None
    closers: list[Any] = field(default_factory=list)

    def outputs(self, call_id: str | None = None, stream: str | None = None) -> list[Event]:
        return [
            e
            for e in self.events
            if e["type"] == "tool-output"
            and (call_id is None or e["call_id"] == call_id)
            and (stream is None or e["stream"] == stream)
        ]

    def text(self, call_id: str | None = None, stream: str | None = None) -> str:
        return "".join(e["text"] for e in self.outputs(call_id, stream))

    def result(self) -> Event:
        (result,) = [e for e in self.events if e["type"] == "tool-result"]
        return result

    def index(self, event: Event) -> int:
        return next(i for i, e in enumerate(self.events) if e is event)

    async def until(self, condition: Callable[[], bool], what: str) -> None:
        deadline = time.monotonic() + 20
        while not condition():
            assert time.monotonic() < deadline, f"timed out waiting for {what}"
            await asyncio.sleep(0.01)


@pytest.fixture(autouse=True)
def project_secret(repo: Path) -> None:
    set_project_secret(str(repo), "API_TOKEN", SECRET)


@pytest.fixture
async def live(repo: Path, fake_llm: FakeLLM) -> AsyncIterator[Live]:
    async with open_session(repo, fake_llm, name_hint="live") as (opened, events):
        yield Live(opened.agent, events, opened=opened)


def bash(fake_llm: FakeLLM, script: str, **extra: Any) -> None:
    fake_llm.script(
        fakellm.tool_call("bash", {"script": script, "display_name": "t", **extra}, id="call_1"),
        fakellm.text("Done."),
    )


def turn(h: Live, text: str = "go") -> asyncio.Task[TurnResult]:
    return asyncio.create_task(h.session.run_turn(text))


async def test_output_streams_while_the_command_runs_and_ends_before_its_result(
    live: Live, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    barrier = tmp_path / "go-on"
    bash(fake_llm, f"echo first-line; {wait_for(barrier)}; echo second-line")
    running = turn(live)
    await live.until(lambda: "first-line" in live.text(), "the first line, live")
    assert not [e for e in live.events if e["type"] == "tool-result"]  # still running
    barrier.touch()
    assert (await running).reason == "completed"
    result = live.result()
    assert live.text("call_1", "output") == "first-line\nsecond-line\n"
    outputs = live.outputs()
    assert {(e["call_id"], e["stream"]) for e in outputs} == {("call_1", "output")}
    assert all(live.index(e) < live.index(result) for e in outputs)
    assert all(set(e) == {"type", "call_id", "stream", "text"} for e in outputs)  # no seq


async def test_a_chatty_command_is_coalesced(live: Live, fake_llm: FakeLLM) -> None:
    bash(fake_llm, 'for i in $(seq 1 2000); do echo "line $i"; done')
    await live.session.run_turn("go")
    expected = "".join(f"line {i}\n" for i in range(1, 2001))
    assert live.text("call_1", "output") == expected
    # 2,000 writes; one event per flush interval, not one per write or per read.
    assert len(live.outputs()) < 2000 // 10


async def test_live_output_is_capped_with_one_marker(live: Live, fake_llm: FakeLLM) -> None:
    bash(fake_llm, "head -c 3000000 /dev/zero | tr '\\0' x")
    await live.session.run_turn("go")
    text = live.text("call_1", "output")
    marker = LIVE_CUT_MARKER.format(limit=MAX_LIVE_CHARS)
    assert text == "x" * MAX_LIVE_CHARS + marker
    meta = live.result()["meta"]
    assert meta["bytes"] == 3_000_000 and meta["spill_path"]  # the result keeps it all


async def test_a_secret_split_across_two_writes_never_reaches_an_event(
    live: Live, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    barrier = tmp_path / "go-on"
    # The halves come from the environment: the script itself never holds the value.
    bash(
        fake_llm,
        f"printf 'before %s' \"${{API_TOKEN:0:10}}\"; {wait_for(barrier)}; "
        "printf '%s after\\n' \"${API_TOKEN:10}\"",
    )
    running = turn(live)
    await live.until(lambda: "before " in live.text(), "the text before the secret")
    barrier.touch()  # the first half has been read (what precedes it was sent)
    await running
    assert live.text("call_1", "output") == "before [secret:API_TOKEN] after\n"
    for event in live.outputs():
        assert SECRET[:10] not in event["text"] and SECRET not in event["text"]


async def test_a_character_split_across_two_writes_decodes_whole(
    live: Live, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    barrier = tmp_path / "go-on"
    bash(fake_llm, f"printf 'A\\xc3'; {wait_for(barrier)}; printf '\\xa9B\\n'")
    running = turn(live)
    await live.until(lambda: live.text() == "A", "the text before the split character")
    barrier.touch()
    await running
    assert live.text("call_1", "output") == "AéB\n"
    assert "\ufffd" not in live.text()


async def test_background_output_keeps_streaming_after_the_call_returned(
    live: Live, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    barrier = tmp_path / "go-on"
    bash(
        fake_llm,
        f"echo bg-first; printf 'tok=%s' \"${{API_TOKEN:0:10}}\"; {wait_for(barrier)}; "
        "printf '%s\\n' \"${API_TOKEN:10}\"; echo bg-second",
        run_in_background=True,
    )
    assert (await live.session.run_turn("start it")).reason == "completed"
    result = live.result()
    task_id = result["meta"]["taskId"]
    stream = task_id  # a background command's stream is named by its taskId
    assert task_id.startswith("bash:")
    await live.until(lambda: "bg-first\ntok=" in live.text("call_1", stream), "the first write")
    # The possible start of a secret is held back, even though the call has returned.
    assert SECRET[:10] not in live.text()
    ended_before = len(live.events)
    barrier.touch()
    await live.until(lambda: "bg-second" in live.text("call_1", stream), "the line after")
    assert live.text("call_1", stream) == "bg-first\ntok=[secret:API_TOKEN]\nbg-second\n"
    later = [e for e in live.outputs("call_1", stream) if live.index(e) >= ended_before]
    assert later and all(live.index(e) > live.index(result) for e in later)
    assert not live.outputs("call_1", "output")  # nothing on the foreground stream
    for event in live.outputs():
        assert SECRET[:10] not in event["text"]


async def test_hook_output_streams_while_the_hooks_run_and_is_masked(
    repo: Path, live: Live, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    barrier = tmp_path / "go-on"
    hook(repo, "tool_pre", f"#!/usr/bin/env bash\necho pre-first >&2\n{wait_for(barrier)}\n")
    hook(repo, "tool_post", '#!/usr/bin/env bash\necho "post sees $API_TOKEN"\n')
    set_trusted(repo)
    bash(fake_llm, "echo the-command")
    running = turn(live)
    await live.until(lambda: "pre-first" in live.text(), "the tool_pre hook's output")
    assert not live.outputs(stream="output")  # the command has not started
    barrier.touch()
    await running
    result = live.result()
    assert live.text("call_1", "hook:tool_pre") == "pre-first\n"
    assert live.text("call_1", "output") == "the-command\n"
    assert live.text("call_1", "hook:tool_post") == "post sees [secret:API_TOKEN]\n"
    streams = [e["stream"] for e in live.outputs()]
    assert streams == sorted(streams, key=["hook:tool_pre", "output", "hook:tool_post"].index)
    assert all(live.index(e) < live.index(result) for e in live.outputs())
    assert "post sees [secret:API_TOKEN]" in result["output"]
    assert SECRET not in "".join(e["text"] for e in live.outputs())
