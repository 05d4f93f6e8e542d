"""How far the user has read each workspace, for the sidebar's unread dot.

Kept in `$XUM_ROOT/server-read.json` (`{"<workspace id>": <seq>}`), shared by every browser, so
a workspace read on the phone is not unread on the laptop. A marker only moves forward.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

import orjson

from xum.core.fsutil import atomic_write_bytes
from xum.core.paths import ensure_root, xum_root

FILE_NAME = "server-read.json"


class ReadMarks:
    def __init__(self, path: Path | None = None) -> None:
        self.path = path or xum_root() / FILE_NAME
        self._marks: dict[str, int] = {}
        with contextlib.suppress(OSError, orjson.JSONDecodeError):
            data = orjson.loads(self.path.read_bytes())
            if isinstance(data, dict):
                self._marks = {str(k): v for k, v in data.items() if type(v) is int and v >= 0}

    def get(self, workspace_id: str) -> int:
        return self._marks.get(workspace_id, 0)

    def mark(self, workspace_id: str, seq: int) -> int:
        current = self._marks.get(workspace_id, 0)
        if seq > current:
            self._marks[workspace_id] = seq
            self._save()
            return seq
        return current

    def forget(self, workspace_id: str) -> None:
        if self._marks.pop(workspace_id, None) is not None:
            self._save()

    def _save(self) -> None:
        ensure_root()
        atomic_write_bytes(self.path, orjson.dumps(self._marks))
