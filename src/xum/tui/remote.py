"""Steering a turn that `xum server` runs in one of the UI's workspaces.

The writer lock says a workspace's session is busy elsewhere; when its holder is the server of
this `$XUM_ROOT` (`xum.workspaces.server_link`), the UI does what the browser would, through the
server's API: queues messages into the turn, interrupts it, and answers what the turn waits for.
A question or an approval request the server's turn is waiting on is read at each poll (about
once a second) and shown in the same panels as the UI's own; the answer goes back to the server.
One answered in the browser meanwhile disappears here at the next poll.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from xum.core.errors import XumError
from xum.engine import events as E

if TYPE_CHECKING:
    from xum.tui.runner import PendingApproval, PendingQuestion, Runner, Workspace
    from xum.workspaces.server_link import ServerLink

log = logging.getLogger("xum.tui")


class ServerTurns:
    def __init__(self, runner: Runner) -> None:
        self.runner = runner

    async def link_for(self, ws: Workspace) -> ServerLink | None:
        """The server on this root, when it is the process whose turn holds the session."""
        from xum.store import sessions as session_files
        from xum.workspaces.server_link import find_server

        def lookup() -> ServerLink | None:
            link = find_server()
            holder = session_files.lock_holder(ws.id) or {}
            return link if link is not None and holder.get("pid") == link.pid else None

        return await asyncio.to_thread(lookup)

    async def interrupt(self, ws: Workspace) -> list[str] | None:
        """Stop the server's turn; the messages it had queued. None: no server turn there."""
        link = await self.link_for(ws) if ws.busy_elsewhere else None
        if link is None:
            return None
        return await link.interrupt(ws.id)

    # What the server's turn waits for ----------------------------------------------------

    async def sync(self, ws: Workspace) -> None:
        """Show (or take down) the server's waiting approval request and question."""
        link = await self.link_for(ws) if ws.busy_elsewhere else None
        if link is None:
            self.forget(ws)
            return
        try:
            # Both at once: this runs about once a second for each workspace the server holds.
            approvals, question = await asyncio.gather(link.approvals(ws.id), link.question(ws.id))
        except XumError as exc:  # the server is busy or going away: the next poll tries again
            log.info("cannot read what the server's turn waits for: %s", exc.message)
            return
        self._sync_approval(ws, link, approvals[0] if approvals else None)
        self._sync_question(ws, link, question)

    def forget(self, ws: Workspace) -> None:
        """The server's turn ended (or is not the server's): its prompts go from the screen."""
        if ws.approval is not None and ws.approval.remote_id is not None:
            self._drop_approval(ws, ws.approval)
        if ws.question is not None and ws.question.remote_id is not None:
            self._drop_question(ws, ws.question)

    def _sync_approval(self, ws: Workspace, link: ServerLink, data: dict[str, Any] | None) -> None:
        from xum.tui.runner import PendingApproval

        current = ws.approval
        if current is not None and current.remote_id is None:
            return  # the UI's own turn asks (the session cannot be busy elsewhere then)
        request_id = str(data.get("request_id", "")) if data is not None else None
        if current is not None and current.remote_id == request_id:
            return
        if current is not None:
            self._drop_approval(ws, current)
        if data is None or not request_id:
            return
        fields = {k: v for k, v in data.items() if k in E.ApprovalRequest._fields}
        try:
            request = E.ApprovalRequest(**fields)
        except TypeError:
            log.warning("the server sent an approval request xum cannot read: %r", data)
            return
        future = asyncio.get_running_loop().create_future()
        pending = PendingApproval(request, future, remote_id=request_id)
        ws.approval = pending
        self.runner.spawn(self._answer_approval(ws, link, pending))
        self.runner.listener.status_changed(ws)

    async def _answer_approval(
        self, ws: Workspace, link: ServerLink, pending: PendingApproval
    ) -> None:
        assert pending.future is not None  # a server's request always has one
        try:
            answer = await pending.future
        except asyncio.CancelledError:
            return  # taken down: answered elsewhere, the turn ended, or the UI is closing
        try:
            await link.approve(ws.id, pending.remote_id or "", answer.decision, answer.reason)
        except XumError as exc:  # still waiting there: the next poll shows it again
            log.warning("the server did not take the decision: %s", exc.message)
        if ws.approval is pending:
            ws.approval = None
            self.runner.listener.status_changed(ws)

    def _drop_approval(self, ws: Workspace, pending: PendingApproval) -> None:
        if pending.future is not None:
            pending.future.cancel()
        if ws.approval is pending:
            ws.approval = None
            self.runner.listener.status_changed(ws)

    def _sync_question(self, ws: Workspace, link: ServerLink, data: dict[str, Any] | None) -> None:
        from xum.tui.runner import PendingQuestion

        current = ws.question
        if current is not None and current.remote_id is None:
            return
        question_id = str(data.get("questionId", "")) if data is not None else None
        if current is not None and current.remote_id == question_id:
            return
        if current is not None:
            self._drop_question(ws, current)
        if data is None or not question_id:
            return
        questions = _questions(data.get("questions"))
        if not questions:
            return
        future = asyncio.get_running_loop().create_future()
        pending = PendingQuestion(questions, future, remote_id=question_id)
        ws.question = pending
        self.runner.spawn(self._answer_question(ws, link, pending))
        self.runner.listener.status_changed(ws)

    async def _answer_question(
        self, ws: Workspace, link: ServerLink, pending: PendingQuestion
    ) -> None:
        assert pending.future is not None
        try:
            answers = await pending.future
        except asyncio.CancelledError:
            return
        try:
            given = dict(answers) if answers is not None else None
            await link.answer(ws.id, pending.remote_id or "", given)
        except XumError as exc:
            log.warning("the server did not take the answers: %s", exc.message)
        if ws.question is pending:
            ws.question = None
            self.runner.listener.status_changed(ws)

    def _drop_question(self, ws: Workspace, pending: PendingQuestion) -> None:
        if pending.future is not None:
            pending.future.cancel()
        if ws.question is pending:
            ws.question = None
            self.runner.listener.status_changed(ws)


def _questions(raw: Any) -> list[Any]:
    """The server's `question` message's questions as the tool's own records."""
    from xum.tools.base import Question, QuestionOption

    out = []
    for q in raw if isinstance(raw, list) else []:
        if not isinstance(q, dict) or not isinstance(q.get("question"), str):
            continue
        options = tuple(
            QuestionOption(str(o.get("label", "")), str(o.get("description", "")))
            for o in q.get("options", [])
            if isinstance(o, dict)
        )
        out.append(
            Question(q["question"], str(q.get("header", "")), bool(q.get("multiSelect")), options)
        )
    return out
