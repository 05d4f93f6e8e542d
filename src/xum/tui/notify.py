"""Desktop notifications from the terminal UI (docs/notifications.md, docs/tui.md).

The host decides what notifies (`xum.host.notifications`); here each notice becomes the
terminal's own desktop notification, chosen from `$TERM_PROGRAM` and `$TERM`:

| terminal                                               | sequence                           |
|--------------------------------------------------------|------------------------------------|
| iTerm2, WezTerm, kitty, Windows Terminal, ConEmu        | OSC 9 (`ESC ] 9 ; text BEL`)        |
| Ghostty, foot, rxvt-unicode, VTE terminals (GNOME)      | OSC 777 (`ESC ] 777 ; notify ; title ; body BEL`) |
| anything else (tmux and screen included)                | the bell (`BEL`)                   |

Inside tmux or screen the sequences would need a passthrough the user may not have enabled, so
the bell, which tmux turns into a window alert, is used there. The notice is also shown in the
UI itself as a toast. What the model wrote is stripped of control characters before it reaches
the terminal, so a title cannot smuggle an escape sequence.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Literal

from xum.engine.display import strip_controls

if TYPE_CHECKING:
    from textual.app import App

    from xum.host.notifications import Notice

Style = Literal["osc9", "osc777", "bell"]

OSC9_PROGRAMS = frozenset({"iTerm.app", "WezTerm", "vscode-kitty"})
OSC777_PROGRAMS = frozenset({"ghostty"})
MAX_CHARS = 200


def style_for(env: Mapping[str, str]) -> Style:
    """Which notification the terminal described by `env` shows."""
    program = env.get("TERM_PROGRAM", "")
    term = env.get("TERM", "")
    if env.get("TMUX") or program == "tmux" or term.startswith(("screen", "tmux")):
        return "bell"
    if program in OSC9_PROGRAMS or term == "xterm-kitty" or env.get("WT_SESSION"):
        return "osc9"
    if env.get("ConEmuPID"):
        return "osc9"
    if program in OSC777_PROGRAMS or term.startswith(("foot", "rxvt")) or env.get("VTE_VERSION"):
        return "osc777"
    return "bell"


def _clean(text: str) -> str:
    line = " ".join(strip_controls(text).split())
    return line[:MAX_CHARS]


def sequence(style: Style, title: str, body: str | None) -> str:
    """The bytes (as text) that make the terminal notify."""
    title = _clean(title)
    body = _clean(body) if body else ""
    if style == "osc9":
        text = f"{title}: {body}" if body else title
        return f"\x1b]9;{text}\x07"
    if style == "osc777":
        # `;` separates the fields of OSC 777: one inside the title would start the body.
        return f"\x1b]777;notify;{title.replace(';', ',')};{body}\x07"
    return "\x07"


def notice_text(notice: Notice) -> tuple[str, str]:
    """(title, body) as the terminal shows them: the body names the workspace."""
    where = notice.workspace.name or notice.workspace_id
    body = f"{where}: {notice.body}" if notice.body else where
    return notice.title, body


class TerminalNotifier:
    """Shows each notice with `write` (the terminal) and `toast` (the UI)."""

    def __init__(
        self,
        write: Callable[[str], None],
        toast: Callable[[str, str], None],
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.write = write
        self.toast = toast
        self.style = style_for(os.environ if env is None else env)

    @classmethod
    def for_app(cls, app: App[None]) -> TerminalNotifier:
        """Writing to the app's terminal (nothing in a headless app), toasting in the app."""

        def write(text: str) -> None:
            # As Textual's own `App.bell` writes: straight to the terminal, between frames.
            driver = app._driver
            if not app.is_headless and driver is not None:
                driver.write(text)

        return cls(write, lambda title, body: app.notify(body, title=title, timeout=8))

    def show(self, notice: Notice) -> None:
        title, body = notice_text(notice)
        self.write(sequence(self.style, title, body))
        self.toast(_clean(title), _clean(body))
