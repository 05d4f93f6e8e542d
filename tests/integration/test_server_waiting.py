"""A workspace's "waiting" state comes from what is pending, not from a flag two parts set:
a question settling while an approval still waits (or the other way round) leaves it waiting,
and it goes back to its running state only when neither is left."""

from __future__ import annotations

import asyncio

from xum.engine import events as E
from xum.server.hub import Hub
from xum.server.pending_approvals import Approvals
from xum.server.questions import Questions
from xum.tools.base import Question, QuestionOption

WS = "waiting-ws"
QUESTION = Question("Which one?", "Pick", False, (QuestionOption("a", "the first"),))


def request(request_id: str) -> E.ApprovalRequest:
    return E.ApprovalRequest(
        request_id=request_id,
        call_id=f"call-{request_id}",
        tool="bash",
        kind="command",
        subject="touch x",
        why="ask mode",
    )


async def settle() -> None:
    # Let the waiting coroutines run their `finally` blocks (no timing: a fixed number of turns
    # of the loop, each of which runs every ready callback).
    for _ in range(5):
        await asyncio.sleep(0)


async def test_waiting_holds_while_anything_is_pending() -> None:
    hub = Hub(capacity=100)
    await hub.channel(WS)
    questions, approvals = Questions(hub), Approvals(hub)
    assert hub.status(WS)["state"] == "idle"

    asked = asyncio.create_task(questions.asker(WS)([QUESTION]))
    approving = asyncio.create_task(approvals.approver_for(WS)(request("r1")))
    await settle()
    assert hub.status(WS)["state"] == "waiting"

    # The question is answered; the approval still waits, so the workspace does too.
    message = questions.message_for(WS)
    assert message is not None
    assert questions.answer(WS, message["questionId"], {"Which one?": "a"})
    assert await asked == {"Which one?": "a"}
    await settle()
    assert questions.message_for(WS) is None
    assert hub.status(WS)["state"] == "waiting"

    assert approvals.answer(WS, "r1", "once", None)
    assert (await approving).decision == "once"
    await settle()
    assert hub.status(WS)["state"] == "idle"


async def test_an_approval_settling_first_leaves_the_question_waiting() -> None:
    hub = Hub(capacity=100)
    await hub.channel(WS)
    questions, approvals = Questions(hub), Approvals(hub)
    approving = asyncio.create_task(approvals.approver_for(WS)(request("r2")))
    asked = asyncio.create_task(questions.asker(WS)([QUESTION]))
    await settle()
    assert approvals.answer(WS, "r2", "deny", "no")
    assert (await approving).reason == "no"
    await settle()
    assert hub.status(WS)["state"] == "waiting"
    questions.dismiss(WS)
    assert await asked is None
    await settle()
    assert hub.status(WS)["state"] == "idle"
