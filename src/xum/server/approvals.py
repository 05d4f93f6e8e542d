"""Approval requests waiting for a person, answered from the browser.

Each session gets an approver (`approver_for`). The request itself reaches the browser as the
engine's `approval-request` event (the approval middleware emits it, the hub forwards it like
any event); a client that subscribes later gets the pending ones again after the partial
message, because informational events are not replayed. The workspace shows as "waiting" while
one is open. `POST /api/workspaces/{id}/approvals/{requestId}` answers it; interrupting the turn
cancels the wait (the middleware reports it as `approval-resolved`, by `interrupted`).

Everything here runs on the server's event loop, where the sessions run too.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field

from xum.engine import events as E
from xum.server.hub import Hub
from xum.workspaces.safety.approvals import ApprovalAnswer, Approver, Decision


@dataclass(eq=False)
class _Pending:
    request: E.ApprovalRequest
    future: asyncio.Future[ApprovalAnswer] = field(repr=False)


class Approvals:
    def __init__(self, hub: Hub) -> None:
        self.hub = hub
        self._pending: dict[str, dict[str, _Pending]] = {}  # workspace id -> request id -> it
        hub.pending_approvals = self.requests_for

    def requests_for(self, workspace_id: str) -> list[E.ApprovalRequest]:
        return [p.request for p in self._pending.get(workspace_id, {}).values()]

    def approver_for(self, workspace_id: str) -> Approver:
        async def approve(request: E.ApprovalRequest) -> ApprovalAnswer:
            future: asyncio.Future[ApprovalAnswer] = asyncio.get_running_loop().create_future()
            waiting = self._pending.setdefault(workspace_id, {})
            waiting[request.request_id] = _Pending(request, future)
            self.hub.status_changed(workspace_id)
            try:
                return await future
            finally:
                waiting.pop(request.request_id, None)
                if not waiting:
                    self._pending.pop(workspace_id, None)
                self.hub.status_changed(workspace_id)

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
