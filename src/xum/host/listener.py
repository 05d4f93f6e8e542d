"""What the host tells a front-end: the one interface every front-end implements to show a
workspace's sessions.

`event` carries the engine's typed events (the workspace's own and its sub-agents', each under
its own workspace id), in the order the engine emits them; everything else is host-level: the
status of a workspace changed (running, queued, waiting), a turn failed to run (`turn_failed`:
a `XumError`, or any other exception for a bug, already logged), a question opened or closed, the list of
workspaces changed (created, forked, a setting the list shows). Approval requests need no
method of their own: they are engine events (`approval-request`, `approval-resolved`), and
`Approvals.requests_for` says which still wait.

Every call is made on the host's event loop, inside the engine's emit or a host step: an
implementation must be quick and must not raise (a failure is logged by the caller and the turn
goes on).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

from xum.engine import events as E

if TYPE_CHECKING:
    from xum.host.pending import PendingQuestion


class HostListener(Protocol):
    async def opening(self, workspace_id: str) -> None:
        """A host is about to open in this workspace: get ready to show its events."""

    def event(self, workspace_id: str, event: E.Event) -> None: ...

    def status_changed(self, workspace_id: str) -> None: ...

    def turn_failed(self, workspace_id: str, error: Exception) -> None: ...

    def question_opened(self, pending: PendingQuestion) -> None: ...

    def question_closed(self, pending: PendingQuestion) -> None: ...

    def workspaces_changed(self) -> None: ...


class NullListener:
    """Shows nothing (a front-end that reads only the results of its calls)."""

    async def opening(self, workspace_id: str) -> None:
        return None

    def event(self, workspace_id: str, event: E.Event) -> None:
        return None

    def status_changed(self, workspace_id: str) -> None:
        return None

    def turn_failed(self, workspace_id: str, error: Exception) -> None:
        return None

    def question_opened(self, pending: PendingQuestion) -> None:
        return None

    def question_closed(self, pending: PendingQuestion) -> None:
        return None

    def workspaces_changed(self) -> None:
        return None
