"""Time helpers. Wall-clock milliseconds for records, monotonic seconds for durations."""

from __future__ import annotations

import time
from datetime import UTC, datetime


def now_ms() -> int:
    return time.time_ns() // 1_000_000


def iso_from_ms(ms: int) -> str:
    return datetime.fromtimestamp(ms / 1000, tz=UTC).isoformat(timespec="milliseconds")


def monotonic() -> float:
    return time.monotonic()
