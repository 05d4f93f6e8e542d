"""Governor holds as attention inbox items (`held`, docs/inbox.md): through the host, with real
workspaces and the fake provider. A provider's pause, a lasting wait for a request slot and a
fleet budget hold each show as one item with its reason and since when, and leave when the wait
ends; a short slot wait leaves nothing."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

from tests.support.host_recorder import HostRecorder
from xum.engine import events as E
from xum.host.governor import Governor
from xum.host.governor_config import GovernorSettings, ProviderLimits
from xum.host.hosts import Hosts
from xum.host.inbox import InboxItem
from xum.store.config import update_config
from xum.store.registry import WorkspaceRecord
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM, RecordedRequest

MODEL = "anthropic:claude-sonnet-5-5"


@pytest.fixture
def llm(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    return fake_llm


class Changes:
    """Every addition and removal of the inbox, in order (its watcher)."""

    def __init__(self, hosts: Hosts) -> None:
        self.seen: list[tuple[str, InboxItem]] = []
        hosts.inbox.watch(lambda change, item: self.seen.append((change, item)))

    def held(self, change: str, workspace_id: str) -> list[InboxItem]:
        return [
            i
            for c, i in self.seen
            if c == change and i.kind == "held" and i.workspace_id == workspace_id
        ]


async def made(hosts: Hosts, project: Path, n: int) -> list[WorkspaceRecord]:
    return [await hosts.create(project, "local", name_hint=f"ws{i}", model=MODEL) for i in range(n)]


async def settled(hosts: Hosts, records: list[WorkspaceRecord]) -> None:
    for record in records:
        host = hosts.get(record.id)
        assert host is not None
        await asyncio.wait_for(host.wait_done(), 60)


def held_now(hosts: Hosts) -> list[InboxItem]:
    return [i for i in hosts.inbox.items() if i.kind == "held"]


async def test_a_providers_pause_is_an_item_until_it_ends(llm: FakeLLM, repo: Path) -> None:
    llm.script(fakellm.rate_limited(retry_after=3))  # outlasts a slow start of the second
    llm.set_default(fakellm.reply("ok"))
    recorder = HostRecorder()
    hosts = Hosts(recorder, governor=Governor())
    changes = Changes(hosts)
    try:
        first, second = await made(hosts, repo, 2)
        await hosts.send(first, "one")
        await recorder.until(lambda: bool(recorder.of(E.Retrying, first.id)))
        await hosts.send(second, "two")
        await settled(hosts, [first, second])
        (item,) = changes.held("added", second.id)
        (wait,) = [
            e
            for e in recorder.of(E.GovernorWait, second.id)
            if isinstance(e, E.GovernorWait) and e.reason == "backoff"
        ]
        assert item.detail["reason"] == "backoff" and item.summary == wait.message
        assert item.detail["provider"] == "anthropic"
        assert item.since == wait.since and item.detail["retryAt"] > item.detail["since"]
        assert item.actions == ("dismiss",)
        assert [i.id for i in changes.held("removed", second.id)] == [item.id]
        assert held_now(hosts) == []
    finally:
        await hosts.shutdown()


async def test_a_lasting_wait_for_a_request_slot_is_an_item(llm: FakeLLM, repo: Path) -> None:
    release = threading.Event()

    async def slow(_request: RecordedRequest) -> fakellm.Reply:
        while not release.is_set():  # held until the test has looked
            await asyncio.sleep(0.01)
        return fakellm.reply("done")

    llm.set_responder(slow)
    recorder = HostRecorder()
    governor = Governor(GovernorSettings(providers={"anthropic": ProviderLimits(1)}))
    hosts = Hosts(recorder, governor=governor)
    hosts.inbox.held_concurrency_after_s = 0.1
    changes = Changes(hosts)
    try:
        first, second = await made(hosts, repo, 2)
        await hosts.send(first, "go")
        await recorder.until(lambda: llm.capacity.in_flight == 1)
        await hosts.send(second, "go")
        await recorder.until(lambda: bool(held_now(hosts)))
        (item,) = held_now(hosts)
        assert item.workspace_id == second.id and item.detail["reason"] == "concurrency"
        release.set()
        await settled(hosts, [first, second])
        assert held_now(hosts) == []
        assert [i.id for i in changes.held("removed", second.id)] == [item.id]
    finally:
        release.set()
        await hosts.shutdown()


async def test_a_short_wait_for_a_request_slot_leaves_nothing(llm: FakeLLM, repo: Path) -> None:
    release = threading.Event()

    async def slow(_request: RecordedRequest) -> fakellm.Reply:
        while not release.is_set():
            await asyncio.sleep(0.01)
        return fakellm.reply("done")

    llm.set_responder(slow)
    recorder = HostRecorder()
    governor = Governor(GovernorSettings(providers={"anthropic": ProviderLimits(1)}))
    hosts = Hosts(recorder, governor=governor)
    hosts.inbox.held_concurrency_after_s = 600  # far longer than the wait here
    changes = Changes(hosts)
    try:
        first, second = await made(hosts, repo, 2)
        await hosts.send(first, "go")
        await recorder.until(lambda: llm.capacity.in_flight == 1)
        await hosts.send(second, "go")
        await recorder.until(lambda: bool(recorder.of(E.GovernorWait, second.id)))
        release.set()
        await settled(hosts, [first, second])
        assert recorder.of(E.GovernorWaitEnd, second.id)
        assert [c for c in changes.seen if c[1].kind == "held"] == []
    finally:
        release.set()
        await hosts.shutdown()


async def test_a_budget_hold_is_one_held_item_until_the_turn_is_stopped(
    llm: FakeLLM, repo: Path
) -> None:
    update_config(lambda c: c.__setitem__("governor", {"budget": {"usdPerProjectPerDay": 0}}))
    recorder = HostRecorder()
    hosts = Hosts(recorder, governor=Governor(budget_recheck_s=0.05))
    try:
        (record,) = await made(hosts, repo, 1)
        await hosts.send(record, "hello")
        await recorder.until(lambda: bool(held_now(hosts)))
        (item,) = [i for i in hosts.inbox.items() if i.workspace_id == record.id]
        assert item.kind == "held" and item.detail["reason"] == "budget"
        assert "this project's budget" in item.summary
        assert item.detail["retryAt"] is not None
        stopped, _ = await hosts.interrupt(record.id)
        assert stopped
        await settled(hosts, [record])
        assert held_now(hosts) == []
    finally:
        await hosts.shutdown()


async def test_a_held_item_can_be_dismissed(llm: FakeLLM, repo: Path) -> None:
    update_config(lambda c: c.__setitem__("governor", {"budget": {"usdPerProjectPerDay": 0}}))
    recorder = HostRecorder()
    hosts = Hosts(recorder, governor=Governor(budget_recheck_s=0.05))
    try:
        (record,) = await made(hosts, repo, 1)
        await hosts.send(record, "hello")
        await recorder.until(lambda: bool(held_now(hosts)))
        (item,) = held_now(hosts)
        assert hosts.inbox.dismiss(item.id)
        assert held_now(hosts) == []
        await hosts.interrupt(record.id)
        await settled(hosts, [record])
    finally:
        await hosts.shutdown()
