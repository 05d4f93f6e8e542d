"""A provider's concurrency limit, for tests of many agents sharing one account.

`FakeLLM.limit_concurrency(3, retry_after=1)` makes the server answer at most three model
requests at a time; one more gets HTTP 429 with `Retry-After: 1` and takes no scripted reply.
Its counters say what happened: `server.capacity.peak` (the most requests answered at once)
and `server.capacity.rejected` (the 429s it sent).
"""

from __future__ import annotations

import threading


class Capacity:
    def __init__(self) -> None:
        self._lock = threading.Lock()
        self.max_concurrent: int | None = None
        self.retry_after = 1.0
        self.in_flight = 0
        self.peak = 0
        self.rejected = 0

    def set(self, max_concurrent: int | None, retry_after: float) -> None:
        with self._lock:
            self.max_concurrent = max_concurrent
            self.retry_after = retry_after

    def enter(self) -> bool:
        """Take a place for one model request; False (and counted) when the limit is reached."""
        with self._lock:
            cap = self.max_concurrent
            if cap is not None and self.in_flight >= cap:
                self.rejected += 1
                return False
            self.in_flight += 1
            self.peak = max(self.peak, self.in_flight)
            return True

    def leave(self) -> None:
        with self._lock:
            self.in_flight -= 1

    def headers(self) -> list[tuple[str, str]]:
        return [("retry-after", f"{self.retry_after:g}")]

    def busy_message(self) -> str:
        return f"fakellm: more than {self.max_concurrent} requests at once"
