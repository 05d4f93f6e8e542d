"""Questions an agent asks the user (`ask_user_question`, plan mode) while its tool call waits.

The server gives each session an `ask_user` callback: it registers the question, tells the
workspace's subscribers (a `question` message; a client that subscribes later gets it after the
partial), marks the workspace "waiting", and waits for `POST /api/workspaces/{id}/answers`.
Sending a chat message instead dismisses the question (the tool is told the user did not
answer); interrupting the turn cancels it.

Everything here runs on the server's event loop, where the sessions run too.
"""

from __future__ import annotations

import asyncio
import secrets
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from xum.server.hub import Hub, dumps
from xum.tools.base import Question

Answers = Mapping[str, str] | None


@dataclass
class PendingQuestion:
    id: str
    workspace_id: str
    questions: Sequence[Question]
    future: asyncio.Future[Answers] = field(repr=False)
    settled: bool = False

    def to_message(self) -> dict[str, Any]:
        return {
            "type": "question",
            "workspaceId": self.workspace_id,
            "questionId": self.id,
            "questions": [
                {
                    "question": q.question,
                    "header": q.header,
                    "multiSelect": q.multi_select,
                    "options": [
                        {"label": o.label, "description": o.description} for o in q.options
                    ],
                }
                for q in self.questions
            ],
        }


class Questions:
    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self._pending: dict[str, PendingQuestion] = {}  # by workspace id: one at a time
        hub.pending_question = self.message_for

    def message_for(self, workspace_id: str) -> dict[str, Any] | None:
        pending = self._pending.get(workspace_id)
        return pending.to_message() if pending is not None else None

    def asker(self, workspace_id: str) -> Callable[[Sequence[Question]], Awaitable[Answers]]:
        async def ask(questions: Sequence[Question]) -> Answers:
            future: asyncio.Future[Answers] = asyncio.get_running_loop().create_future()
            pending = PendingQuestion(secrets.token_hex(6), workspace_id, list(questions), future)
            self._open(pending)
            try:
                return await pending.future
            finally:
                self._close(pending)

        return ask

    def _open(self, pending: PendingQuestion) -> None:
        ws = pending.workspace_id
        previous = self._pending.get(ws)
        if previous is not None:
            self._settle(previous, None)  # a newer question replaces it
        self._pending[ws] = pending
        self.hub.status_changed(ws)
        self.hub.send_to_subscribers(ws, dumps(pending.to_message()))

    def _close(self, pending: PendingQuestion) -> None:
        ws = pending.workspace_id
        if self._pending.get(ws) is pending:
            del self._pending[ws]
            self.hub.status_changed(ws)
        self.hub.send_to_subscribers(
            ws, dumps({"type": "question-closed", "workspaceId": ws, "questionId": pending.id})
        )

    def _settle(self, pending: PendingQuestion, value: Answers) -> bool:
        if pending.settled:
            return False
        pending.settled = True
        if not pending.future.done():
            pending.future.set_result(value)
        return True

    def answer(self, workspace_id: str, question_id: str, answers: Answers) -> bool:
        pending = self._pending.get(workspace_id)
        if pending is None or pending.id != question_id:
            return False
        return self._settle(pending, dict(answers) if answers is not None else None)

    def dismiss(self, workspace_id: str) -> None:
        pending = self._pending.get(workspace_id)
        if pending is not None:
            self._settle(pending, None)
