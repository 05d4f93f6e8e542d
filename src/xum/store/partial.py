"""`partial.json`: the assistant message still streaming, for clients that reconnect mid-step.

Best effort by design: it is replaced atomically (so a reader never sees half a file) but not
fsynced, because it is either committed as a frame or discarded when the step ends, and a crash
discards it (crash recovery deletes it). `after_seq` is the last committed frame it follows, so
a client can tell a partial that belongs after the frames it has from a stale one.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson

from xum.core.clock import now_ms
from xum.core.fsutil import atomic_write_bytes

PARTIAL_NAME = "partial.json"


@dataclass(slots=True)
class Partial:
    """The assistant message still streaming (`partial.json`)."""

    after_seq: int
    updated_ms: int
    data: dict[str, Any]


def write_partial(directory: Path, after_seq: int, data: Mapping[str, Any]) -> None:
    payload = {"after_seq": after_seq, "updated_ms": now_ms(), "data": data}
    atomic_write_bytes(directory / PARTIAL_NAME, orjson.dumps(payload), durable=False)


def read_partial(directory: Path) -> Partial | None:
    """The partial message, or None when there is none (or it cannot be read: best effort)."""
    try:
        obj = orjson.loads((directory / PARTIAL_NAME).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    if not isinstance(obj, dict):
        return None
    after_seq, updated_ms, data = obj.get("after_seq"), obj.get("updated_ms"), obj.get("data")
    if type(after_seq) is not int or type(updated_ms) is not int or not isinstance(data, dict):
        return None
    return Partial(after_seq, updated_ms, data)


def delete_partial(directory: Path) -> None:
    with contextlib.suppress(FileNotFoundError):
        os.unlink(directory / PARTIAL_NAME)
