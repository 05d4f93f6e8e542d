"""'Always allow' on an external agent's permission request is remembered by xum, as for its own
tools: a later request of the same kind in the project (a later turn, another workspace, a new
agent session) is answered without asking; what the rule does not cover still asks, and a rule
forgotten in Settings asks again. Driven through the workspace host (as the server and the
terminal UI drive it) with the scripted fake agent, a real subprocess."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from tests.support.external_agents import configure, write_script
from tests.support.host_recorder import HostRecorder
from xum.engine import events as E
from xum.host.hosts import Hosts
from xum.host.workspace_host import HostOptions
from xum.store.registry import WorkspaceRecord
from xum.workspaces.safety.approvals import forget_rule, list_rules
from xum.workspaces.safety.choice import SafetyChoice


def ask(kind: str, command: str | None = None) -> dict[str, Any]:
    request: dict[str, Any] = {"id": f"p-{kind}", "title": command or kind, "kind": kind}
    if command is not None:
        request["rawInput"] = {"command": command, "description": "run it"}
    return {"permission": request}


def said(recorder: HostRecorder, workspace_id: str) -> list[str]:
    return [
        e.text
        for e in recorder.of(E.AssistantMessage, workspace_id)
        if isinstance(e, E.AssistantMessage) and e.text
    ]


def requests(recorder: HostRecorder, workspace_id: str) -> list[E.ApprovalRequest]:
    return [
        e for e in recorder.of(E.ApprovalRequest, workspace_id) if isinstance(e, E.ApprovalRequest)
    ]


class Driver:
    """One host with a person answering (`ask` mode), and the turns a test runs in it."""

    def __init__(self) -> None:
        self.recorder = HostRecorder()
        choice = SafetyChoice(permissions="ask", approval="ask")
        self.hosts = Hosts(self.recorder, options=HostOptions(safety=choice))

    async def turn(self, record: WorkspaceRecord, text: str, answer: str | None = None) -> None:
        """Run a turn; when `answer` is given, its one approval request is answered so."""
        asked = len(requests(self.recorder, record.id))
        await self.hosts.send(record, text)
        if answer is not None:
            await self.recorder.until(lambda: len(requests(self.recorder, record.id)) > asked)
            request = requests(self.recorder, record.id)[-1]
            assert self.hosts.approvals.answer(record.id, request.request_id, answer, None)
        host = self.hosts.get(record.id)
        assert host is not None
        await asyncio.wait_for(host.wait_done(), 60)


async def test_always_on_an_edit_is_remembered_per_agent_and_kind(
    repo: Path, tmp_path: Path
) -> None:
    edit, delete = ask("edit"), ask("delete")
    configure(write_script(tmp_path / "s.json", [[edit], [edit], [delete], [edit]]))
    driver = Driver()
    try:
        first = await driver.hosts.create(repo, "local", name_hint="one", external_agent="fake")
        await driver.turn(first, "edit it", answer="always")
        (request,) = requests(driver.recorder, first.id)
        assert request.prefix == "fake: edit"  # what the front-ends offer to keep
        rule = {"project": str(repo), "tool": "external:fake", "prefix": "fake: edit"}
        assert [{k: r[k] for k in rule} for r in list_rules()] == [rule]
        # The agent was allowed once: xum, not the agent, keeps the rule.
        await driver.turn(first, "edit again")
        assert len(requests(driver.recorder, first.id)) == 1  # answered by the rule
        await driver.turn(first, "delete it", answer="deny")  # another kind still asks
        assert said(driver.recorder, first.id) == [
            "permission: allow-once",
            "permission: allow-once",
            "permission: reject-once",
        ]
        # Another workspace of the project, another agent process and session: remembered.
        second = await driver.hosts.create(repo, "local", name_hint="two", external_agent="fake")
        await driver.turn(second, "edit")
        assert requests(driver.recorder, second.id) == []
        assert said(driver.recorder, second.id) == ["permission: allow-once"]
        # Forgotten (Settings' Remove): it asks again.
        assert forget_rule(str(repo), "fake: edit")
        await driver.turn(second, "edit", answer="once")
        assert len(requests(driver.recorder, second.id)) == 1
    finally:
        await driver.hosts.shutdown()


async def test_always_on_a_command_keeps_its_prefix_as_xums_own_rules_do(
    repo: Path, tmp_path: Path
) -> None:
    steps = [
        [ask("execute", "npm test -- --watch=false")],
        [ask("execute", "npm test")],
        [ask("execute", "npm publish")],
        [ask("execute", "ls")],
    ]
    configure(write_script(tmp_path / "s.json", steps))
    driver = Driver()
    try:
        record = await driver.hosts.create(repo, "local", name_hint="cmd", external_agent="fake")
        await driver.turn(record, "test", answer="always")
        assert requests(driver.recorder, record.id)[0].prefix == "npm test"
        rule = {"project": str(repo), "tool": "bash", "prefix": "npm test"}
        assert [{k: r[k] for k in rule} for r in list_rules()] == [rule]
        await driver.turn(record, "test again")  # covered by the prefix
        await driver.turn(record, "publish", answer="deny")  # another prefix asks
        # A read-only command is still asked (the agent asked; the allowlist is xum's own).
        await driver.turn(record, "list", answer="once")
        asked = requests(driver.recorder, record.id)
        assert [r.subject for r in asked][1:] == [
            '{"command":"npm publish","description":"run it"}',
            '{"command":"ls","description":"run it"}',
        ]
        assert asked[2].prefix is None  # nothing to keep for what is read-only anyway
        assert said(driver.recorder, record.id) == [
            "permission: allow-once",
            "permission: allow-once",
            "permission: reject-once",
            "permission: allow-once",
        ]
    finally:
        await driver.hosts.shutdown()


async def test_a_request_of_no_kind_is_a_command_when_it_carries_one(
    repo: Path, tmp_path: Path
) -> None:
    """Claude Code sends its commands without a kind: the command line decides; a request of
    no kind and no command is offered no "always" (it could be anything)."""
    steps = [[ask("other", "make build")], [ask("other", "make build")], [ask("other")]]
    configure(write_script(tmp_path / "s.json", steps))
    driver = Driver()
    try:
        record = await driver.hosts.create(repo, "local", name_hint="oth", external_agent="fake")
        await driver.turn(record, "build", answer="always")
        await driver.turn(record, "build again")  # covered by `make build`
        await driver.turn(record, "something", answer="once")
        asked = requests(driver.recorder, record.id)
        assert [r.prefix for r in asked] == ["make build", None]
        assert [r["prefix"] for r in list_rules()] == ["make build"]
    finally:
        await driver.hosts.shutdown()
