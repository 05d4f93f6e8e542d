"""The fake server's token estimate: deterministic, cheap, documented.

tokens(x) = ceil(utf-8 bytes of x / 4). A request's prompt is measured element by element
(one tool definition, one system block, one message content block, one Responses input item,
one Chat message), each element being its compact JSON serialization (`orjson.dumps`, keys in
the order the client sent them). Output is measured the same way from the scripted content:
text and reasoning as their text, a tool call as its name plus its argument text.
"""

from __future__ import annotations

from typing import Any

import orjson


def count(data: bytes | str) -> int:
    n = len(data.encode()) if isinstance(data, str) else len(data)
    return (n + 3) // 4


def canonical(value: Any) -> bytes:
    """The serialization the estimate and the prefix cache both use."""
    return orjson.dumps(value)
