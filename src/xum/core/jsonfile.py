"""Reading the JSON-object files in `$XUM_ROOT` (config.json, secrets.json) with errors that
name the file, line and column. A missing or blank file reads as an empty object."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from xum.core.errors import ConfigError


def read_json_object(
    path: Path,
    *,
    top_level: str = "the top level must be a JSON object",
    check: Callable[[Path], None] | None = None,
) -> dict[str, Any]:
    """The object in `path`; `check(path)` runs on an existing file before it is parsed."""
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", path=str(path)) from None
    if check is not None:
        check(path)
    return parse_json_object(raw, path, top_level=top_level)


def parse_json_object(
    raw: bytes, path: Path, *, top_level: str = "the top level must be a JSON object"
) -> dict[str, Any]:
    """The object in `raw`, read from `path` (named by the errors); blank is an empty object."""
    if not raw.strip():
        return {}
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise ConfigError(
            f"cannot parse: {exc.msg}", path=str(path), line=exc.lineno, column=exc.colno
        ) from None
    if not isinstance(data, dict):
        raise ConfigError(top_level, path=str(path))
    return data
