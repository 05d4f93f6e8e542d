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

from xum.core.errors import ConfigError
from xum.core.fsutil import atomic_write_bytes
from xum.core.lock import locked
from xum.core.paths import config_path, ensure_root

T = TypeVar("T")


def _parse(raw: bytes, path: Path) -> dict[str, Any]:
    if not raw.strip():
        return {}
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ConfigError(
            f"cannot parse: {exc.msg}", path=str(path), line=exc.lineno, column=exc.colno
        ) from None
    if not isinstance(data, dict):
        raise ConfigError("the top level must be a JSON object", path=str(path))
    return data


def load_config(path: Path | None = None) -> dict[str, Any]:
    path = path or config_path()
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", path=str(path)) from None
    return _parse(raw, path)


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
