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
            line, column = _corrected(text, int(match.group(1)), int(match.group(3)))
            offender = _char_at(text, line, column)
            what = f'"{offender}"' if offender is not None else "end of input"
            raise ConfigError(
                f"cannot parse: Unexpected {what}".replace("\n", "newline"),
                path=path,
                line=line,
                column=column,
            ) from None
        raise ConfigError(f"cannot parse: {exc}", path=path) from None


def _offset(text: str, line: int, column: int) -> int:
    """The character offset of a 1-based line and column (columns count characters)."""
    start = 0
    for _ in range(line - 1):
        start = text.index("\n", start) + 1
    return start + column - 1


def _char_at(text: str, line: int, column: int) -> str | None:
    try:
        offset = _offset(text, line, column)
    except ValueError:
        return None
    return text[offset] if offset < len(text) else None


def _corrected(text: str, line: int, column: int) -> tuple[int, int]:
    """json5's error position, or the character before it when that is the real culprit.

    json5 is a PEG parser that reports the farthest position any rule reached, and a few of its
    rules (a Unicode letter starting a key, a Unicode space) take a character before testing
    it, so an unexpected character is often reported one column late (a doubled comma at
    column 90 comes out as 91). The stdlib's JSON parser, run on the same text with comments and
    trailing commas blanked out (offsets kept), names the offending character exactly; its
    position is taken only when it is exactly one before json5's, so a document that uses other
    JSON5 syntax (where the stdlib would stop elsewhere) keeps json5's answer.
    """
    import json

    try:
        reported = _offset(text, line, column)
    except ValueError:
        return line, column
    try:
        json.loads(_blank_jsonc(text))
    except json.JSONDecodeError as exc:
        if exc.pos == reported - 1:
            return exc.lineno, exc.colno
    except ValueError:
        pass
    return line, column


def _blank_jsonc(text: str) -> str:
    """`text` with its comments and trailing commas replaced by spaces (newlines kept), so every
    other character stays at its offset."""
    out = list(text)
    i, n = 0, len(text)
    last_comma: int | None = None  # a comma after a value, not yet followed by anything
    previous = ""  # the last significant character
    while i < n:
        c = text[i]
        if c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            i = j + 1
            last_comma, previous = None, c
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out[i:j] = " " * (j - i)
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out[i:j] = [ch if ch == "\n" else " " for ch in text[i:j]]
            i = j
        elif c.isspace():
            i += 1
        else:
            if c in "]}" and last_comma is not None:
                out[last_comma] = " "
            # Only a comma after a value can be a trailing one: in `1,,]` the second comma is
            # the error, and must stay for the stdlib to point at.
            last_comma = i if c == "," and previous not in ("", ",", "[", "{", ":") else None
            previous = c
            i += 1
    return "".join(out)


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
