"""The governor's parts on their own: the fair lane, the config section, the spend file."""

from __future__ import annotations

import asyncio

import pytest

from xum.core.errors import ConfigError
from xum.engine import events as E
from xum.host.fleet_spend import SpendBook
from xum.host.governor import FairLane, Governor
from xum.host.governor_config import (
    DEFAULT_MAX_CONCURRENT,
    GovernorSettings,
    ProviderLimits,
    parse_settings,
)
from xum.host.inflight import InFlight


async def test_waiters_are_served_one_workspace_at_a_time() -> None:
    lane = FairLane(1)
    await lane.take("holder")
    served: list[str] = []

    async def request(who: str, tag: str) -> None:
        await lane.take(who)
        served.append(tag)
        lane.release()

    # A busy workspace queues three requests before a quiet one queues its first.
    tasks = []
    for who, tag in (("busy", "busy-1"), ("busy", "busy-2"), ("busy", "busy-3"), ("quiet", "q")):
        tasks.append(asyncio.create_task(request(who, tag)))
        await asyncio.sleep(0)  # let it queue, in this order
    lane.release()
    await asyncio.wait_for(asyncio.gather(*tasks), 5)
    assert served == ["busy-1", "q", "busy-2", "busy-3"]
    assert lane.active == 0


async def test_a_cancelled_waiter_leaves_no_trace() -> None:
    lane = FairLane(1)
    await lane.take("a")
    waiter = asyncio.create_task(lane.take("b"))
    await asyncio.sleep(0)
    waiter.cancel()
    with pytest.raises(asyncio.CancelledError):
        await waiter
    lane.release()  # nobody is left to hand the slot to
    assert lane.active == 0 and not lane.busy()


def test_no_section_means_defaults_that_never_slow_one_session() -> None:
    settings = parse_settings({})
    assert settings == GovernorSettings()
    assert settings.provider_cap("anthropic") == DEFAULT_MAX_CONCURRENT >= 8
    assert not settings.has_budget


def test_a_full_section_is_read() -> None:
    settings = parse_settings(
        {
            "governor": {
                "maxConcurrent": 12,
                "providers": {
                    "anthropic": {
                        "maxConcurrent": 3,
                        "models": {"claude-opus-5-5": {"maxConcurrent": 1}},
                    },
                    "openai": {},
                },
                "maxConcurrentSubagents": 5,
                "budget": {"usdPerDay": 40, "usdPerProjectPerDay": 7.5},
            }
        }
    )
    assert settings.provider_cap("anthropic") == 3
    assert settings.provider_cap("openai") == 12  # no cap of its own: the section's default
    assert settings.provider_cap("xai") == 12
    assert settings.model_cap("anthropic", "claude-opus-5-5") == 1
    assert settings.model_cap("anthropic", "claude-sonnet-5-5") is None
    assert settings.max_subagents == 5
    assert (settings.usd_per_day, settings.usd_per_project_per_day) == (40.0, 7.5)


@pytest.mark.parametrize(
    ("section", "says"),
    [
        ({"maxConcurrent": 0}, "governor.maxConcurrent must be a whole number of at least 1"),
        (
            {"providers": {"anthropic": {"maxConcurrent": "4"}}},
            "governor.providers.anthropic.maxConcurrent",
        ),
        ({"budget": {"usdPerDay": -1}}, "governor.budget.usdPerDay must be an amount"),
        ({"budget": {"usd": 3}}, "governor.budget has an unknown key 'usd'"),
        ({"maxConcurent": 3}, "governor has an unknown key 'maxConcurent'"),
        ([], "governor must be an object"),
    ],
)
def test_a_wrong_value_names_the_key(section: object, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_settings({"governor": section})
    assert says in caught.value.message
    assert caught.value.hint


def test_the_days_spending_adds_up_across_writers() -> None:
    first, second = SpendBook(), SpendBook()  # two processes of one $XUM_ROOT
    first.add({"/a": 1.25})
    second.add({"/a": 0.5, "/b": 2.0})
    day = first.read()
    assert day.total == pytest.approx(3.75)
    assert day.projects == {"/a": pytest.approx(1.75), "/b": pytest.approx(2.0)}
    assert SpendBook().read("1999-01-01").total == 0.0


def test_a_late_subscriber_is_told_of_the_wait_in_progress() -> None:
    inflight = InFlight()
    wait = E.GovernorWait(reason="concurrency", message="waits its turn", since=1.0)
    inflight.fold(wait)
    assert inflight.snapshot() == [wait]
    inflight.fold(E.GovernorWaitEnd(reason="concurrency", waited_s=0.5))
    assert inflight.snapshot() == []


async def test_a_cap_lowered_by_a_429_climbs_back_after_a_quiet_while() -> None:
    governor = Governor(GovernorSettings(max_concurrent=4), learn_quiet_s=0.0)
    lane = governor.lane("p")
    await lane.take("w")  # one request in flight when another is refused
    governor.pause("p", None)
    assert lane.limit == 1 and governor.paused_for("p") == 0  # no Retry-After: no pause
    governor.relearn("p")
    assert lane.limit == 2
    governor.relearn("p")
    governor.relearn("p")
    governor.relearn("p")
    assert lane.limit == 4  # never above the configured cap


async def test_a_models_own_cap_holds_only_that_model() -> None:
    limits = ProviderLimits(4, {"big": 1})
    governor = Governor(GovernorSettings(providers={"p": limits}))
    told: list[E.Event] = []
    gate = governor.gate_for("w", told.append)
    first = await gate.acquire("p", "big")
    other = await asyncio.wait_for(gate.acquire("p", "small"), 5)  # another model: at once
    second = asyncio.create_task(gate.acquire("p", "big"))
    await asyncio.sleep(0)
    assert not second.done()
    (wait,) = told
    assert isinstance(wait, E.GovernorWait) and wait.reason == "concurrency"
    assert wait.model == "big"
    first.release()
    (await asyncio.wait_for(second, 5)).release()
    other.release()
    assert governor.lane("p").active == 0 and governor.lane("p", "big").active == 0
    assert isinstance(told[-1], E.GovernorWaitEnd)
