"""JSONC (JSON with comments and trailing commas) through the maintained `json5` parser.

Parse errors become `ConfigError`s that name the file, line and column.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from xum.core.errors import ConfigError

_POSITION = r"<string>:(\d+) (.*) at column (\d+)"  # compiled on the first parse error


def parse_jsonc(text: str, *, path: str) -> Any:
    if not text.strip():
        return None
    import json5  # lazy: only config paths need it

    try:
        return json5.loads(text, allow_duplicate_keys=True)
    except ValueError as exc:
        match = re.search(_POSITION, str(exc), re.DOTALL)
        if match:
            raise ConfigError(
                f"cannot parse: {match.group(2).replace(chr(10), 'newline')}",
                path=path,
                line=int(match.group(1)),
                column=int(match.group(3)),
            ) from None
        raise ConfigError(f"cannot parse: {exc}", path=path) from None


def load_jsonc_file(path: Path) -> Any:
    """The parsed file, or None when it does not exist or is blank."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except UnicodeDecodeError as exc:
        raise ConfigError(f"not UTF-8 text ({exc.reason})", path=str(path)) from None
    except OSError as exc:
        raise ConfigError(f"cannot read: {exc.strerror}", path=str(path)) from None
    return parse_jsonc(text, path=str(path))
