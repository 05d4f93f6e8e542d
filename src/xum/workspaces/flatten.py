"""Flattening a tool's input (or result) into `XUM_TOOL_INPUT_*` / `XUM_TOOL_RESULT_*` variables.

Rules (docs/hooks.md):

* a scalar becomes `<PREFIX>_<FIELD>`; field names go from camelCase or snake_case to
  UPPER_SNAKE (`reportMarkdown` -> `REPORT_MARKDOWN`, `display_name` -> `DISPLAY_NAME`), and any
  other character becomes `_`;
* a nested object adds `_<CHILD>` per key, and so does a map (its keys are names like any other);
* an array gives `_COUNT` plus `_<INDEX>` per element (at most MAX_ARRAY_ITEMS of them);
* strings are passed as they are, booleans as `true`/`false`, numbers in JSON form; null is unset;
* a value over MAX_VALUE_BYTES (8 KiB) is omitted (the whole document is in the file named by
  `XUM_TOOL_INPUT_PATH` / `XUM_TOOL_RESULT_PATH`), and so is everything past MAX_VARS variables or
  MAX_TOTAL_BYTES in all, so a huge input can never make the hook fail to start.

One exception, because the documented names collide: `XUM_TOOL_INPUT_PATH` always names the file
holding the whole input, so a top-level field called `path` (file_read, the file_edit tools) is
flattened as `..._FILE_PATH`, which is what the documented hook examples read. The same holds for
`XUM_TOOL_RESULT_PATH`. When the input has a real `file_path` field too, that one wins.
"""

from __future__ import annotations

import re
from typing import Any

import orjson

MAX_VALUE_BYTES = 8 * 1024
MAX_VARS = 256
MAX_ARRAY_ITEMS = 100
MAX_TOTAL_BYTES = 128 * 1024

_CAMEL = re.compile(r"(?<=[a-z0-9])(?=[A-Z])|(?<=[A-Z])(?=[A-Z][a-z])")
_NOT_NAME = re.compile(r"[^A-Z0-9]+")


def env_name(key: str) -> str:
    """`reportMarkdown` -> `REPORT_MARKDOWN`; `x_axis` -> `X_AXIS`; `a.b c` -> `A_B_C`."""
    snake = _CAMEL.sub("_", key)
    return _NOT_NAME.sub("_", snake.upper()).strip("_") or "_"


def _scalar(value: Any) -> str | None:
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return value
    if isinstance(value, int | float):
        return orjson.dumps(value).decode()
    return None


class _Budget:
    def __init__(self) -> None:
        self.count = 0
        self.total = 0

    def take(self, name: str, value: str) -> bool:
        size = len(name) + len(value.encode(errors="surrogatepass"))
        if self.count >= MAX_VARS or self.total + size > MAX_TOTAL_BYTES:
            return False
        self.count += 1
        self.total += size
        return True


def flatten(document: Any, prefix: str) -> dict[str, str]:
    """The flattened variables of `document` (a tool's parsed input or result) under `prefix`
    (`XUM_TOOL_INPUT` or `XUM_TOOL_RESULT`)."""
    out: dict[str, str] = {}
    budget = _Budget()

    def put(name: str, value: str) -> None:
        if name in out or "\0" in value:
            return
        if len(value.encode(errors="surrogatepass")) > MAX_VALUE_BYTES:
            return
        if budget.take(name, value):
            out[name] = value

    def walk(value: Any, name: str) -> None:
        if isinstance(value, dict):
            for key, child in value.items():
                walk(child, f"{name}_{env_name(str(key))}")
        elif isinstance(value, list):
            put(f"{name}_COUNT", str(len(value)))
            for index, child in enumerate(value[:MAX_ARRAY_ITEMS]):
                walk(child, f"{name}_{index}")
        else:
            text = _scalar(value)
            if text is not None:
                put(name, text)

    if not isinstance(document, dict):
        return out
    # A real `file_path` field first, so it wins over the renamed `path`.
    keys = sorted(document, key=lambda k: 0 if env_name(str(k)) == "FILE_PATH" else 1)
    for key in keys:
        field = env_name(str(key))
        if field == "PATH":
            field = "FILE_PATH"
        walk(document[key], f"{prefix}_{field}")
    return out
