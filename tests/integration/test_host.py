"""The workspace host in process, without any front-end: a recording listener, a real
workspace in a real git repository, the fake LLM server. A message starts a turn, one sent
meanwhile waits and runs after it, a goal goes on by itself, the writer lock is held only while a
turn runs, and the command table offers only what works."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from xum.context.slash import COMMAND_SUGGESTIONS, IdleCommand
from xum.core.errors import UsageError
from xum.engine import events as E
from xum.host import commands
from xum.host.hosts import Hosts
from xum.host.pending import PendingQuestion
from xum.store import compaction_config as cc
from xum.store import sessions as session_files
from xum.store.registry import WorkspaceRecord
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

MODEL = "anthropic:claude-sonnet-5-5"


class Recorder:
    """A `HostListener` that keeps what it is told."""

    def __init__(self) -> None:
        self.events: list[tuple[str, E.Event]] = []
        self.statuses: list[str] = []
        self.failures: list[Exception] = []
        self.changed = 0
        self.turn_ended = asyncio.Event()

    async def opening(self, workspace_id: str) -> None:
        return None

    def event(self, workspace_id: str, event: E.Event) -> None:
        self.events.append((workspace_id, event))
        if isinstance(event, E.TurnEnd):
            self.turn_ended.set()

    def status_changed(self, workspace_id: str) -> None:
        self.statuses.append(workspace_id)

    def turn_failed(self, workspace_id: str, error: Exception) -> None:
        self.failures.append(error)

    def question_opened(self, pending: PendingQuestion) -> None:
        return None

    def question_closed(self, pending: PendingQuestion) -> None:
        return None

    def workspaces_changed(self) -> None:
        self.changed += 1

    def of(self, kind: type[E.Event]) -> list[E.Event]:
        return [e for _, e in self.events if isinstance(e, kind)]


@pytest.fixture
def llm(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    return fake_llm


async def _workspace(hosts: Hosts, project: Path) -> WorkspaceRecord:
    return await hosts.create(project, "local", name_hint="host", model=MODEL)


async def _settled(hosts: Hosts, workspace_id: str) -> None:
    host = hosts.get(workspace_id)
    assert host is not None and host.task is not None
    await asyncio.wait_for(asyncio.shield(host.task), 60)


async def test_a_message_sent_during_a_turn_runs_after_it(
    llm: FakeLLM, repo: Path, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    script = f"while [ ! -e {release} ]; do sleep 0.01; done; echo released"
    llm.script(
        fakellm.tool_call("bash", {"script": script, "display_name": "wait"}),
        fakellm.reply("first turn done"),
        fakellm.reply("second turn"),
    )
    recorder = Recorder()
    hosts = Hosts(recorder)
    try:
        record = await _workspace(hosts, repo)
        assert await hosts.send(record, "start") == "started"
        assert await hosts.send(record, "after the turn", "turn") == "queued"
        assert hosts.queued(record.id) == ((), ("after the turn",))
        release.touch()
        await _settled(hosts, record.id)
        users = [e.text for e in recorder.of(E.UserMessage) if isinstance(e, E.UserMessage)]
        assert users == ["start", "after the turn"]
        assert len(recorder.of(E.TurnEnd)) == 2
        assert not recorder.failures
        assert record.id in recorder.statuses
    finally:
        await hosts.shutdown()


async def test_the_writer_lock_is_held_per_turn_not_while_the_host_is_open(
    llm: FakeLLM, repo: Path
) -> None:
    llm.script(fakellm.reply("hello"))
    hosts = Hosts(Recorder())
    try:
        record = await _workspace(hosts, repo)
        await hosts.send(record, "hi")
        await _settled(hosts, record.id)
        assert hosts.get(record.id) is not None  # still open
        # Another front-end sees no agent running here.
        assert not session_files.is_busy(record.id)
    finally:
        await hosts.shutdown()


async def test_a_goal_continues_through_the_host(llm: FakeLLM, repo: Path) -> None:
    llm.script(
        fakellm.text("Looking."),  # the kickoff
        fakellm.text("Working."),  # continuation 1
        fakellm.tool_call("complete_goal", {"summary": "Done it."}),  # continuation 2
        fakellm.text("Finished."),
    )
    recorder = Recorder()
    hosts = Hosts(recorder)
    try:
        record = await _workspace(hosts, repo)
        command = commands.parse("/goal --turns 5 tidy the module", "tui")
        assert command is not None and commands.runs_in_session(command)
        await hosts.send(record, "/goal --turns 5 tidy the module")
        await _settled(hosts, record.id)
        kinds = [e.kind for e in recorder.of(E.UserMessage) if isinstance(e, E.UserMessage)]
        assert kinds[1:] == ["goal_continuation", "goal_continuation"]
        assert len(llm.requests) == 4
    finally:
        await hosts.shutdown()


async def test_idle_is_applied_by_the_command_layer(llm: FakeLLM, repo: Path) -> None:
    recorder = Recorder()
    hosts = Hosts(recorder)
    try:
        record = await _workspace(hosts, repo)
        for frontend in commands.ALL:
            command = commands.parse("/idle 6", frontend)
            assert isinstance(command, IdleCommand)
            result = await commands.apply(hosts, record, command)
            assert result.command == "idle" and result.idle_hours == 6
        assert cc.idle_hours(record.project_path) == 6
        assert recorder.changed >= len(commands.ALL)
    finally:
        await hosts.shutdown()


def test_every_offered_command_has_a_handler() -> None:
    # What a front-end offers works: a workspace command `apply` carries out, or a session
    # command sent like a message (the engine runs it).
    samples = {
        "model": "/model sonnet",
        "fork": "/fork other",
        "compact": "/compact",
        "clear": "/clear",
        "goal": "/goal do it",
        "idle": "/idle off",
    }
    assert set(samples) == set(commands.OFFERED)
    for name, frontends in commands.OFFERED.items():
        for frontend in frontends:
            command = commands.parse(samples[name], frontend)
            assert command is not None
            assert commands.is_workspace_command(command) != commands.runs_in_session(command)


def test_a_front_end_lists_and_accepts_only_what_it_offers() -> None:
    for frontend in commands.ALL:
        listed = {s.name.lstrip("/") for s in commands.suggestions(frontend)}
        assert listed == {n for n, fes in commands.OFFERED.items() if frontend in fes}
    assert "/fork" not in {s.name for s in commands.suggestions("acp")}
    assert len(commands.suggestions("server")) == len(COMMAND_SUGGESTIONS)
    with pytest.raises(UsageError) as refused:
        commands.parse("/fork other", "acp")
    assert refused.value.message == "/fork is not available in an editor session"
    assert refused.value.hint is not None
