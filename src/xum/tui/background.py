"""The background processes of the workspace on screen (F12): what runs, since when, its last
lines, and stop. The same list as the browser's strip, read from the workspace's host
(`xum.host.background`); refreshed every second while it is shown. Up and Down move, Enter
shows or hides the highlighted process's last lines, Backspace (or s) stops it (an explicit
stop: its monitor wakes nobody), Esc or q closes."""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from xum.engine.display import strip_controls
from xum.tui.screens import SCREEN_CSS

if TYPE_CHECKING:
    from xum.tui.runner import Runner, Workspace

Rows = Callable[[], list[dict[str, Any]] | None]
Stop = Callable[[str], Awaitable[object]]

REFRESH_S = 1.0


def background_text(
    name: str, rows: list[dict[str, Any]] | None, selected: int, opened: set[str]
) -> Text:
    text = Text()
    text.append(f"Background processes: {strip_controls(name)}\n\n", style="bold")
    if rows is None:
        text.append(
            "This workspace's session is not open here (another process, such as `xum server`, "
            "may run it): its background processes are listed where it runs.\n",
            style="dim",
        )
        return text
    if not rows:
        text.append("No background processes: the agent started none in this session.\n", "dim")
        return text
    for index, row in enumerate(rows):
        mark = "›" if index == selected else " "
        running = row["status"] == "running"
        text.append(f"{mark} ", style="bold cyan")
        text.append("● " if running else "○ ", style="green" if running else "dim")
        text.append(strip_controls(str(row["display_name"])), style="bold")
        status = str(row["status"])
        if row.get("exit_code") is not None and not running:
            status += f" (exit {row['exit_code']})"
        if row.get("monitored"):
            status += " · watched"
        started = time.strftime("%H:%M:%S", time.localtime(row["started_at"] / 1000))
        text.append(f"  {status} · since {started}\n", style="dim")
        script = strip_controls(str(row["script"]).replace("\n", " "))
        text.append(f"    {script[:96]}\n", style="dim")
        lines = [strip_controls(str(line)) for line in row.get("last_lines") or []]
        if row["process_id"] in opened:
            for line in lines or ["(no output yet)"]:
                text.append(f"    │ {line}\n")
        elif lines:
            text.append(f"    │ {lines[-1]}\n", style="dim")
    return text


class BackgroundScreen(ModalScreen[None]):
    DEFAULT_CSS = SCREEN_CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,f12", "close", "Close"),
        Binding("down", "move(1)", "Down", show=False),
        Binding("up", "move(-1)", "Up", show=False),
        Binding("enter", "open", "Output"),
        Binding("backspace,s", "stop", "Stop"),
    ]

    def __init__(self, name: str, rows: Rows, stop: Stop) -> None:
        super().__init__()
        self.workspace_name = name
        self._rows = rows
        self._stop = stop
        self.shown: list[dict[str, Any]] | None = None
        self.selected = 0
        self.opened: set[str] = set()

    @classmethod
    def of(cls, runner: Runner, ws: Workspace) -> BackgroundScreen:
        """The list of `ws`'s processes, read from and stopped through the UI's hosts."""
        workspace_id = ws.id
        return cls(
            ws.record.name,
            lambda: runner.background_rows(workspace_id),
            lambda pid: runner.stop_background(workspace_id, pid),
        )

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(id="background")
            yield Static(
                Text("↑/↓ move · Enter output · Backspace stops · Esc or q closes", style="dim")
            )

    def on_mount(self) -> None:
        self.refresh_rows()
        self.set_interval(REFRESH_S, self.refresh_rows)

    def refresh_rows(self) -> None:
        rows = self._rows()
        # Newest first: what was just started is what one looks for.
        self.shown = list(reversed(rows)) if rows is not None else None
        count = len(self.shown or [])
        self.selected = max(0, min(self.selected, count - 1))
        text = background_text(self.workspace_name, self.shown, self.selected, self.opened)
        self.query_one("#background", Static).update(text)

    def _current(self) -> dict[str, Any] | None:
        if not self.shown:
            return None
        return self.shown[self.selected]

    def action_move(self, step: int) -> None:
        self.selected += step
        self.refresh_rows()

    def action_open(self) -> None:
        row = self._current()
        if row is not None:
            self.opened ^= {row["process_id"]}
            self.refresh_rows()

    async def action_stop(self) -> None:
        row = self._current()
        if row is None or row["status"] != "running":
            return
        await self._stop(str(row["process_id"]))
        self.refresh_rows()

    def action_close(self) -> None:
        self.dismiss(None)
