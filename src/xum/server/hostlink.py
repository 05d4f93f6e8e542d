"""The server's side of the workspace host: host events into the hub.

`HubListener` is the server's `HostListener` (`xum.host.listener`): engine events go to the
hub's `publish` (which folds them into the workspace's channel and sends each to its
subscribers), a status change recomputes the workspace's sidebar status, a failed turn becomes
the workspace's error and an `error` event, and a question is sent to the subscribers as a
`question` message (`question-closed` when it goes). Everything runs on the server's loop, inside
the engine's emit: the host guards each call.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xum.core.errors import XumError
from xum.engine import events as E
from xum.host.pending import PendingQuestion
from xum.server.errors import from_xum_error
from xum.server.hub import Hub, dumps


class HubListener:
    def __init__(self, hub: Hub, driving: Callable[[str], bool] | None = None) -> None:
        self.hub = hub
        self.driving = driving  # whether a host drives a turn in the workspace

    async def opening(self, workspace_id: str) -> None:
        await self.hub.channel(workspace_id)  # events of a workspace without a channel are dropped

    def event(self, workspace_id: str, event: E.Event) -> None:
        self.hub.publish(workspace_id, event)

    def status_changed(self, workspace_id: str) -> None:
        channel = self.hub.channels.get(workspace_id)
        if channel is not None and self.driving is not None:
            channel.running = self.driving(workspace_id)
        self.hub.status_changed(workspace_id)

    def turn_failed(self, workspace_id: str, error: Exception) -> None:
        if not isinstance(error, XumError):  # a bug, logged by the host
            message = f"the turn failed: {type(error).__name__}"
            body: dict[str, Any] = {"code": "internal", "message": message}
        else:
            api = from_xum_error(error)
            body = {"code": api.code, "message": api.message, "hint": api.hint}
        clean = {k: v for k, v in body.items() if v is not None}
        channel = self.hub.channels.get(workspace_id)
        if channel is not None:
            channel.error = clean
        self.hub.publish(workspace_id, E.ErrorEvent.from_dict(clean))
        self.status_changed(workspace_id)

    def question_opened(self, pending: PendingQuestion) -> None:
        self.hub.send_to_subscribers(pending.workspace_id, dumps(question_message(pending)))

    def question_closed(self, pending: PendingQuestion) -> None:
        ws = pending.workspace_id
        self.hub.send_to_subscribers(
            ws, dumps({"type": "question-closed", "workspaceId": ws, "questionId": pending.id})
        )

    def workspaces_changed(self) -> None:
        self.hub.workspaces_changed()


def question_message(pending: PendingQuestion) -> dict[str, Any]:
    """A waiting question as the WebSocket's `question` message."""
    return {
        "type": "question",
        "workspaceId": pending.workspace_id,
        "questionId": pending.id,
        "questions": [
            {
                "question": q.question,
                "header": q.header,
                "multiSelect": q.multi_select,
                "options": [{"label": o.label, "description": o.description} for o in q.options],
            }
            for q in pending.questions
        ],
    }
