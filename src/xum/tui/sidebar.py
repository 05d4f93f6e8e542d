"""The workspaces of the project, each with its status dot.

The first row is the new workspace the composer starts on (a message there creates a local
workspace, as `xum` does when it opens). Dots differ in shape as well as colour, so they read
without colour too (`NO_COLOR`): ○ idle, ● working, ◆ needs input, • unread, ✗ error.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import ClassVar

from rich.text import Text
from textual.binding import Binding, BindingType
from textual.widgets import Label, ListItem, ListView

from xum.engine.display import strip_controls
from xum.tui.runner import Status, Workspace

DOTS: dict[Status, tuple[str, str]] = {
    "idle": ("○", "dim"),
    "working": ("●", "yellow"),
    "waiting": ("◆", "magenta"),
    "unread": ("•", "cyan"),
    "error": ("✗", "red"),
}


def row_text(ws: Workspace) -> Text:
    dot, style = DOTS[ws.status]
    text = Text(f"{dot} ", style=style)
    record = ws.record
    if "task_depth" in record.extra:  # a sub-agent's workspace
        text.append("↳ ", style="dim")
    text.append(strip_controls(record.name))
    if record.extra.get("scratch") is True and record.parent_id is None:
        text.append(" chat", style="dim")  # a scratch chat: no project, its own folder
    elif record.runtime != "local":
        text.append(f" {record.runtime}", style="dim")
    if record.title:
        text.append("\n  " + " ".join(strip_controls(record.title).split())[:60], style="dim")
    return text


class WorkspaceItem(ListItem):
    def __init__(self, ws: Workspace | None) -> None:
        self.workspace = ws
        # Kept: a redraw may come before the item is mounted (a list refilled mid-turn).
        self.label = Label(self._text())
        super().__init__(self.label)

    def _text(self) -> Text:
        if self.workspace is None:
            return Text("+ new workspace", style="bold")
        return row_text(self.workspace)

    def redraw(self) -> None:
        self.label.update(self._text())


class Sidebar(ListView):
    """The workspace list, with its own keys (they act on the highlighted workspace)."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("n", "app.new_workspace", "New"),
        Binding("f", "app.fork", "Fork"),
        Binding("r", "app.rename", "Rename"),
        Binding("a", "app.archive", "Archive"),
        Binding("u", "app.unarchive", "Unarchive"),
        Binding("d", "app.delete", "Delete"),
        Binding("escape", "app.focus_composer", "Composer"),
    ]
    DEFAULT_CSS = """
    Sidebar { width: 30; border-right: solid $panel-lighten-2; }
    Sidebar > ListItem { padding: 0 1; }
    Sidebar.hidden { display: none; }
    """

    def __init__(self) -> None:
        super().__init__(id="sidebar")
        self._items: dict[str, WorkspaceItem] = {}
        # Two refills at once (a fork's reload beside a turn's) would interleave their clears
        # and mounts: every row twice, and the highlight on the wrong one. One at a time.
        self._filling = asyncio.Lock()

    async def fill(self, workspaces: list[Workspace], selected: Callable[[], str | None]) -> None:
        """Show these workspaces (newest first) and highlight the one `selected()` names when
        they are in place (None: the new row)."""
        async with self._filling:
            await self.clear()
            self._items = {}
            if not self.is_attached:  # the app began to exit meanwhile: nothing can be mounted
                return
            items = [WorkspaceItem(None)]
            for ws in workspaces:
                item = WorkspaceItem(ws)
                self._items[ws.id] = item
                items.append(item)
            await self.extend(items)
            self.highlight(selected())

    def highlight(self, workspace_id: str | None) -> None:
        ids = [None, *self._items]
        if workspace_id in ids:
            self.index = ids.index(workspace_id)

    def redraw(self, ws: Workspace) -> None:
        item = self._items.get(ws.id)
        if item is not None:
            item.workspace = ws
            item.redraw()

    @property
    def ids(self) -> list[str | None]:
        return [None, *self._items]
