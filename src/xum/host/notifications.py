"""Notifications: what a front-end should show as a desktop notification (docs/notifications.md).

Three sources, decided here once so every front-end notifies alike:

* the agent's `notify` tool (the engine's `notification` event): always;
* a workspace with "Notify on all responses" on (`notifyOnResponse` on its config.json record,
  the browser's bell, `Ctrl+Shift+,`): each time nothing more runs there after a turn that was
  not a compaction (a top-level workspace; a sub-agent reports to its parent);
* an attention inbox item (`xum.host.inbox`) of a kind listed in config.json
  `notifications.inboxKinds` (none by default), e.g. `["approval", "question"]`.

The notifier only decides and announces; front-ends watch it (`watch`) and show each `Notice`
their own way: the server sends it to the browsers that asked (`notifications-subscribe`), which
use the Notification API; the terminal UI writes the terminal's notification escape sequence.
Everything runs on the host's event loop; a watcher must not raise (a failure is logged).
"""

from __future__ import annotations

import itertools
import logging
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final

from xum.engine import events as E
from xum.host.inbox import Change, Inbox, InboxItem, WorkspaceRef
from xum.store.config import read_config, update_config

log = logging.getLogger("xum.host.notifications")

CONFIG_KEY: Final = "notifications"
KINDS_KEY: Final = "inboxKinds"
RESPONSE_KEY: Final = "notifyOnResponse"  # on a workspace's config.json record
# What an inbox item of each kind is called in a notification's title.
KIND_TITLES: Final[dict[str, str]] = {
    "approval": "Approval needed",
    "question": "Question",
    "plan": "Plan ready for review",
    "turn-ended": "Turn ended",
    "goal-stopped": "Goal stopped",
    "budget-spent": "Budget spent",
}


@dataclass(frozen=True)
class Notice:
    """One notification: where it comes from, what it says, and the workspace it opens."""

    id: str
    source: str  # "notify" (the tool), "response" (notify on all responses), or an inbox kind
    workspace_id: str
    workspace: WorkspaceRef
    title: str
    body: str | None
    since: float

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "source": self.source,
            "workspaceId": self.workspace_id,
            "workspaceName": self.workspace.name,
            "project": self.workspace.project,
            "title": self.title,
            "body": self.body,
            "since": int(self.since * 1000),
        }


NoticeWatcher = Callable[[Notice], None]


def inbox_kinds(config: Mapping[str, Any] | None = None) -> frozenset[str]:
    """The inbox kinds that notify (config.json `notifications.inboxKinds`)."""
    config = read_config() if config is None else config
    section = config.get(CONFIG_KEY)
    kinds = section.get(KINDS_KEY) if isinstance(section, Mapping) else None
    if not isinstance(kinds, list):
        return frozenset()
    return frozenset(k for k in kinds if isinstance(k, str) and k in KIND_TITLES)


def notify_on_response(workspace_id: str, config: Mapping[str, Any] | None = None) -> bool:
    """Whether the workspace has "Notify on all responses" on."""
    config = read_config() if config is None else config
    workspaces = config.get("workspaces")
    record = workspaces.get(workspace_id) if isinstance(workspaces, Mapping) else None
    return isinstance(record, Mapping) and record.get(RESPONSE_KEY) is True


def set_notify_on_response(workspace_id: str, on: bool) -> bool:
    """Store the setting on the workspace's record; False when there is no such workspace."""

    def mutate(config: dict[str, Any]) -> bool:
        workspaces = config.get("workspaces")
        record = workspaces.get(workspace_id) if isinstance(workspaces, dict) else None
        if not isinstance(record, dict):
            return False
        if on:
            record[RESPONSE_KEY] = True
        else:
            record.pop(RESPONSE_KEY, None)
        return True

    return update_config(mutate)


class Notifier:
    def __init__(
        self,
        inbox: Inbox,
        *,
        describe: Callable[[str], WorkspaceRef | None] | None = None,
    ) -> None:
        self._describe = describe or _describe
        self._watchers: list[NoticeWatcher] = []
        self._numbers = itertools.count(1)
        self._ended: dict[str, E.TurnEnd] = {}
        self._compacting: set[str] = set()
        inbox.watch(self._inbox_changed)

    def watch(self, watcher: NoticeWatcher) -> Callable[[], None]:
        """Call `watcher` with every notice; returns the way to stop."""
        self._watchers.append(watcher)
        return lambda: self._watchers.remove(watcher) if watcher in self._watchers else None

    # Fed by `xum.host.inbox_feed` ---------------------------------------------------------

    def event(self, workspace_id: str, event: E.Event) -> None:
        if isinstance(event, E.Notification):
            self._publish(workspace_id, "notify", event.title, event.message)
        elif isinstance(event, E.TurnStart):
            if event.kind == "compaction":
                self._compacting.add(workspace_id)
            else:
                self._ended.pop(workspace_id, None)
        elif isinstance(event, E.TurnEnd):
            if workspace_id in self._compacting:
                self._compacting.discard(workspace_id)
            else:
                self._ended[workspace_id] = event

    def drive_ended(self, workspace_id: str) -> None:
        """Nothing more runs in the workspace: its response is complete."""
        end = self._ended.pop(workspace_id, None)
        if end is None or not self._watchers or not notify_on_response(workspace_id):
            return
        ref = self._describe(workspace_id)
        if ref is not None and ref.parent_id is not None:
            return
        self._publish(workspace_id, "response", _response_title(end), _response_body(end))

    def forget(self, workspace_id: str) -> None:
        self._ended.pop(workspace_id, None)
        self._compacting.discard(workspace_id)

    # Inside -----------------------------------------------------------------------------

    def _inbox_changed(self, change: Change, item: InboxItem) -> None:
        if change != "added" or not self._watchers or item.kind not in inbox_kinds():
            return
        if item.kind == "turn-ended" and notify_on_response(item.workspace_id):
            return  # the response notice says it already
        self._publish(item.workspace_id, item.kind, KIND_TITLES[item.kind], item.summary)

    def _publish(self, workspace_id: str, source: str, title: str, body: str | None) -> None:
        if not self._watchers:
            return
        ref = self._describe(workspace_id) or WorkspaceRef(workspace_id, "")
        notice = Notice(
            id=f"notice-{next(self._numbers)}",
            source=source,
            workspace_id=workspace_id,
            workspace=ref,
            title=title,
            body=body,
            since=time.time(),
        )
        for watcher in list(self._watchers):
            try:
                watcher(notice)
            except Exception:
                log.exception("a notification watcher failed")


def _response_title(end: E.TurnEnd) -> str:
    if end.reason == "error":
        return "Response failed"
    if end.reason == "interrupted":
        return "Response interrupted"
    return "Response complete"


def _response_body(end: E.TurnEnd) -> str | None:
    if end.reason == "error":
        error = end.error or {}
        message = error.get("message")
        return str(message) if message else None
    if end.reason in ("max_steps", "doom_loop", "budget"):
        return f"the turn stopped ({end.reason.replace('_', ' ')})"
    return None


def _describe(workspace_id: str) -> WorkspaceRef | None:
    from xum.store import registry

    record = registry.get_workspace(workspace_id)
    if record is None:
        return None
    return WorkspaceRef(record.name, record.project_path, record.parent_id)
