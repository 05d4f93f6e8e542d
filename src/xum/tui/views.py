"""The transcript on screen: one widget per entry of the selected workspace's `Transcript`.

Events arrive much faster than a terminal needs frames (a reply streams dozens of deltas a
second, a command its output), so changes are collected and drawn together at most
`FRAME_S` apart: a reply's Markdown grows by what arrived since the last frame (Textual's
`Markdown.append` re-parses only the last block), a card is redrawn once per frame whatever
number of events changed it. Only the workspace on screen is drawn; the others just fold their
events into their transcripts, which is cheap, and are drawn when selected (the newest
`SHOWN_ENTRIES` entries).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.reactive import reactive
from textual.widget import Widget
from textual.widgets import Static

from xum.engine.display import strip_controls
from xum.tui import cards
from xum.tui.transcript import (
    AssistantEntry,
    Change,
    Entry,
    ErrorEntry,
    InitEntry,
    NoticeEntry,
    PlanEntry,
    TaskEntry,
    ToolEntry,
    Transcript,
    UserEntry,
)

if TYPE_CHECKING:
    # Imported with the first reply or plan drawn (markdown-it and Pygments come with them):
    # the first frame of a new workspace needs neither.
    from textual.widgets import Collapsible, Markdown

FRAME_S = 1 / 20
SHOWN_ENTRIES = 300


class UserView(Static):
    def __init__(self, entry: UserEntry) -> None:
        super().__init__(classes="user")
        self.redraw(entry)

    def redraw(self, entry: Entry) -> None:
        assert isinstance(entry, UserEntry)
        text = Text("› ", style="bold")
        text.append(strip_controls(entry.text))
        if entry.queued:
            text.append("  (queued)", style="dim")
        self.update(text)


class ReplyView(Vertical):
    """An assistant reply: its reasoning collapsed, its text as streamed Markdown.

    The text reaches the Markdown widget one operation at a time (`_catch_up`): Textual's
    `Markdown.append` works out where the last block starts when it is called, so a second
    append issued before the first one is drawn re-parses from a stale line and draws blocks
    twice (a table, typically). The first text is appended to an empty widget too, not passed
    to its constructor: `Markdown.update` guesses the last block starts on the last line, which
    is wrong for a table or a code block still streaming."""

    def __init__(self, entry: AssistantEntry) -> None:
        super().__init__(classes="reply")
        self._shown = ""  # what the Markdown widget has drawn (or is drawing)
        self._entry = entry
        self._reasoning: Static | None = None
        self._markdown: Markdown | None = None
        self._catching_up = False

    def compose(self) -> ComposeResult:
        from textual.widgets import Markdown

        entry = self._entry
        if entry.reasoning:
            yield self._reasoning_box(entry.reasoning)
        self._markdown = Markdown(open_links=False)
        yield self._markdown

    def on_mount(self) -> None:
        self._catch_up_soon()

    def _reasoning_box(self, text: str) -> Collapsible:
        from textual.widgets import Collapsible

        self._reasoning = Static(cards.plain(text), classes="reasoning")
        return Collapsible(self._reasoning, title="Reasoning", collapsed=True)

    def redraw(self, entry: Entry) -> None:
        assert isinstance(entry, AssistantEntry)
        self._entry = entry
        if not (self.is_mounted and self.is_attached) or self._markdown is None:
            return
        if entry.reasoning:
            if self._reasoning is None:
                self.mount(self._reasoning_box(entry.reasoning), before=self._markdown)
            else:
                self._reasoning.update(cards.plain(entry.reasoning))
        self._catch_up_soon()
        self.set_class(entry.interrupted, "interrupted")

    def _catch_up_soon(self) -> None:
        if not self._catching_up and strip_controls(self._entry.text) != self._shown:
            self._catching_up = True
            self.run_worker(self._catch_up(), group="markdown")

    async def _catch_up(self) -> None:
        """Bring the Markdown widget to the entry's text, one awaited operation at a time."""
        from textual.widget import MountError

        try:
            while self._markdown is not None and self.is_attached:
                if not self._markdown.is_mounted:
                    # This view's Mount can be handled before its Markdown child's (a busy
                    # machine): appending now would fail. Look again after the next refresh.
                    self.call_after_refresh(self._catch_up_soon)
                    break
                text = strip_controls(self._entry.text)
                if text == self._shown:
                    break
                if text.startswith(self._shown):
                    await self._markdown.append(text[len(self._shown) :])
                else:  # the committed text differs from what streamed: draw it again
                    await self._markdown.update("")
                    await self._markdown.append(text)
                self._shown = text
        except MountError:
            if self.is_attached:
                raise
            # The app began to exit while the blocks were being mounted: nothing to draw.
        finally:
            self._catching_up = False


class CardView(Static):
    """A tool call, a notice, a sub-agent task or the init hook: one Rich renderable."""

    def __init__(self, entry: Entry) -> None:
        super().__init__(classes=_card_class(entry))
        self.redraw(entry)

    def redraw(self, entry: Entry) -> None:
        if isinstance(entry, ToolEntry):
            self.update(cards.tool_card(entry))
            self.set_class(entry.state == "done" and entry.is_error, "failed")
        elif isinstance(entry, NoticeEntry):
            self.update(cards.notice(entry))
        elif isinstance(entry, TaskEntry):
            self.update(cards.task_card(entry))
        elif isinstance(entry, InitEntry):
            self.update(cards.init_card(entry))
        elif isinstance(entry, ErrorEntry):
            text = Text("✗ ", style="bold red")
            text.append(strip_controls(entry.message), style="red")
            if entry.hint:
                text.append("\n  hint: " + strip_controls(entry.hint), style="dim")
            if entry.retry:
                text.append("\n  F5 sends the message again", style="dim")
            self.update(text)


