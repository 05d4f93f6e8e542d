"""The governor writes the costs noted close together into the day's spending file in one write
(a fleet notes one per step), counts them at once for its own budget checks, and writes what it
gathered when it closes."""

from __future__ import annotations

import asyncio

import pytest

from xum.host import governor as governor_module
from xum.host.fleet_spend import SpendBook, today
from xum.host.governor import Governor, GovernorSettings


async def test_costs_are_gathered_counted_at_once_and_written_on_close(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(governor_module, "SPEND_GATHER_S", 30.0)  # longer than the test
    book = SpendBook()
    governor = Governor(
        read_settings=lambda: GovernorSettings(usd_per_day=1.0),
        book=book,
    )
    for _ in range(10):
        governor.note_cost("/p", 0.05)
        await asyncio.sleep(0.01)  # a loop turn between costs: each would have been a write
    assert not book.path(today()).exists()  # nothing written while costs are gathered
    # Not yet on disk, but the budget check counts it: 0.50 of 1.00 spent.
    assert await governor.budget_problem("/p") is None
    for _ in range(10):
        governor.note_cost("/p", 0.05)
    problem = await governor.budget_problem("/p")
    assert problem is not None and "fleet budget" in problem

    await governor.aclose()
    day = book.read()
    assert day.total == pytest.approx(1.0)
    assert day.projects == {"/p": pytest.approx(1.0)}
