"""Every key of the terminal UI, in one table: the help screen (`?`) prints it and
docs/tui.md lists the same keys (a test checks that the two agree)."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Key:
    keys: str  # as the help screen shows them
    action: str
    area: str


KEYS: tuple[Key, ...] = (
    Key("Enter", "send (while a turn runs: after the current step)", "Composer"),
    Key("Ctrl+T", "send after the turn", "Composer"),
    Key("Ctrl+J", "new line (in every terminal)", "Composer"),
    Key(
        "Shift+Enter, Alt+Enter",
        "new line, in terminals that report them apart from Enter (kitty keyboard protocol)",
        "Composer",
    ),
    Key("Up, Down", "previous and next sent message (on the first or last line)", "Composer"),
    Key("/", "slash commands and skills of the workspace (at the start)", "Composer"),
    Key("@", "complete a file path of the workspace", "Composer"),
    Key("Tab", "take the highlighted suggestion (Enter too)", "Composer"),
    Key("Esc", "close the suggestions, else interrupt the running turn", "Composer"),
    Key("F2", "pick the model", "Composer"),
    Key("F3", "next thinking level", "Composer"),
    Key("F4", "switch between Exec and Plan", "Composer"),
    Key("F9", "pick the agent (the project's, your global ones and the built-ins)", "Composer"),
    Key("F5", "send the failed message again", "Composer"),
    Key(
        "F6",
        "next permission mode: auto, ask (commands outside the allowlist ask too), read-only",
        "Composer",
    ),
    Key("Ctrl+G", "carry out the proposed plan (switches to Exec)", "Composer"),
    Key("F7", "Start Here: the latest plan or final reply becomes the whole context", "Composer"),
    Key("Ctrl+S", "submit the answers to the agent's questions", "Questions"),
    Key("Tab, Shift+Tab", "move between the questions and their fields", "Questions"),
    Key("Ctrl+Y", "approve the waiting tool call once", "Approvals"),
    Key(
        "Tab, Shift+Tab",
        "move between the command (arrows scroll a long one), Approve once, Always allow (the "
        "command's prefix, in this project) and Deny",
        "Approvals",
    ),
    Key(
        "Enter", "press the focused button; in the reason field, deny with that reason", "Approvals"
    ),
    Key(
        "Ctrl+N",
        "new workspace (local, worktree, SSH, Docker, Dev Container, or a scratch chat)",
        "Workspaces",
    ),
    Key(
        "Ctrl+Shift+N",
        "new scratch chat, made with its first message (terminals that report it apart from "
        "Ctrl+N)",
        "Workspaces",
    ),
    Key("Ctrl+Down, Ctrl+Up", "next and previous workspace (Alt+Down, Alt+Up too)", "Workspaces"),
    Key(
        "Ctrl+B",
        "go to the workspace list (Esc goes back to the composer; a hidden list hides again)",
        "Workspaces",
    ),
    Key("Enter", "open the highlighted workspace (in the list)", "Workspaces"),
    Key("n", "new workspace (in the list)", "Workspaces"),
    Key("f", "fork the workspace (in the list)", "Workspaces"),
    Key("r", "rename the workspace (in the list)", "Workspaces"),
    Key("a", "archive the workspace (in the list)", "Workspaces"),
    Key("u", "unarchive one of the project's archived workspaces (in the list)", "Workspaces"),
    Key("d", "delete the workspace, after a preview of what goes (in the list)", "Workspaces"),
    Key(
        "Ctrl+L",
        "the inbox: what waits for you in every workspace (Enter opens it, y approves once, "
        "d denies, x dismisses)",
        "Views",
    ),
    Key("Ctrl+F", "go to the next workspace something waits in (the inbox's order)", "Views"),
    Key("Ctrl+R", "review the workspace's diff against its base", "Views"),
    Key(
        "F12",
        "the workspace's background processes: what runs, since when, its last lines; "
        "Enter shows a process's output, Backspace stops it",
        "Views",
    ),
    Key(
        "PageUp, PageDown",
        "scroll the transcript, from the composer too (at the end it follows new output)",
        "Views",
    ),
    Key("F8", "switch between the dark and the light theme", "Views"),
    Key("Ctrl+O", "show or hide the workspace list (hidden at first below 100 columns)", "Views"),
    Key("?, F1", "this help (? outside the composer)", "Views"),
    Key("Ctrl+Q", "quit (running turns are stopped and recorded as interrupted)", "Views"),
)
