"""An external ACP agent's workspace driven by the workspace host in process (as the server and
the terminal UI drive it): approvals answered by a person through the host's pending map, a
second turn in the same ACP session, cancel (and an agent that ignores it), an agent that never
answers `initialize`, and what only xum's engine offers refused clearly."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

import pytest

from tests.support.external_agents import calls, configure, write_script
from tests.support.host_recorder import HostRecorder
from xum.core.errors import XumError
from xum.engine import events as E
from xum.host.hosts import Hosts
from xum.host.workspace_host import HostOptions
from xum.store.registry import WorkspaceRecord
from xum.workspaces.external import agent as external_agent
from xum.workspaces.external import connection
from xum.workspaces.safety.choice import SafetyChoice


def turn_ends(recorder: HostRecorder, workspace_id: str) -> list[E.TurnEnd]:
    return [e for e in recorder.of(E.TurnEnd, workspace_id) if isinstance(e, E.TurnEnd)]


async def start(hosts: Hosts, repo: Path, recorder: HostRecorder, text: str) -> WorkspaceRecord:
    record = await hosts.create(repo, "local", name_hint="ext", external_agent="fake")
    await hosts.send(record, text)
    return record


async def finished(hosts: Hosts, record: WorkspaceRecord) -> None:
    host = hosts.get(record.id)
    assert host is not None
    await asyncio.wait_for(host.wait_done(), 60)


def assistant_texts(recorder: HostRecorder, workspace_id: str) -> list[str]:
    return [
        e.text
        for e in recorder.of(E.AssistantMessage, workspace_id)
        if isinstance(e, E.AssistantMessage) and e.text
    ]


async def test_a_person_answers_the_agents_permission_request(repo: Path, tmp_path: Path) -> None:
    ask = {"permission": {"id": "p1", "title": "rm build", "kind": "delete"}}
    configure(write_script(tmp_path / "s.json", [[ask], [ask]]))
    recorder = HostRecorder()
    options = HostOptions(safety=SafetyChoice(permissions="ask", approval="ask"))
    hosts = Hosts(recorder, options=options)
    try:
        record = await start(hosts, repo, recorder, "clean")
        await recorder.until(lambda: bool(recorder.of(E.ApprovalRequest, record.id)))
        (request,) = recorder.of(E.ApprovalRequest, record.id)
        assert isinstance(request, E.ApprovalRequest) and request.call_id == "p1"
        assert hosts.approvals.answer(record.id, request.request_id, "once", None)
        await finished(hosts, record)
        await hosts.send(record, "again")
        await recorder.until(lambda: len(recorder.of(E.ApprovalRequest, record.id)) == 2)
        second = recorder.of(E.ApprovalRequest, record.id)[1]
        assert isinstance(second, E.ApprovalRequest)
        assert hosts.approvals.answer(record.id, second.request_id, "deny", "no")
        await finished(hosts, record)
    finally:
        await hosts.shutdown()
    assert assistant_texts(recorder, record.id) == [
        "permission: allow-once",
        "permission: reject-once",
    ]
    resolved = [e for e in recorder.of(E.ApprovalResolved, record.id)]
    assert [(getattr(e, "decision", ""), getattr(e, "by", "")) for e in resolved] == [
        ("once", "user"),
        ("deny", "user"),
    ]


async def test_turns_of_one_host_share_the_agent_and_its_session(
    repo: Path, tmp_path: Path
) -> None:
    log = tmp_path / "calls.ndjson"
    configure(
        write_script(
            tmp_path / "s.json", [[{"message": "one"}], [{"message": "two"}]], callLog=str(log)
        )
    )
    recorder = HostRecorder()
    hosts = Hosts(recorder)
    try:
        record = await start(hosts, repo, recorder, "first")
        await finished(hosts, record)
        await hosts.send(record, "second")
        await finished(hosts, record)
        host = hosts.get(record.id)
        assert host is not None
        agent = host.session.agent
        assert isinstance(agent, external_agent.ExternalAgent) and agent.process is not None
        process = agent.process.process
        assert process is not None and process.returncode is None  # up between turns
    finally:
        await hosts.shutdown()
    # Closing the workspace stopped the agent and its process group.
    assert process.returncode is not None
    with pytest.raises(ProcessLookupError):
        os.killpg(process.pid, 0)
    assert assistant_texts(recorder, record.id) == ["one", "two"]
    logged = calls(log)
    (init,) = [c for c in logged if c["method"] == "initialize"]
    # xum offers its files and terminals to the agent.
    assert init["capabilities"]["fs"] == {"readTextFile": True, "writeTextFile": True}
    assert init["capabilities"]["terminal"] is True
    sessions = {c["sessionId"] for c in logged if c["method"] == "session/prompt"}
    assert len(sessions) == 1
    assert [c["cwd"] for c in logged if c["method"] == "session/new"] == [str(repo)]


async def test_a_cancel_ends_the_turn_as_interrupted(repo: Path, tmp_path: Path) -> None:
    log = tmp_path / "calls.ndjson"
    steps = [{"message": "working"}, {"waitCancel": True}]
    configure(write_script(tmp_path / "s.json", [steps], callLog=str(log)))
    recorder = HostRecorder()
    hosts = Hosts(recorder)
    try:
        record = await start(hosts, repo, recorder, "long job")
        await recorder.until(lambda: bool(recorder.of(E.TextDelta, record.id)))
        host = hosts.get(record.id)
        assert host is not None
        session_log = host.session.log

        def kept() -> str | None:
            partial = session_log.read_partial()
            return partial.data.get("text") if partial is not None else None

        # The message still streaming is kept as the log's partial, for late subscribers.
        await recorder.until(lambda: kept() == "working")
        await hosts.interrupt(record.id)
        await finished(hosts, record)
        await recorder.until(lambda: kept() is None)  # committed with the turn's end
    finally:
        await hosts.shutdown()
    (end,) = turn_ends(recorder, record.id)
    assert end.reason == "interrupted"
    assert "session/cancel" in [c["method"] for c in calls(log)]
    assert assistant_texts(recorder, record.id) == ["working"]  # what streamed is kept


async def test_an_agent_that_ignores_the_cancel_is_stopped(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(external_agent, "CANCEL_GRACE_S", 0.5)
    script = write_script(tmp_path / "s.json", [[{"message": "busy"}, {"ignoreCancel": True}]])
    configure(script)
    recorder = HostRecorder()
    hosts = Hosts(recorder)
    try:
        record = await start(hosts, repo, recorder, "stuck")
        await recorder.until(lambda: bool(recorder.of(E.TextDelta, record.id)))
        host = hosts.get(record.id)
        assert host is not None
        agent = host.session.agent
        assert isinstance(agent, external_agent.ExternalAgent) and agent.process is not None
        process = agent.process.process
        assert process is not None
        await hosts.interrupt(record.id)
        await finished(hosts, record)
        assert process.returncode is not None  # the agent and its group were stopped
        with pytest.raises(ProcessLookupError):
            os.killpg(process.pid, 0)
        # The next message starts the agent again (a new process: its script starts over).
        write_script(script, [[{"message": "back"}]])
        await hosts.send(record, "again")
        await finished(hosts, record)
    finally:
        await hosts.shutdown()
    reasons = [e.reason for e in turn_ends(recorder, record.id)]
    assert reasons == ["interrupted", "completed"]
    assert any(
        isinstance(e, E.Advisory) and e.kind == "external-agent-stopped"
        for e in recorder.of(E.Advisory, record.id)
    )


async def test_an_agent_that_never_answers_initialize_is_an_error(
    repo: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(connection, "START_TIMEOUT_S", 1.0)
    configure(write_script(tmp_path / "s.json", [[{"message": "x"}]], initialize="hang"))
    recorder = HostRecorder()
    hosts = Hosts(recorder)
    try:
        record = await start(hosts, repo, recorder, "hello")
        await finished(hosts, record)
    finally:
        await hosts.shutdown()
    (end,) = turn_ends(recorder, record.id)
    assert end.reason == "error" and end.error is not None
    assert "did not answer initialize" in end.error["message"]


async def test_engine_only_features_are_refused_clearly(repo: Path, tmp_path: Path) -> None:
    configure(write_script(tmp_path / "s.json", [[{"message": "x"}]]))
    recorder = HostRecorder()
    hosts = Hosts(recorder)
    try:
        record = await start(hosts, repo, recorder, "hello")
        await finished(hosts, record)
        host = hosts.get(record.id)
        assert host is not None
        with pytest.raises(XumError, match="not available for external agents"):
            await host.start_here(1)
        with pytest.raises(XumError, match="not available for external agents"):
            await host.session.agent.goals.set("a goal")
    finally:
        await hosts.shutdown()


async def test_a_cancel_while_the_agent_starts_ends_the_turn(repo: Path, tmp_path: Path) -> None:
    log = tmp_path / "calls.ndjson"
    steps = [[{"message": "x"}]]
    configure(write_script(tmp_path / "s.json", steps, initialize="hang", callLog=str(log)))
    recorder = HostRecorder()
    hosts = Hosts(recorder)
    try:
        record = await start(hosts, repo, recorder, "hello")
        await recorder.until(lambda: any(c["method"] == "initialize" for c in calls(log)))
        await hosts.interrupt(record.id)
        await finished(hosts, record)  # long before the 60 s start-up limit
    finally:
        await hosts.shutdown()
    (end,) = turn_ends(recorder, record.id)
    assert end.reason == "interrupted"


async def test_a_fork_keeps_the_external_agent_in_a_session_of_its_own(
    repo: Path, tmp_path: Path
) -> None:
    log = tmp_path / "calls.ndjson"
    configure(write_script(tmp_path / "s.json", [[{"message": "hi"}]], callLog=str(log)))
    recorder = HostRecorder()
    hosts = Hosts(recorder)
    try:
        record = await start(hosts, repo, recorder, "hello")
        await finished(hosts, record)
        fork = await hosts.fork(record.id, None, None)
        assert fork.external_agent == "fake" and fork.external_session is None
        await hosts.send(fork, "in the fork")
        await finished(hosts, fork)
    finally:
        await hosts.shutdown()
    (end,) = turn_ends(recorder, fork.id)
    assert end.reason == "completed"
    assert [c["method"] for c in calls(log)].count("session/new") == 2
