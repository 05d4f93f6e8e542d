"""Feeding the attention inbox (`xum.host.inbox`) from what the host already tells its front-end.

`InboxFeed` is a `HostListener` that passes every call on to the front-end's listener unchanged
and reads the ones the inbox needs: a status change (the pending questions and approvals of the
workspace may have changed, or its drive ended), the engine's events (turn starts and ends, plan
proposals, goal stops), a question opening or closing, the workspace list changing. The host
wraps its listener, and the listener of pending maps a front-end built itself (the server's),
in one, so every front-end's inbox is fed the same way and no front-end feeds it by hand.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from xum.engine import events as E
from xum.host.inbox import Inbox
from xum.host.listener import HostListener
from xum.host.notifications import Notifier

if TYPE_CHECKING:
    from xum.host.pending import PendingQuestion

log = logging.getLogger("xum.host.inbox")


class InboxFeed:
    def __init__(
        self,
        inner: HostListener,
        inbox: Inbox,
        driving: Callable[[str], bool | None],
        notifier: Notifier | None = None,
    ) -> None:
        self.inner = inner
        self.inbox = inbox
        self.notifier = notifier  # fed the same calls (`xum.host.notifications`)
        # True: a drive runs in the workspace here; False: it ended; None: no host of this
        # process drives it (a sub-agent: its turn end is its drive's end).
        self.driving = driving

    async def opening(self, workspace_id: str) -> None:
        await self.inner.opening(workspace_id)

    def event(self, workspace_id: str, event: E.Event) -> None:
        self.inner.event(workspace_id, event)
        self._fed(lambda: self._event(workspace_id, event))

    def status_changed(self, workspace_id: str) -> None:
        self.inner.status_changed(workspace_id)
        self._fed(lambda: self._status(workspace_id))

    def turn_failed(self, workspace_id: str, error: Exception) -> None:
        self.inner.turn_failed(workspace_id, error)

    def question_opened(self, pending: PendingQuestion) -> None:
        self.inner.question_opened(pending)
        self._fed(lambda: self.inbox.pending_changed(pending.workspace_id))

    def question_closed(self, pending: PendingQuestion) -> None:
        self.inner.question_closed(pending)
        self._fed(lambda: self.inbox.pending_changed(pending.workspace_id))

    def workspaces_changed(self) -> None:
        self.inner.workspaces_changed()
        self._fed(self.inbox.workspaces_changed)

    def _event(self, workspace_id: str, event: E.Event) -> None:
        self.inbox.event(workspace_id, event)
        if self.notifier is not None:
            self.notifier.event(workspace_id, event)
        if isinstance(event, E.TurnEnd) and self.driving(workspace_id) is None:
            self._drive_ended(workspace_id)

    def _status(self, workspace_id: str) -> None:
        self.inbox.pending_changed(workspace_id)
        if self.driving(workspace_id) is False:
            self._drive_ended(workspace_id)

    def _drive_ended(self, workspace_id: str) -> None:
        # The notifier first: a response notice stands in for the inbox's turn-ended one.
        if self.notifier is not None:
            self.notifier.drive_ended(workspace_id)
        self.inbox.drive_ended(workspace_id)

    @staticmethod
    def _fed(call: Callable[[], None]) -> None:
        # The front-end's listener has had its call; the inbox must never break a turn.
        try:
            call()
        except Exception:
            log.exception("the inbox failed to take a host event")
