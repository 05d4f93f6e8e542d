"""The attention inbox in the terminal UI (docs/inbox.md): what waits for a person across the
workspaces this process hosts, listed over the main view (Ctrl+L).

The list is the host's inbox (`xum.host.inbox`), kept live while it is open. Enter opens the
item's workspace (its approval or question panel answers it there); `y` approves a waiting call
once, `d` denies it, `x` takes a notice off the list (or dismisses a question). Every answer goes
through the host's own answer path, so the workspace's panel goes with it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import OptionList, Static
from textual.widgets.option_list import Option

from xum.engine.display import strip_controls
from xum.host.inbox import Inbox, InboxError, InboxItem
from xum.tui.screens import SCREEN_CSS

KIND_LABEL = {
    "approval": "approval",
    "question": "question",
    "plan": "plan",
    "turn-ended": "turn ended",
    "goal-stopped": "goal stopped",
    "budget-spent": "budget spent",
    "notify": "notification",
}
KIND_STYLE = {"approval": "bold yellow", "question": "bold yellow", "plan": "bold magenta"}


def ago(since: float, now: float) -> str:
    seconds = max(0, int(now - since))
    if seconds < 60:
        return f"{seconds}s ago"
    if seconds < 3600:
        return f"{seconds // 60}m ago"
    if seconds < 86400:
        return f"{seconds // 3600}h ago"
    return f"{seconds // 86400}d ago"


def item_line(item: InboxItem, now: float) -> Text:
    # The summary and the names come from the model or the repository: controls stripped.
    line = Text()
    line.append(f"{KIND_LABEL.get(item.kind, item.kind):<13}", KIND_STYLE.get(item.kind, "bold"))
    line.append(f"{strip_controls(item.workspace.name)}", "cyan")
    line.append(f"  {ago(item.since, now)}\n", "dim")
    line.append(f"  {strip_controls(item.summary)}")
    return line


def next_waiting(items: list[InboxItem], current: str | None) -> str | None:
    """The workspace to go to next: oldest item first, each workspace once, round and round."""
    order: list[str] = []
    for item in items:
        if item.workspace_id not in order:
            order.append(item.workspace_id)
    if not order:
        return None
    at = order.index(current) if current in order else -1
    return order[(at + 1) % len(order)]


class InboxScreen(ModalScreen[str | None]):
    """Dismissed with the workspace to open, or None."""

    DEFAULT_CSS = SCREEN_CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding("y", "approve", "Approve once"),
        Binding("d", "deny", "Deny"),
        Binding("x", "dismiss_item", "Dismiss"),
    ]

    def __init__(self, inbox: Inbox) -> None:
        super().__init__()
        self.inbox = inbox
        self.shown: list[InboxItem] = []
        self._unwatch: Callable[[], None] | None = None

    def compose(self) -> ComposeResult:
        with Vertical():
            yield Static(Text("Inbox: what waits for you", style="bold"), id="inbox-title")
            yield OptionList(id="inbox-items")
            yield Static(
                Text(
                    "Enter opens the workspace · y approves once · d denies · x dismisses · "
                    "Esc or q closes",
                    style="dim",
                )
            )

    def on_mount(self) -> None:
        self._unwatch = self.inbox.watch(lambda _change, _item: self.fill())
        self.fill()
        self.query_one(OptionList).focus()

    def on_unmount(self) -> None:
        if self._unwatch is not None:
            self._unwatch()

    def fill(self) -> None:
        if not self.is_attached:
            return
        options = self.query_one(OptionList)
        highlighted = options.highlighted
        self.shown = self.inbox.items()
        now = time.time()
        options.clear_options()
        if not self.shown:
            options.add_option(Option(Text("Nothing waits for you.", style="dim"), disabled=True))
            return
        options.add_options([Option(item_line(i, now), id=i.id) for i in self.shown])
        options.highlighted = min(highlighted or 0, len(self.shown) - 1)

    def current(self) -> InboxItem | None:
        index = self.query_one(OptionList).highlighted
        if index is None or not 0 <= index < len(self.shown):
            return None
        return self.shown[index]

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        item = self.inbox.get(event.option.id or "")
        if item is not None:
            self.dismiss(item.workspace_id)

    def action_close(self) -> None:
        self.dismiss(None)

    def action_approve(self) -> None:
        self._answer(lambda item: self.inbox.approve(item.id, "once"))

    def action_deny(self) -> None:
        self._answer(lambda item: self.inbox.approve(item.id, "deny"))

    def action_dismiss_item(self) -> None:
        self._answer(lambda item: self.inbox.dismiss(item.id))

    def _answer(self, call: Callable[[InboxItem], bool]) -> None:
        item = self.current()
        if item is None:
            return
        try:
            if not call(item):
                self.notify("it no longer waits (answered already?)", severity="warning")
        except InboxError as exc:
            self.notify(str(exc), severity="error")
