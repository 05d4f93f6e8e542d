"""Background wake-ups through the workspace host, with the fake LLM: a monitored background
process that ends (on a barrier the test opens) wakes an idle workspace with a new turn whose
request carries the notice; a matching line printed while a turn runs is delivered after that
turn, not inside it; `xum run`'s hosts arm no monitor; a host with a running background process
is not closed for being idle; the list reaches the front-ends."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest

from xum.engine import events as E
from xum.host.hosts import Hosts
from xum.host.pending import PendingQuestion
from xum.host.workspace_host import HostOptions
from xum.store.registry import WorkspaceRecord
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.fakellm.record import RecordedRequest

MODEL = "anthropic:claude-sonnet-5-5"


class Listener:
    """A `HostListener` that keeps the events and lets a test wait for one kind."""

    def __init__(self) -> None:
        self.events: list[E.Event] = []
        self.failures: list[Exception] = []
        self._changed = asyncio.Event()

    async def opening(self, workspace_id: str) -> None:
        return None

    def event(self, workspace_id: str, event: E.Event) -> None:
        self.events.append(event)
        self._changed.set()

    def status_changed(self, workspace_id: str) -> None:
        return None

    def turn_failed(self, workspace_id: str, error: Exception) -> None:
        self.failures.append(error)

    def question_opened(self, pending: PendingQuestion) -> None:
        return None

    def question_closed(self, pending: PendingQuestion) -> None:
        return None

    def workspaces_changed(self) -> None:
        return None

    def of(self, kind: type[E.Event]) -> list[Any]:
        return [e for e in self.events if isinstance(e, kind)]

    async def until(self, kind: type[E.Event], count: int = 1) -> list[Any]:
        async with asyncio.timeout(30):
            while len(self.of(kind)) < count:
                self._changed.clear()
                await self._changed.wait()
        return self.of(kind)


@pytest.fixture
def llm(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    return fake_llm


def background(script: str, monitor: dict[str, Any] | None) -> fakellm.Reply:
    arguments: dict[str, Any] = {
        "script": script,
        "display_name": "Test watcher",
        "run_in_background": True,
    }
    if monitor is not None:
        arguments["monitor"] = monitor
    return fakellm.tool_call("bash", arguments)


def last_user_text(req: RecordedRequest) -> str:
    message = req.json["messages"][-1]
    assert message["role"] == "user"
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(b.get("text", "") for b in content if b.get("type") == "text")


async def drive_done(hosts: Hosts, workspace_id: str) -> None:
    host = hosts.get(workspace_id)
    assert host is not None and host.task is not None
    await asyncio.wait_for(asyncio.shield(host.task), 60)


async def open_workspace(hosts: Hosts, project: Path) -> WorkspaceRecord:
    return await hosts.create(project, "local", name_hint="bg", model=MODEL)


async def test_an_ended_process_wakes_the_idle_workspace(
    llm: FakeLLM, repo: Path, tmp_path: Path
) -> None:
    gate = tmp_path / "gate"
    script = f"echo watching; while [ ! -e {gate} ]; do sleep 0.01; done; echo '2 failed'; exit 1"
    llm.script(
        background(script, {}),
        fakellm.reply("Started the watcher; I will be told when it ends."),
        fakellm.reply("The tests failed: 2 failures."),
    )
    listener = Listener()
    hosts = Hosts(listener)
    try:
        record = await open_workspace(hosts, repo)
        await hosts.send(record, "run the tests in the background and tell me when they fail")
        await drive_done(hosts, record.id)
        assert len(llm.requests) == 2
        started = listener.of(E.ToolResult)[0]
        assert started.meta["monitored"] is True, started.output
        host = hosts.get(record.id)
        assert host is not None and not host.driving  # idle: the agent ended its turn

        gate.touch()  # the process ends now
        (wake,) = await listener.until(E.BackgroundWake)
        assert wake.reason == "exit" and wake.status == "exited" and wake.exit_code == 1
        requests = await llm.wait_for_requests_async(3, timeout=30)
        notice = last_user_text(requests[2])
        assert "Background process bash:" in notice and "Test watcher" in notice
        assert "has ended: exited, exit code 1" in notice
        await drive_done(hosts, record.id)
        synthetic = [u for u in listener.of(E.UserMessage) if u.synthetic]
        assert [u.kind for u in synthetic] == ["background_wake"]
        assert len(listener.of(E.TurnEnd)) == 2
        assert not listener.failures
        # The list went to the front-ends when it started and when it ended.
        lists = listener.of(E.BackgroundProcesses)
        assert lists[0].processes[0]["status"] == "running"
        assert lists[-1].processes[0]["status"] == "exited"
    finally:
        await hosts.shutdown()


async def test_a_line_matched_during_a_turn_is_delivered_after_it(
    llm: FakeLLM, repo: Path, tmp_path: Path
) -> None:
    seen = tmp_path / "seen"  # the test creates it once the host heard the wake-up
    watcher = "echo 'compiling'; echo 'FAIL test_login'; sleep 300"
    wait_for_test = f"while [ ! -e {seen} ]; do sleep 0.01; done; echo go on"
    llm.script(
        background(watcher, {"filter": "^FAIL", "cooldown_ms": 0}),
        fakellm.tool_call("bash", {"script": wait_for_test, "display_name": "busy"}),
        fakellm.reply("first turn over"),
        fakellm.reply("I see test_login failed."),
    )
    listener = Listener()
    hosts = Hosts(listener)
    try:
        record = await open_workspace(hosts, repo)
        await hosts.send(record, "start the watcher")
        (wake,) = await listener.until(E.BackgroundWake)
        assert wake.reason == "output" and wake.lines == ["FAIL test_login"]
        host = hosts.get(record.id)
        assert host is not None and host.driving  # the first turn still runs
        seen.touch()
        requests = await llm.wait_for_requests_async(4, timeout=30)
        # The step after the busy command saw its result, not the notice...
        assert "FAIL test_login" not in last_user_text(requests[2])
        # ...which opened a turn of its own once the first one ended.
        assert "FAIL test_login" in last_user_text(requests[3])
        await drive_done(hosts, record.id)
        ends = listener.of(E.TurnEnd)
        assert len(ends) == 2 and not listener.failures
    finally:
        await hosts.shutdown()


async def test_run_hosts_arm_no_monitor(llm: FakeLLM, repo: Path) -> None:
    llm.script(background("sleep 300", {}), fakellm.reply("ok"))
    listener = Listener()
    hosts = Hosts(listener, options=HostOptions(frontend="run", purpose="run", wakes=False))
    try:
        record = await open_workspace(hosts, repo)
        await hosts.send(record, "start it")
        await drive_done(hosts, record.id)
        (result,) = listener.of(E.ToolResult)
        assert result.meta["monitored"] is False and "monitor ignored" in result.output
    finally:
        await hosts.shutdown()


async def test_a_host_with_a_running_process_is_not_closed_when_idle(
    llm: FakeLLM, repo: Path
) -> None:
    llm.script(background("sleep 300", None), fakellm.reply("ok"))
    listener = Listener()
    hosts = Hosts(listener, idle_close_s=0.0)
    try:
        record = await open_workspace(hosts, repo)
        await hosts.send(record, "start it")
        await drive_done(hosts, record.id)
        await hosts.close_idle()
        host = hosts.get(record.id)
        assert host is not None  # closing it would kill the process
        (row,) = host.watch.snapshot()
        assert row["status"] == "running" and row["display_name"] == "Test watcher"
        stopped = await host.watch.stop(row["process_id"])
        assert stopped is not None and stopped["status"] == "stopped"
        await hosts.close_idle()
        assert hosts.get(record.id) is None
        assert not listener.of(E.BackgroundWake)
    finally:
        await hosts.shutdown()


async def test_an_interrupted_turn_is_not_followed_by_a_wake_turn(
    llm: FakeLLM, repo: Path, tmp_path: Path
) -> None:
    never = tmp_path / "never"  # the busy command waits for it until the interrupt
    watcher = "echo 'FAIL early'; sleep 300"
    started = tmp_path / "busy-started"
    busy = f"touch {started}; while [ ! -e {never} ]; do sleep 0.01; done"
    llm.script(
        background(watcher, {"filter": "^FAIL", "cooldown_ms": 0}),
        fakellm.tool_call("bash", {"script": busy, "display_name": "busy"}),
        fakellm.reply("answering the next message"),
        fakellm.reply("now about FAIL early"),
    )
    listener = Listener()
    hosts = Hosts(listener)
    try:
        record = await open_workspace(hosts, repo)
        await hosts.send(record, "start the watcher")
        await listener.until(E.BackgroundWake)
        async with asyncio.timeout(30):  # the busy command runs: the turn is in its 2nd step
            while not started.exists():
                await asyncio.sleep(0.01)
        interrupted, _unsent = await hosts.interrupt(record.id)
        assert interrupted
        await drive_done(hosts, record.id)
        host = hosts.get(record.id)
        assert host is not None and not host.driving
        assert len(llm.requests) == 2  # no wake turn after the interrupt
        assert len(host.watch.pending) == 1  # the notice waits
        await hosts.send(record, "something else")
        requests = await llm.wait_for_requests_async(4, timeout=30)
        assert last_user_text(requests[2]) == "something else"
        assert "FAIL early" in last_user_text(requests[3])  # delivered after that turn
        await drive_done(hosts, record.id)
        assert not host.watch.pending
    finally:
        await hosts.shutdown()
