"""The inbox model (`xum.host.inbox`) fed the engine's own events and the host's real pending
maps: which notices a drive leaves, what clears them, and what answers what."""

from __future__ import annotations

import asyncio

import pytest

from xum.engine import events as E
from xum.host.inbox import Inbox, InboxError, InboxItem, WorkspaceRef
from xum.host.listener import NullListener
from xum.host.pending import Approvals, Questions
from xum.tools.base import Question, QuestionOption

WS = "ws-main"
CHILD = "ws-child"
REFS = {WS: WorkspaceRef("main", "/p/app"), CHILD: WorkspaceRef("child", "/p/app", WS)}


def make_inbox(read: dict[str, int] | None = None) -> tuple[Inbox, list[tuple[str, InboxItem]]]:
    marks = read if read is not None else {}
    inbox = Inbox(
        Questions(NullListener()),
        Approvals(NullListener()),
        describe=REFS.get,
        read_seq=lambda ws: marks.get(ws, 0),
    )
    changes: list[tuple[str, InboxItem]] = []
    inbox.watch(lambda change, item: changes.append((change, item)))
    return inbox, changes


def turn(inbox: Inbox, ws: str, seq: int, reason: str, **end: object) -> None:
    inbox.event(ws, E.TurnStart(ts=0, seq=seq, turn_id="t"))
    inbox.event(ws, E.TurnEnd(ts=0, seq=seq + 1, turn_id="t", reason=reason, **end))  # type: ignore[arg-type]


def kinds(inbox: Inbox) -> list[str]:
    return [i.kind for i in inbox.items()]


def test_a_turn_end_waits_until_the_drive_ends_then_leaves_when_read() -> None:
    inbox, changes = make_inbox()
    turn(inbox, WS, 1, "completed")
    assert kinds(inbox) == []  # a goal or a queued message may still follow
    inbox.drive_ended(WS)
    (item,) = inbox.items()
    assert (item.kind, item.summary, item.seq, item.actions) == (
        "turn-ended",
        "the turn is done",
        2,
        ("read",),
    )
    assert item.to_json()["workspaceName"] == "main" and item.to_json()["project"] == "/p/app"
    inbox.read(WS, 1)
    assert kinds(inbox) == ["turn-ended"]  # not read far enough
    inbox.read(WS, 2)
    assert kinds(inbox) == [] and [c for c, _ in changes] == ["added", "removed"]


def test_a_new_turn_clears_the_old_notices_and_a_read_turn_leaves_none() -> None:
    inbox, _ = make_inbox({WS: 4})
    turn(inbox, WS, 1, "error", error={"message": "the provider said no"})
    inbox.drive_ended(WS)  # read up to 4 already: someone watched it end
    assert kinds(inbox) == []
    turn(inbox, WS, 5, "interrupted")
    inbox.drive_ended(WS)
    assert [i.summary for i in inbox.items()] == ["the turn was interrupted"]
    inbox.event(WS, E.TurnStart(ts=0, seq=7, turn_id="t2"))
    assert kinds(inbox) == []


def test_compaction_turns_and_finished_sub_agent_turns_are_no_news() -> None:
    inbox, _ = make_inbox()
    inbox.event(WS, E.TurnStart(ts=0, seq=1, turn_id="c", kind="compaction"))
    inbox.event(WS, E.TurnEnd(ts=0, seq=2, turn_id="c", reason="completed"))
    inbox.drive_ended(WS)
    turn(inbox, CHILD, 1, "completed")
    inbox.drive_ended(CHILD)
    assert kinds(inbox) == []
    turn(inbox, CHILD, 3, "error", error={"message": "boom"})
    inbox.drive_ended(CHILD)
    (failed,) = inbox.items()
    assert failed.summary == "the turn failed: boom" and failed.workspace.parent_id == WS


def test_a_goal_stop_or_a_spent_budget_says_more_than_the_turn_end() -> None:
    inbox, _ = make_inbox()
    inbox.event(WS, E.TurnStart(ts=0, seq=1, turn_id="t"))
    inbox.event(WS, E.TurnEnd(ts=0, seq=2, turn_id="t", reason="completed"))
    stop = dict(goalId="g", objective="ship it", turns=3, spentCents=90, budgetCents=100)
    inbox.event(WS, E.GoalIncomplete(reason="goal_budget", turnCap=None, **stop))  # type: ignore[arg-type]
    inbox.drive_ended(WS)
    (item,) = inbox.items()
    assert item.kind == "goal-stopped" and item.summary == "goal stopped at its budget: ship it"
    turn(inbox, WS, 3, "budget")
    inbox.drive_ended(WS)
    assert [i.summary for i in inbox.items()] == ["the session budget is spent"]


def test_a_plan_replaces_the_turn_notice_and_can_be_dismissed() -> None:
    inbox, _ = make_inbox()
    inbox.event(WS, E.TurnStart(ts=0, seq=1, turn_id="t"))
    plan = E.PlanProposed(call_id="c", path="/plans/main.md", content="# Plan", mtime_ns=1)
    inbox.event(WS, plan)
    inbox.event(WS, E.TurnEnd(ts=0, seq=2, turn_id="t", reason="completed"))
    inbox.drive_ended(WS)
    (item,) = inbox.items()
    assert item.kind == "plan" and item.detail["content"] == "# Plan"
    assert inbox.dismiss(item.id) and kinds(inbox) == []
    assert not inbox.dismiss(item.id)  # gone already


async def test_pending_requests_are_items_answered_through_the_host_paths() -> None:
    inbox, changes = make_inbox()
    request = E.ApprovalRequest(
        request_id="r1", call_id="c1", tool="bash", kind="command", subject="rm x", why="ask"
    )
    approving = asyncio.create_task(inbox.approvals.approver_for(WS)(request))
    question = Question("Which?", "Pick", False, (QuestionOption("a", "first"),))
    asking = asyncio.create_task(inbox.questions.asker(WS)([question]))
    await asyncio.sleep(0)
    inbox.pending_changed(WS)
    approval, asked = sorted(inbox.items(), key=lambda i: i.kind)
    assert approval.kind == "approval" and approval.actions == ("once", "deny")  # no prefix
    assert asked.kind == "question" and asked.summary == "question: Which?"
    with pytest.raises(InboxError, match="cannot be allowed always"):
        inbox.approve(approval.id, "always")
    with pytest.raises(InboxError, match="answered, not dismissed"):
        inbox.dismiss(approval.id)
    assert inbox.approve(approval.id, "deny", "not that")
    assert (await approving).reason == "not that"
    assert inbox.answer(asked.id, {"Which?": "a"})
    assert await asking == {"Which?": "a"}
    inbox.pending_changed(WS)
    assert kinds(inbox) == []
    assert sorted(c for c, _ in changes) == ["added", "added", "removed", "removed"]
