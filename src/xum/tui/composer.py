"""The composer: where a message is written, with history and completion.

Enter sends (while a turn runs the message is queued after the current step), Ctrl+T sends it
for after the turn, Ctrl+J starts a new line in every terminal; Shift+Enter and Alt+Enter do too
where the terminal reports them apart from Enter (terminals speaking the kitty keyboard
protocol, which Textual asks for; elsewhere, tmux included, both arrive as a plain Enter). Up and
Down on the first or last line walk the history of sent messages (kept across runs, per project:
`xum.tui.history`). A `/` at the start offers the workspace's slash
commands and skills (from the same registry the server uses, `xum.context.slash`); `@` offers
file paths of the workspace. Tab or Enter takes the highlighted suggestion, Esc closes the list.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from rich.text import Text
from textual import events
from textual.message import Message
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option

from xum.engine.display import strip_controls
from xum.tui.history import HISTORY

MAX_SUGGESTIONS = 12


@dataclass(frozen=True)
class Suggestion:
    insert: str  # what replaces the word being completed
    label: str
    detail: str = ""


# (text, cursor offset in text) -> the start of the word being completed and the suggestions
Completer = Callable[[str, int], tuple[int, list[Suggestion]]]


class Suggestions(OptionList):
    """The completion list above the composer (shown only while it has entries)."""

    DEFAULT_CSS = """
    Suggestions { height: auto; max-height: 8; display: none; border: none; padding: 0 1; }
    Suggestions.open { display: block; }
    """
    can_focus = False

    def __init__(self) -> None:
        super().__init__(id="suggestions")
        self.items: list[Suggestion] = []
        self.start = 0

    def offer(self, start: int, items: Sequence[Suggestion]) -> None:
        self.items, self.start = list(items[:MAX_SUGGESTIONS]), start
        self.clear_options()
        for item in self.items:
            label = Text(strip_controls(item.label), style="bold")
            if item.detail:
                label.append("  " + strip_controls(item.detail), style="dim")
            self.add_option(Option(label))
        self.set_class(bool(self.items), "open")
        if self.items:
            self.highlighted = 0

    def close(self) -> None:
        self.offer(0, [])

    @property
    def is_open(self) -> bool:
        return bool(self.items)

    def chosen(self) -> Suggestion | None:
        index = self.highlighted
        return self.items[index] if self.items and index is not None else None


class Composer(TextArea):
    """A multi-line input that sends on Enter."""

    DEFAULT_CSS = """
    Composer { height: auto; min-height: 3; max-height: 10; border: tall $panel; }
    Composer:focus { border: tall $accent; }
    """

    class Submitted(Message):
        def __init__(self, text: str, when: str) -> None:
            super().__init__()
            self.text = text
            self.when = when

    class Interrupt(Message):
        """Esc with nothing to close: stop the running turn."""

    def __init__(self, suggestions: Suggestions, *, id: str | None = None) -> None:
        super().__init__("", soft_wrap=True, show_line_numbers=False, tab_behavior="focus", id=id)
        self.suggestions = suggestions
        self.sent: list[str] = []
        self._browsing: int | None = None  # index into history while walking it
        self._draft = ""
        self.completer: Completer | None = None

    # Keys ---------------------------------------------------------------------------------

    async def _on_key(self, event: events.Key) -> None:
        key = event.key
        menu = self.suggestions
        handled = True
        if menu.is_open and key in ("up", "down"):
            menu.action_cursor_up() if key == "up" else menu.action_cursor_down()
        elif menu.is_open and key in ("tab", "enter"):
            self._accept()
        elif key == "escape":
            if menu.is_open:
                menu.close()
            else:
                self.post_message(self.Interrupt())
        elif key == "enter":
            self._submit("step")
        elif key == "ctrl+t":
            self._submit("turn")
        elif key in ("shift+enter", "alt+enter", "ctrl+j"):
            self.insert("\n")
        elif key == "up" and self.cursor_location[0] == 0 and self.sent:
            self._walk(-1)
        elif key == "down" and self._browsing is not None and self._on_last_line():
            self._walk(1)
        else:
            handled = False
        if handled:
            event.stop()
            event.prevent_default()
            return
        await super()._on_key(event)

    def _on_last_line(self) -> bool:
        return self.cursor_location[0] >= self.document.line_count - 1

    def _submit(self, when: str) -> None:
        text = self.text
        if not text.strip():
            return
        if not self.sent or self.sent[-1] != text:
            self.sent = [*self.sent, text][-HISTORY:]
        self._browsing = None
        self.clear()
        self.suggestions.close()
        self.post_message(self.Submitted(text, when))

    def _walk(self, step: int) -> None:
        if self._browsing is None:
            if step > 0:
                return
            self._draft = self.text
            index = len(self.sent) - 1
        else:
            index = self._browsing + step
        if index < 0:
            return
        if index >= len(self.sent):
            self._browsing = None
            self._set(self._draft)
            return
        self._browsing = index
        self._set(self.sent[index])

    def _set(self, text: str) -> None:
        self.load_text(text)
        last = self.document.line_count - 1
        self.move_cursor((last, len(self.document.get_line(last))))

    def put_back(self, texts: Sequence[str]) -> None:
        """Messages handed back (an interrupt took them from the queue) go before the draft."""
        if not texts:
            return
        joined = "\n\n".join([*texts, self.text] if self.text.strip() else texts)
        self._set(joined)

    # Completion ---------------------------------------------------------------------------

    def _on_text_area_changed(self, _event: TextArea.Changed) -> None:
        self._complete()

    def _on_text_area_selection_changed(self, _event: TextArea.SelectionChanged) -> None:
        self._complete()  # the cursor left the word (or moved into another one)

    def _complete(self) -> None:
        if self.completer is None:
            return
        offset = self._offset()
        start, items = self.completer(self.text, offset)
        if items:
            self.suggestions.offer(start, items)
        else:
            self.suggestions.close()

    def _offset(self) -> int:
        row, col = self.cursor_location
        lines = self.text.split("\n")
        return sum(len(line) + 1 for line in lines[:row]) + col

    def _accept(self) -> None:
        item = self.suggestions.chosen()
        if item is None:
            return
        text, offset = self.text, self._offset()
        end = offset
        while end < len(text) and not text[end].isspace():
            end += 1
        start = self.suggestions.start
        new = text[:start] + item.insert + text[end:]
        self.suggestions.close()
        self.load_text(new)
        cursor = start + len(item.insert)
        before = new[:cursor].split("\n")
        self.move_cursor((len(before) - 1, len(before[-1])))
