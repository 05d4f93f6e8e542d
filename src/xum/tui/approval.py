"""A tool call that waits for the user's approval, decided in place above the composer.

The panel shows what would run (the command, or the path of an edit outside the workspace),
why it asks, and the model's own reason for a sandbox escalation. Three answers, as in the
browser: approve once, always allow (the command's prefix, in this project; offered only when one
prefix covers it), or deny, with an optional reason the model is told. The reason field has the
focus, so a stray Enter denies rather than runs; Ctrl+Y approves once.

Everything shown comes from the model or the repository: it is drawn as plain text (no markup),
with control characters removed.
"""

from __future__ import annotations

from typing import ClassVar

from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Button, Input, Static, TextArea

from xum.engine import events as E
from xum.engine.display import strip_controls
from xum.workspaces.safety.approvals import ApprovalAnswer

SUBJECT_MAX_CHARS = 2_000  # a long script is cut on screen; the whole of it is in the log

KIND_TITLES = {
    "critical": "A critical command waits for you",
    "escalation": "A command asks to run outside the sandbox",
    "command": "A command outside the allowlist waits for you",
    "write": "A file edit outside the workspace waits for you",
    "mcp": "An MCP tool not marked read-only waits for you",
}


class Details(VerticalScroll):
    """What would run and why: the part of the panel that scrolls when it is long, so the
    buttons under it stay on screen (Tab reaches it; the arrows scroll it)."""

    DEFAULT_CSS = """
    Details { height: auto; max-height: 20vh; }
    Details .subject { background: $panel; padding: 0 1; }
    """


class ApprovalPanel(Vertical):
    # Sizes in `vh` (the terminal's height), not `%`: the panel sits in a slot as tall as its
    # content, so a percentage of the slot cut the panel's own bottom off, buttons and all.
    DEFAULT_CSS = """
    ApprovalPanel { height: auto; border: round $error; padding: 0 1; }
    ApprovalPanel .hint { color: $text-muted; }
    ApprovalPanel Horizontal { height: auto; }
    ApprovalPanel Button { margin-right: 1; min-width: 10; }
    """
    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("ctrl+y", "decide('once')", "Approve once", priority=True)
    ]

    class Decided(Message):
        def __init__(self, panel: ApprovalPanel, answer: ApprovalAnswer) -> None:
            super().__init__()
            self.panel = panel
            self.answer = answer

    def __init__(self, request: E.ApprovalRequest) -> None:
        super().__init__(id="approval")
        self.request = request

    def compose(self) -> ComposeResult:
        r = self.request
        yield Static(Text(KIND_TITLES.get(r.kind, "A tool call waits for you"), style="bold"))
        subject = strip_controls(r.subject)
        if len(subject) > SUBJECT_MAX_CHARS:
            subject = subject[:SUBJECT_MAX_CHARS] + " …"
        with Details():
            yield Static(Text(f"{r.tool}: {subject}"), classes="subject")
            yield Static(Text(f"Why: {strip_controls(r.why)}"))
            if r.reason:
                yield Static(Text(f"The agent's reason: {strip_controls(r.reason)}"))
        with Horizontal():
            yield Button("Approve once", id="approve-once", variant="warning")
            if r.prefix:
                label = f"Always allow {strip_controls(r.prefix)!r} here"
                yield Button(Text(label), id="approve-always")
            yield Button("Deny", id="deny", variant="error")
        yield Input(placeholder="Reason for denying (optional; Enter denies)", id="deny-reason")
        yield Static(
            "Ctrl+Y approves once · Tab, Shift+Tab move · Enter in the reason field denies",
            classes="hint",
        )

    def on_mount(self) -> None:
        # The reason field takes the focus (an accidental Enter denies), unless a message is
        # being written: the panel is on screen above the composer, and Shift+Tab reaches it.
        # Focus already inside the panel (moved there before it finished mounting) stays.
        composer = self.app.focused
        if composer is not None and self in composer.ancestors:
            return
        if not (isinstance(composer, TextArea) and composer.text.strip()):
            self.query_one("#deny-reason", Input).focus()

    def on_button_pressed(self, event: Button.Pressed) -> None:
        event.stop()
        if event.button.id == "approve-once":
            self.action_decide("once")
        elif event.button.id == "approve-always":
            self.action_decide("always")
        else:
            self.action_decide("deny")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_decide("deny")

    def action_decide(self, decision: str) -> None:
        if decision == "once":
            answer = ApprovalAnswer("once")
        elif decision == "always" and self.request.prefix:
            answer = ApprovalAnswer("always")
        else:
            reason = self.query_one("#deny-reason", Input).value.strip()
            answer = ApprovalAnswer("deny", reason or None)
        self.post_message(self.Decided(self, answer))
