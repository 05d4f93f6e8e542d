"""Full screens over the main view: the key help (`?`, F1) and the review of a workspace's diff
(Ctrl+R). Both close with Esc or q."""

from __future__ import annotations

from typing import ClassVar

from rich.console import Group
from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from xum.core.errors import XumError
from xum.engine.display import strip_controls
from xum.store.registry import WorkspaceRecord
from xum.tui.cards import diff_text
from xum.tui.keys import KEYS
from xum.workspaces.review import Review

SCREEN_CSS = """
ModalScreen { align: center middle; }
ModalScreen > VerticalScroll {
    width: 100; max-width: 100%; height: 100%; max-height: 100%;
    border: round $accent; background: $surface; padding: 0 1;
}
"""

REVIEW_DIFF_LINES = 5000


def help_text() -> Text:
    text = Text("Keys\n", style="bold")
    area = ""
    for key in KEYS:
        if key.area != area:
            area = key.area
            text.append(f"\n{area}\n", style="bold underline")
        text.append(f"  {key.keys:<24}", style="bold cyan")
        text.append(key.action + "\n")
    text.append("\nEsc or q closes this screen.", style="dim")
    return text


class HelpScreen(ModalScreen[None]):
    DEFAULT_CSS = SCREEN_CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q,question_mark,f1", "close", "Close"),
    ]

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(help_text(), id="help")

    def action_close(self) -> None:
        self.dismiss(None)


def review_text(name: str, review: Review) -> Group:
    head = Text()
    head.append(f"Review: {strip_controls(name)}\n", style="bold")
    if not review.is_git:
        head.append("This workspace is not a git checkout: there is no diff to review.")
        return Group(head)
    head.append(f"branch {strip_controls(review.branch or '(detached)')}")
    if review.base is not None:
        head.append(f" · base {strip_controls(review.base.ref)} ({review.base.sha[:10]})")
        head.append(f" · {review.ahead} ahead, {review.behind} behind")
    head.append("\n")
    files = Text()
    if review.files:
        adds = sum(f.additions for f in review.files)
        dels = sum(f.deletions for f in review.files)
        files.append(f"\n{len(review.files)} files changed, ", style="bold")
        files.append(f"+{adds}", style="green")
        files.append(" ")
        files.append(f"-{dels}\n", style="red")
        for f in review.files:
            mark = "?" if f.untracked else "b" if f.binary else "M"
            files.append(f"  {mark} ")
            files.append(f"+{f.additions}".rjust(6), style="green")
            files.append(f"-{f.deletions}".rjust(6), style="red")
            files.append(f"  {strip_controls(f.path)}\n")
    else:
        files.append("\nNo changes against the base.\n", style="dim")
    parts: list[Text] = [head, files]
    if review.diff:
        parts.append(diff_text(review.diff, REVIEW_DIFF_LINES))
    if review.truncated:
        parts.append(Text("\n(the diff is cut here: it is larger than the review shows)", "dim"))
    return Group(*parts)


class ReviewScreen(ModalScreen[None]):
    DEFAULT_CSS = SCREEN_CSS
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape,q", "close", "Close"),
        Binding("r", "reload", "Reload"),
    ]

    def __init__(self, name: str, review: Review) -> None:
        super().__init__()
        self.workspace_name = name
        self.review = review

    def compose(self) -> ComposeResult:
        with VerticalScroll():
            yield Static(review_text(self.workspace_name, self.review), id="review")
            yield Static(Text("Esc or q closes · r reloads", style="dim"))

    def action_close(self) -> None:
        self.dismiss(None)

    async def action_reload(self) -> None:
        self.dismiss(None)
        await self.app.run_action("review")


async def show_review(app: App[None], record: WorkspaceRecord) -> None:
    """Review the workspace of `record` (git runs where its checkout is: on the SSH host, in the
    container), or say why it cannot be read."""
    from xum.runtime.ssh import SshError
    from xum.workspaces.review import review

    try:
        found = await review(record)
    except SshError as exc:
        app.notify(f"cannot run git on {record.host}: {exc}", severity="error", markup=False)
        return
    except XumError as exc:
        said = exc.message + (f" ({exc.hint})" if exc.hint else "")
        app.notify(said, severity="error", markup=False)
        return
    app.push_screen(ReviewScreen(record.name, found))
