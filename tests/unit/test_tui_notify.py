"""The terminal UI's desktop notifications: which escape sequence each terminal gets, and that
what the model wrote cannot smuggle a control sequence into it."""

from __future__ import annotations

import pytest

from xum.host.inbox import WorkspaceRef
from xum.host.notifications import Notice
from xum.tui.notify import TerminalNotifier, sequence, style_for


@pytest.mark.parametrize(
    ("env", "style"),
    [
        ({"TERM_PROGRAM": "iTerm.app", "TERM": "xterm-256color"}, "osc9"),
        ({"TERM_PROGRAM": "WezTerm"}, "osc9"),
        ({"TERM": "xterm-kitty"}, "osc9"),
        ({"WT_SESSION": "abc", "TERM": "xterm-256color"}, "osc9"),
        ({"TERM_PROGRAM": "ghostty", "TERM": "xterm-ghostty"}, "osc777"),
        ({"TERM": "foot"}, "osc777"),
        ({"TERM": "rxvt-unicode-256color"}, "osc777"),
        ({"VTE_VERSION": "7600", "TERM": "xterm-256color"}, "osc777"),
        ({"TERM": "xterm-256color"}, "bell"),
        ({"TERM_PROGRAM": "iTerm.app", "TMUX": "/tmp/tmux-0/default,1,0"}, "bell"),
        ({"TERM_PROGRAM": "tmux", "TERM": "tmux-256color"}, "bell"),
        ({"TERM": "screen-256color", "VTE_VERSION": "7600"}, "bell"),
        ({}, "bell"),
    ],
)
def test_the_terminal_decides_the_sequence(env: dict[str, str], style: str) -> None:
    assert style_for(env) == style


def test_sequences() -> None:
    assert sequence("osc9", "Tests pass", "app: 41 green") == "\x1b]9;Tests pass: app: 41 green\x07"
    assert sequence("osc9", "Done", None) == "\x1b]9;Done\x07"
    assert sequence("osc777", "a;b", "body; more") == "\x1b]777;notify;a,b;body; more\x07"
    assert sequence("bell", "anything", "at all") == "\x07"


def test_control_characters_never_reach_the_terminal() -> None:
    sneaky = "ok\x1b]52;c;cm0gLXJm\x07\x1b[2J\nnext"
    for style in ("osc9", "osc777"):
        text = sequence(style, sneaky, sneaky)  # type: ignore[arg-type]
        inner = text[2:-1]  # between `ESC ]` and the final BEL
        assert "\x1b" not in inner and "\x07" not in inner and "\n" not in inner


def test_the_notifier_writes_and_toasts() -> None:
    written: list[str] = []
    toasts: list[tuple[str, str]] = []
    notifier = TerminalNotifier(
        written.append, lambda t, b: toasts.append((t, b)), {"TERM_PROGRAM": "WezTerm"}
    )
    notice = Notice(
        id="notice-1",
        source="notify",
        workspace_id="ws1",
        workspace=WorkspaceRef("fix-login", "/p"),
        title="Tests pass",
        body="41 green",
        since=0.0,
    )
    notifier.show(notice)
    assert written == ["\x1b]9;Tests pass: fix-login: 41 green\x07"]
    assert toasts == [("Tests pass", "fix-login: 41 green")]
