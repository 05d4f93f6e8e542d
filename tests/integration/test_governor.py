"""The governor (xum.host.governor) with real workspaces, the real HTTP client and the fake
provider: one 429 with Retry-After pauses every session, a provider's concurrency cap holds
across workspaces, and a spent fleet budget holds new turns and says so."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path
from typing import Any

import pytest

from tests.support.host_recorder import HostRecorder
from xum.engine import events as E
from xum.host.fleet_spend import SpendBook
from xum.host.governor import Governor, HeldTurnStopped
from xum.host.governor_config import GovernorSettings, ProviderLimits
from xum.host.hosts import Hosts
from xum.store.config import update_config
from xum.store.registry import WorkspaceRecord
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM, RecordedRequest

MODEL = "anthropic:claude-sonnet-5-5"  # a priced model


@pytest.fixture
def llm(fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch) -> FakeLLM:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    return fake_llm


def model_calls(llm: FakeLLM) -> list[RecordedRequest]:
    return [r for r in llm.requests if r.wire is not None]


async def workspaces(hosts: Hosts, project: Path, n: int) -> list[WorkspaceRecord]:
    return [await hosts.create(project, "local", name_hint=f"ws{i}", model=MODEL) for i in range(n)]


async def settled(hosts: Hosts, records: list[WorkspaceRecord]) -> None:
    for record in records:
        host = hosts.get(record.id)
        assert host is not None
        await asyncio.wait_for(host.wait_done(), 60)


def waits(recorder: HostRecorder, reason: str, workspace_id: str | None = None) -> list[Any]:
    return [
        e
        for e in recorder.of(E.GovernorWait, workspace_id)
        if isinstance(e, E.GovernorWait) and e.reason == reason
    ]


async def test_a_429_with_retry_after_pauses_every_session(llm: FakeLLM, repo: Path) -> None:
    # The first request is refused and asks for a long wait; anything later would be served.
    llm.script(fakellm.rate_limited(retry_after=30))
    llm.set_default(fakellm.reply("ok"))
    recorder = HostRecorder()
    hosts = Hosts(recorder, governor=Governor())
    try:
        first, second = await workspaces(hosts, repo, 2)
        await hosts.send(first, "one")
        await recorder.until(lambda: bool(recorder.of(E.Retrying, first.id)))
        await hosts.send(second, "two")
        # The second session learns of the pause from the governor, not from its own 429.
        await recorder.until(
            lambda: bool(waits(recorder, "backoff", second.id)) or len(model_calls(llm)) > 1
        )
        assert len(model_calls(llm)) == 1
        wait = waits(recorder, "backoff", second.id)[0]
        assert wait.provider == "anthropic"
        assert wait.retry_at is not None and wait.retry_at > wait.since
        assert "every session waits" in wait.message
    finally:
        await hosts.shutdown()


async def test_the_concurrency_cap_holds_across_workspaces(llm: FakeLLM, repo: Path) -> None:
    release = threading.Event()

    async def slow(_request: RecordedRequest) -> fakellm.Reply:
        while not release.is_set():  # held until the test has looked
            await asyncio.sleep(0.01)
        return fakellm.reply("done")

    llm.set_responder(slow)
    recorder = HostRecorder()
    governor = Governor(GovernorSettings(providers={"anthropic": ProviderLimits(2)}))
    hosts = Hosts(recorder, governor=governor)
    try:
        records = await workspaces(hosts, repo, 4)
        for record in records:
            await hosts.send(record, "go")
        await recorder.until(
            lambda: llm.capacity.in_flight >= 2 and len(waits(recorder, "concurrency")) >= 2
        )
        assert llm.capacity.in_flight == 2
        release.set()
        await settled(hosts, records)
        assert llm.capacity.peak == 2
        assert len(recorder.of(E.TurnEnd)) == 4 and not recorder.failures
        # Each wait that was announced ended.
        assert len(recorder.of(E.GovernorWaitEnd)) == len(recorder.of(E.GovernorWait))
    finally:
        release.set()
        await hosts.shutdown()


async def test_the_providers_real_limit_is_learnt_from_its_429s(llm: FakeLLM, repo: Path) -> None:
    # The account serves 2 at once, the governor's cap is the default 8: the first 429s teach
    # it, and the workspaces beyond the limit wait for a slot instead of failing.
    llm.limit_concurrency(2, retry_after=0.05)
    release = threading.Event()

    async def slow(_request: RecordedRequest) -> fakellm.Reply:
        while not release.is_set():
            await asyncio.sleep(0.01)
        return fakellm.reply("done")

    llm.set_responder(slow)
    recorder = HostRecorder()
    governor = Governor()
    hosts = Hosts(recorder, governor=governor)
    try:
        records = await workspaces(hosts, repo, 4)
        for record in records:
            await hosts.send(record, "go")
        await recorder.until(lambda: len(waits(recorder, "concurrency")) >= 2)
        assert governor.lane("anthropic").limit == 2
        release.set()
        await settled(hosts, records)
        assert len(recorder.of(E.TurnEnd)) == 4 and not recorder.failures
        assert [e.reason for e in recorder.of(E.TurnEnd) if isinstance(e, E.TurnEnd)] == [
            "completed"
        ] * 4
        assert llm.capacity.rejected <= 2  # once per workspace beyond the limit, at most
    finally:
        release.set()
        await hosts.shutdown()


async def test_a_spent_fleet_budget_holds_new_turns_until_it_is_raised(
    llm: FakeLLM, repo: Path
) -> None:
    llm.set_default(fakellm.reply("ok"))
    update_config(lambda c: c.__setitem__("governor", {"budget": {"usdPerDay": 1}}))
    await asyncio.to_thread(SpendBook().add, {"/another/project": 2.5})  # spent earlier today
    recorder = HostRecorder()
    hosts = Hosts(recorder, governor=Governor(budget_recheck_s=0.05))
    try:
        (record,) = await workspaces(hosts, repo, 1)
        assert await hosts.send(record, "hello") == "started"
        await recorder.until(lambda: bool(waits(recorder, "budget", record.id)))
        held = waits(recorder, "budget", record.id)[0]
        assert "$1.00 a day is spent ($2.50 today)" in held.message
        assert "governor.budget.usdPerDay" in held.message
        assert model_calls(llm) == [] and not recorder.of(E.TurnStart)
        (item,) = [i for i in hosts.inbox.items() if i.workspace_id == record.id]
        assert item.kind == "held" and item.summary == held.message
        assert item.detail["reason"] == "budget"

        update_config(lambda c: c.__setitem__("governor", {"budget": {"usdPerDay": 10}}))
        await settled(hosts, [record])
        assert len(recorder.of(E.TurnEnd, record.id)) == 1
        assert not [i for i in hosts.inbox.items() if i.kind in ("held", "budget-spent")]
        ended = recorder.of(E.GovernorWaitEnd, record.id)
        assert [e.reason for e in ended if isinstance(e, E.GovernorWaitEnd)] == ["budget"]
    finally:
        await hosts.shutdown()


async def test_a_held_turn_can_be_interrupted(llm: FakeLLM, repo: Path) -> None:
    update_config(lambda c: c.__setitem__("governor", {"budget": {"usdPerProjectPerDay": 0}}))
    recorder = HostRecorder()
    hosts = Hosts(recorder, governor=Governor(budget_recheck_s=0.05))
    try:
        (record,) = await workspaces(hosts, repo, 1)
        await hosts.send(record, "hello")
        await recorder.until(lambda: bool(waits(recorder, "budget", record.id)))
        assert "this project's budget" in waits(recorder, "budget", record.id)[0].message
        stopped, _ = await hosts.interrupt(record.id)
        assert stopped
        host = hosts.get(record.id)
        assert host is not None and host.task is not None
        await asyncio.wait_for(host.wait_done(), 10)
        (failure,) = recorder.failures
        assert isinstance(failure, HeldTurnStopped) and "did not run" in failure.message
        assert model_calls(llm) == [] and not recorder.of(E.TurnStart)
        assert [
            e.reason for e in recorder.of(E.GovernorWaitEnd) if isinstance(e, E.GovernorWaitEnd)
        ] == ["budget"]
    finally:
        await hosts.shutdown()


async def test_what_turns_cost_is_added_to_the_days_spending(llm: FakeLLM, repo: Path) -> None:
    llm.set_default(fakellm.reply("ok", usage=fakellm.Usage(input_tokens=1000, output_tokens=500)))
    recorder = HostRecorder()
    governor = Governor()
    hosts = Hosts(recorder, governor=governor)
    try:
        (record,) = await workspaces(hosts, repo, 1)
        await hosts.send(record, "hello")
        await settled(hosts, [record])
    finally:
        await hosts.shutdown()
    spent = [
        e.cost_usd for e in recorder.of(E.AssistantMessage) if isinstance(e, E.AssistantMessage)
    ]
    assert spent and all(c is not None and c > 0 for c in spent)
    day = SpendBook().read()
    assert day.total == pytest.approx(sum(c for c in spent if c is not None))
    assert day.projects == {record.project_path: pytest.approx(day.total)}
