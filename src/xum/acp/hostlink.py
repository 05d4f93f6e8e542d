"""What the bridge's host tells the editor sessions: `HostListener` for `xum acp`.

One `Hosts` serves every session of the bridge; this listener hands each host event to the
`BridgeSession` of its workspace. A new workspace's `.xum/init` output starts before its
session is registered (`Hosts.create` subscribes at once), so lines for a workspace without a
session yet are held and handed over when it registers. Sub-agents' events (their own workspace
ids) have no editor session and are dropped, as before the port.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from xum.engine import events as E

if TYPE_CHECKING:
    from xum.acp.session import BridgeSession
    from xum.host.pending import PendingQuestion


class BridgeListener:
    def __init__(self) -> None:
        self.sessions: dict[str, BridgeSession] = {}
        self._held: dict[str, list[E.Event]] = {}

    def register(self, session: BridgeSession) -> None:
        self.sessions[session.id] = session
        for event in self._held.pop(session.id, []):
            session.on_event(event)

    def forget(self, workspace_id: str) -> None:
        self.sessions.pop(workspace_id, None)
        self._held.pop(workspace_id, None)

    async def opening(self, workspace_id: str) -> None:
        return None

    def event(self, workspace_id: str, event: E.Event) -> None:
        session = self.sessions.get(workspace_id)
        if session is not None:
            session.on_event(event)
        elif isinstance(event, E.InitOutput | E.InitEnd):
            self._held.setdefault(workspace_id, []).append(event)

    def status_changed(self, workspace_id: str) -> None:
        return None

    def turn_failed(self, workspace_id: str, error: Exception) -> None:
        session = self.sessions.get(workspace_id)
        if session is not None:
            session.on_failure(error)

    def question_opened(self, pending: PendingQuestion) -> None:
        session = self.sessions.get(pending.workspace_id)
        if session is not None:
            session.on_question(pending)
        elif not pending.future.done():  # nobody to ask: the tool hears nobody answered
            pending.future.set_result(None)

    def question_closed(self, pending: PendingQuestion) -> None:
        return None

    def workspaces_changed(self) -> None:
        return None
