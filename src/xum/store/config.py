"""`$XUM_ROOT/config.json`: global settings and the project/workspace registry.

Reads never write. Writes are read-modify-write under a cross-process lock and replace the file
atomically, so several xum processes can share one `$XUM_ROOT`. A file that cannot be parsed is
never overwritten: every write refuses until the user fixes it (`xum doctor` says where).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

import orjson

from xum.core.fsutil import atomic_write_bytes
from xum.core.jsonfile import read_json_object
from xum.core.lock import locked
from xum.core.paths import config_path, ensure_root

T = TypeVar("T")


def load_config(path: Path | None = None) -> dict[str, Any]:
    return read_json_object(path or config_path())


def update_config(mutate: Callable[[dict[str, Any]], T], path: Path | None = None) -> T:
    """Apply `mutate` to the current config under the lock and publish the result atomically.

    `mutate` edits the dict in place and returns whatever the caller needs back (a new id, say).
    """
    path = path or config_path()
    ensure_root()
    with locked(path.with_name(path.name + ".lock"), purpose="config write"):
        data = load_config(path)
        result = mutate(data)
        atomic_write_bytes(path, orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
    return result