class PlanView(Vertical):
    """A proposed plan, rendered; Ctrl+G carries it out in Exec."""

    def __init__(self, entry: PlanEntry) -> None:
        super().__init__(classes="plan")
        self._entry = entry

    def compose(self) -> ComposeResult:
        from textual.widgets import Markdown

        entry = self._entry
        head = Text("▣ plan proposed", style="bold")
        if entry.path:
            head.append("  " + strip_controls(entry.path), style="dim")
        yield Static(head)
        if entry.content is None:
            yield Static(Text("(too large to show here; open the file)", style="dim"))
        else:
            yield Markdown(strip_controls(entry.content), open_links=False)
        hint = "Ctrl+G: switch to Exec and carry out this plan · or type to revise it"
        yield Static(Text(hint, style="dim"))

    def redraw(self, entry: Entry) -> None:
        return None


def _card_class(entry: Entry) -> str:
    if isinstance(entry, ToolEntry):
        return "card tool"
    if isinstance(entry, ErrorEntry):
        return "card error"
    if isinstance(entry, NoticeEntry):
        return "card notice"
    return "card"


EntryWidget = UserView | ReplyView | CardView | PlanView


def make_view(entry: Entry) -> EntryWidget:
    if isinstance(entry, UserEntry):
        return UserView(entry)
    if isinstance(entry, AssistantEntry):
        return ReplyView(entry)
    if isinstance(entry, PlanEntry):
        return PlanView(entry)
    return CardView(entry)


class TranscriptView(VerticalScroll):
    """The selected workspace's transcript, drawn incrementally.

    It follows the end (Textual's scroll anchoring: new content, a reply's Markdown growing
    included, keeps the bottom in view) until the user scrolls up; scrolling back to the
    bottom follows again. `more_below` says whether there is content under the visible part
    (the app shows a hint)."""

    DEFAULT_CSS = """
    TranscriptView { height: 1fr; padding: 0 1; }
    TranscriptView > .user { margin-top: 1; text-style: bold; }
    TranscriptView > .reply { height: auto; }
    TranscriptView > .reply Markdown { margin: 0; padding: 0; }
    TranscriptView > .card { margin-top: 1; }
    TranscriptView > .tool { border-left: outer $secondary; padding-left: 1; }
    TranscriptView > .tool.failed { border-left: outer $error; }
    TranscriptView > .error { border-left: outer $error; padding-left: 1; }
    TranscriptView > .notice { margin-top: 0; }
    TranscriptView > .plan { height: auto; border: round $accent; padding: 0 1; margin-top: 1; }
    TranscriptView Collapsible { padding: 0; margin: 0; border: none; }
    TranscriptView .reasoning { color: $text-muted; }
    TranscriptView > .earlier { color: $text-muted; }
    """

    can_focus = True
    more_below: reactive[bool] = reactive(False)

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.transcript: Transcript | None = None
        self._views: dict[int, EntryWidget] = {}
        self._order: list[Change] = []
        self._scheduled = False

    def on_mount(self) -> None:
        self.anchor()

    def show(self, transcript: Transcript | None) -> None:
        """Draw `transcript` from scratch (another workspace was selected)."""
        self.transcript = transcript
        self._order.clear()
        self._views.clear()
        if not self.is_attached:  # the app is exiting: nothing can be mounted any more
            return
        self.remove_children()
        if transcript is None:
            return
        entries = transcript.entries[-SHOWN_ENTRIES:]
        widgets: list[Widget] = []
        if len(transcript) > len(entries):
            earlier = f"… {len(transcript) - len(entries)} earlier entries are not shown"
            widgets.append(Static(Text(earlier), classes="earlier"))
        for entry in entries:
            view = make_view(entry)
            self._views[entry.id] = view
            widgets.append(view)
        self.mount_all(widgets)
        self.anchor()  # a workspace opens on its end, following it

    def apply(self, changes: Iterable[Change]) -> None:
        """Note changes of the transcript on screen; they are drawn with the next frame."""
        for change in changes:
            self._order.append(change)
        if not self._scheduled:
            self._scheduled = True
            self.set_timer(FRAME_S, self._flush)

    def _flush(self) -> None:
        self._scheduled = False
        if not self.is_attached:
            # The app is exiting (a turn's last events come while it stops): nothing more
            # can be mounted, and nothing needs to be.
            self._order.clear()
            return
        order, self._order = self._order, []
        redraw: dict[int, Entry] = {}
        for change in order:
            entry = change.entry
            if change.kind == "add":
                if entry.id not in self._views:
                    view = make_view(entry)
                    self._views[entry.id] = view
                    self.mount(view)
            elif change.kind == "remove":
                view_ = self._views.pop(entry.id, None)
                redraw.pop(entry.id, None)
                if view_ is not None:
                    view_.remove()
            else:
                redraw[entry.id] = entry
        for entry_id, entry in redraw.items():
            existing = self._views.get(entry_id)
            if existing is not None:
                existing.redraw(entry)

    # Whether there is more below ---------------------------------------------------------
    # Anchored scrolling is set during layout without calling watchers, so the check runs
    # after each refresh that may have moved or grown the view.

    def watch_scroll_y(self, old_value: float, new_value: float) -> None:
        super().watch_scroll_y(old_value, new_value)
        self.call_after_refresh(self._note_more_below)

    def watch_virtual_size(self) -> None:
        self.call_after_refresh(self._note_more_below)

    def on_resize(self) -> None:
        self.call_after_refresh(self._note_more_below)

    def _note_more_below(self) -> None:
        # An anchored view shorter than its content's end scrolls to a negative offset.
        self.more_below = self.max_scroll_y - max(self.scroll_y, 0) >= 1
