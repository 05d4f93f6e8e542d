"""Questions an agent asks the user, as the server shows them: the host's pending questions
(`xum.host.pending`) with the hub told of each. A subscriber gets the waiting one after the
partial (`Hub.pending_question`); `POST /api/workspaces/{id}/answers` answers it."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from xum.host import pending
from xum.server.hostlink import HubListener, question_message
from xum.server.hub import Hub


class Questions(pending.Questions):
    def __init__(self, hub: Hub, driving: Callable[[str], bool] | None = None) -> None:
        super().__init__(HubListener(hub, driving))
        hub.pending_question = self.message_for

    def message_for(self, workspace_id: str) -> dict[str, Any] | None:
        waiting = self.pending(workspace_id)
        return question_message(waiting) if waiting is not None else None
