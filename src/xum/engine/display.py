"""One-line descriptions of tool calls, and text made safe for a terminal.

Shared by the front-ends that draw in a terminal (`xum run`'s text mode, the terminal UI): the
key argument of a call (`bash: make test`), how a result ended (`exit 2`), and text with its
control sequences removed. Tool output and model text come from the repository and the model,
not from us: an escape sequence in them must not move the cursor, retitle the window or write
the clipboard of the user's terminal.
"""

from __future__ import annotations

import re
from typing import Any

# CSI and OSC sequences, then any other C0 control (ESC included) but newline and tab, and DEL.
_CONTROLS = re.compile(
    r"\x1b\[[0-9;?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|[\x00-\x08\x0b-\x1f\x7f]"
)

_KEY_ARGUMENT = {
    "bash": "script",
    "file_read": "path",
    "file_edit_replace_string": "path",
    "file_edit_replace_lines": "path",
    "file_edit_insert": "path",
    "web_fetch": "url",
    "web_search": "query",
    "set_exit_code": "code",
    "notify": "title",
}


def strip_controls(text: str) -> str:
    """`text` without terminal control sequences (newlines and tabs are kept)."""
    return _CONTROLS.sub("", text)


def key_argument(name: str, arguments: Any, width: int = 72) -> str:
    """The argument that says what a call does, on one line of at most `width` characters."""
    if not isinstance(arguments, dict):
        return "(arguments are not valid JSON)"
    if name == "todo_write":
        todos = arguments.get("todos")
        return f"{len(todos)} items" if isinstance(todos, list) else ""
    field = _KEY_ARGUMENT.get(name)
    value = arguments.get(field) if field else None
    if value is None:
        return ""
    text = " ".join(strip_controls(str(value)).split())
    return text if len(text) <= width else text[: width - 3] + "..."


def outcome(name: str, is_error: bool, meta: dict[str, Any]) -> str:
    """How a finished call ended, in a word or two (`exit 2`, `timed out`, `ok`)."""
    if name == "bash":
        if meta.get("timed_out"):
            return "timed out"
        if meta.get("signal"):
            return f"killed by signal {meta['signal']}"
        if meta.get("exit_code") is not None:
            return f"exit {meta['exit_code']}"
    return "error" if is_error else "ok"
