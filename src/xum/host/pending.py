"""What waits for a person, across a process's workspaces: questions an agent asks
(`ask_user_question`, plan mode) and approval requests of tool calls.

Each is an awaitable the session waits on and a front-end resolves: the host gives a session an
asker (`Questions.asker`) and an approver (`Approvals.approver_for`); the front-end learns of a
question through `HostListener.question_opened` (of an approval through the engine's
`approval-request` event) and settles it with `answer`. A chat message sent instead dismisses
the question (the tool is told the user did not answer); interrupting the turn cancels both
waits. A workspace is "waiting" while either map holds something for it: derived from what is
pending, never stored, so one settling does not hide the other.

Everything here runs on the host's event loop.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xum.engine import events as E
from xum.host.listener import HostListener
from xum.workspaces.safety.approvals import ApprovalAnswer, Approver, Decision

if TYPE_CHECKING:
    # Types only: `xum run` imports the host before its first request, which must not wait
    # for the tools package (tests/e2e/test_run_startup.py).
    from xum.tools.base import Question

Answers = Mapping[str, str] | None


@dataclass
class PendingQuestion:
    """Questions a session asked a person, waiting for the answers."""

    id: str
    workspace_id: str
    questions: Sequence[Question]
    future: asyncio.Future[Answers] = field(repr=False)
    settled: bool = False


class Questions:
    """One question at a time per workspace (a newer one dismisses the older)."""

    def __init__(self, listener: HostListener) -> None:
        self.listener = listener
        self._pending: dict[str, PendingQuestion] = {}  # by workspace id

    def pending(self, workspace_id: str) -> PendingQuestion | None:
        return self._pending.get(workspace_id)

    def asker(self, workspace_id: str) -> Callable[[Sequence[Question]], Awaitable[Answers]]:
        async def ask(questions: Sequence[Question]) -> Answers:
            future: asyncio.Future[Answers] = asyncio.get_running_loop().create_future()
            pending = PendingQuestion(os.urandom(6).hex(), workspace_id, list(questions), future)
            self._open(pending)
            try:
                return await pending.future
            finally:
                self._close(pending)

        return ask

    def answer(self, workspace_id: str, question_id: str, answers: Answers) -> bool:
        """Settle the waiting question; False when no such question waits."""
        pending = self._pending.get(workspace_id)
        if pending is None or pending.id != question_id:
            return False
        return self._settle(pending, dict(answers) if answers is not None else None)

    def dismiss(self, workspace_id: str) -> None:
        pending = self._pending.get(workspace_id)
        if pending is not None:
            self._settle(pending, None)

    def _open(self, pending: PendingQuestion) -> None:
        ws = pending.workspace_id
        previous = self._pending.get(ws)
        if previous is not None:
            self._settle(previous, None)  # a newer question replaces it
        self._pending[ws] = pending
        self.listener.status_changed(ws)
        self.listener.question_opened(pending)

    def _close(self, pending: PendingQuestion) -> None:
        ws = pending.workspace_id
        if self._pending.get(ws) is pending:
            del self._pending[ws]
            self.listener.status_changed(ws)
        self.listener.question_closed(pending)

    def _settle(self, pending: PendingQuestion, value: Answers) -> bool:
        if pending.settled:
            return False
        pending.settled = True
        if not pending.future.done():
            pending.future.set_result(value)
        return True


@dataclass(eq=False)
class _PendingApproval:
    """An approval request waiting for a person's answer."""

    request: E.ApprovalRequest
    future: asyncio.Future[ApprovalAnswer] = field(repr=False)


class Approvals:
    def __init__(self, listener: HostListener) -> None:
        self.listener = listener
        self._pending: dict[str, dict[str, _PendingApproval]] = {}  # workspace -> request id

    def requests_for(self, workspace_id: str) -> list[E.ApprovalRequest]:
        return [p.request for p in self._pending.get(workspace_id, {}).values()]

    def approver_for(self, workspace_id: str) -> Approver:
        async def approve(request: E.ApprovalRequest) -> ApprovalAnswer:
            future: asyncio.Future[ApprovalAnswer] = asyncio.get_running_loop().create_future()
            waiting = self._pending.setdefault(workspace_id, {})
            waiting[request.request_id] = _PendingApproval(request, future)
            self.listener.status_changed(workspace_id)
            try:
                return await future
            finally:
                waiting.pop(request.request_id, None)
                if not waiting:
                    self._pending.pop(workspace_id, None)
                self.listener.status_changed(workspace_id)

        return approve

    def answer(
        self, workspace_id: str, request_id: str, decision: Decision, reason: str | None
    ) -> bool:
        """Settle a waiting request; False when there is no such request (answered already,
        or its turn was stopped)."""
        pending = self._pending.get(workspace_id, {}).get(request_id)
        if pending is None or pending.future.done():
            return False
        pending.future.set_result(ApprovalAnswer(decision, reason or None))
        return True
