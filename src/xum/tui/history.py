"""The composer's history of sent messages, kept across runs of the UI, per project.

One JSON line per message (`{"project": ..., "text": ...}`) in `$XUM_ROOT/tui/history.jsonl`,
mode 0600 in a 0700 directory (messages can hold anything a user pastes). Up walks the last
`HISTORY` messages sent in the same project. The file is read once when the UI starts and
appended to as messages are sent; when it grows past `KEEP_BYTES` it is rewritten with its
newest half, so it stays small. A damaged line is skipped; a file that cannot be read or written
only costs the history (the UI says nothing: it is a convenience).
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path

import orjson

from xum.core.fsutil import atomic_write_bytes
from xum.core.paths import ensure_private_dir, xum_root

HISTORY = 200  # messages Up walks through
KEEP_BYTES = 1024 * 1024  # all projects together, before the file is trimmed
MAX_TEXT = 64 * 1024  # a longer message is not kept


def history_path() -> Path:
    return xum_root() / "tui" / "history.jsonl"


def load(project: str) -> list[str]:
    """The project's last `HISTORY` sent messages, oldest first."""
    try:
        lines = history_path().read_bytes().splitlines()
    except OSError:
        return []
    out: list[str] = []
    for line in lines:
        try:
            entry = orjson.loads(line)
        except orjson.JSONDecodeError:
            continue
        if isinstance(entry, dict) and entry.get("project") == project:
            text = entry.get("text")
            if isinstance(text, str) and (not out or out[-1] != text):
                out.append(text)
    return out[-HISTORY:]


def append(project: str, text: str) -> None:
    """Keep `text` as sent in `project` (nothing is kept of a message over `MAX_TEXT`)."""
    if len(text) > MAX_TEXT:
        return
    path = history_path()
    line = orjson.dumps({"project": project, "text": text}) + b"\n"
    with contextlib.suppress(OSError):
        ensure_private_dir(path.parent)
        fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        try:
            os.write(fd, line)
            size = os.fstat(fd).st_size
        finally:
            os.close(fd)
        if size > KEEP_BYTES:
            lines = path.read_bytes().splitlines(keepends=True)
            atomic_write_bytes(path, b"".join(lines[len(lines) // 2 :]), mode=0o600)
