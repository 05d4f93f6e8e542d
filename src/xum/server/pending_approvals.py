"""Approval requests waiting for a person, as the server shows them: the host's pending
approvals (`xum.host.pending`) with the hub told of each. The request reaches the browser as the
engine's `approval-request` event; a client that subscribes later gets the waiting ones again
after the partial (`Hub.pending_approvals`), because informational events are not replayed.
`POST /api/workspaces/{id}/approvals/{requestId}` answers one."""

from __future__ import annotations

from collections.abc import Callable

from xum.host import pending
from xum.server.hostlink import HubListener
from xum.server.hub import Hub


class Approvals(pending.Approvals):
    def __init__(self, hub: Hub, driving: Callable[[str], bool] | None = None) -> None:
        super().__init__(HubListener(hub, driving))
        hub.pending_approvals = self.requests_for
