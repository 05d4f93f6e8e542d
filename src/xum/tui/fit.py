"""What the terminal's size decides: whether the workspace list is shown, and where the
"more below" hint sits.

Below `NARROW` columns the list starts hidden, so the transcript gets the width; a resize
shows or hides it again until the user decides (Ctrl+O), after which the width no longer
does. Ctrl+B on a hidden list shows it to pick from, and leaving it (Enter or Esc) hides it
again.

The hint is an overlay on the transcript's last row, right-aligned by an offset worked out
from the width: showing it does not shorten the transcript, so PageDown lands on the end.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.widgets import Static

if TYPE_CHECKING:
    from xum.tui.app import XumApp

MORE_BELOW = "↓ more below · PageDown"
NARROW = 100  # columns


class MoreBelow(Static):
    DEFAULT_CSS = """
    MoreBelow { overlay: screen; height: 1; width: auto; padding: 0 1; background: $panel; }
    MoreBelow.hidden { display: none; }
    """

    def __init__(self) -> None:
        super().__init__(MORE_BELOW, id="more-below", classes="hidden")


class Fit:
    def __init__(self, app: XumApp) -> None:
        self.app = app
        self.chosen = False  # the user showed or hid the list: the width no longer does
        self.peek = False  # Ctrl+B showed the hidden list: it hides again when left

    def start(self) -> None:
        app = self.app
        app.sidebar.set_class(app.size.width < NARROW, "hidden")
        app.watch(app.transcript_view, "more_below", self._more_below)

    @property
    def list_hidden(self) -> bool:
        return self.app.sidebar.has_class("hidden")

    def toggle(self) -> None:
        self.chosen, self.peek = True, False
        self._show(self.list_hidden)

    def show_to_pick(self) -> None:
        if self.list_hidden:
            self.peek = True
            self._show(True)

    def picked(self) -> None:
        """The user left the list: a list shown only to pick from hides again."""
        if self.peek:
            self.peek = False
            self._show(False)

    def resized(self, width: int) -> None:
        app = self.app
        if not self.chosen and not self.peek:
            app.sidebar.set_class(width < NARROW, "hidden")
        app.call_after_refresh(app.redraw_bar)  # it fits the status line to the width
        app.call_after_refresh(self._place_hint)

    def _show(self, shown: bool) -> None:
        app = self.app
        app.sidebar.set_class(not shown, "hidden")
        app.redraw_bar()  # the status line names Ctrl+O while the list is hidden
        app.call_after_refresh(self._place_hint)

    def _more_below(self, more: bool) -> None:
        self.app.query_one("#more-below").set_class(not more, "hidden")
        self._place_hint()

    def _place_hint(self) -> None:
        app = self.app
        width = app.query_one("#main").size.width
        # Left of the transcript's scrollbar (two cells) and the padding beside it.
        offset = max(width - Text(MORE_BELOW).cell_len - 5, 0)
        app.query_one("#more-below").styles.offset = (offset, -1)
