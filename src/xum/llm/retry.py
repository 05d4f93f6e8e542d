"""When and how long to wait before trying a failed request again.

The policy is a value: tests inject one with no delay (or a recording `sleep`) so retry paths
run in milliseconds while production keeps exponential backoff with jitter.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from time import time


def _random() -> float:
    import random  # on the first retry, not at start-up

    return random.random()


@dataclass(frozen=True, slots=True)
class RetryPolicy:
    """Exponential backoff with jitter, within limits."""

    max_retries: int = 4  # retries after the first attempt
    base_delay_s: float = 1.0  # the first backoff; doubles per retry
    max_delay_s: float = 30.0  # cap on one backoff delay
    # A server that asks for a longer wait than this (a daily quota, say) is not retried: the
    # turn fails now with the server's own estimate instead of hanging for an hour.
    max_retry_after_s: float = 60.0
    # Once this long has passed since the first attempt began, a failure is final: no retry is
    # started whose wait would end past it (docs/providers.md, `retryBudgetSeconds`).
    budget_s: float = 600.0
    jitter: float = 0.25  # +/- this fraction, so parallel agents do not retry in lockstep
    sleep: Callable[[float], Awaitable[None]] = field(default=asyncio.sleep, compare=False)
    rand: Callable[[], float] = field(default=_random, compare=False)

    def backoff(self, attempt: int) -> float:
        """The delay before retry number `attempt` (1-based) when the server gave no hint."""
        raw = min(self.max_delay_s, self.base_delay_s * (2 ** (attempt - 1)))
        spread = raw * self.jitter * (2.0 * float(self.rand()) - 1.0)
        return float(max(0.0, min(self.max_delay_s, raw + spread)))

    def delay(self, attempt: int, retry_after: float | None) -> float:
        if retry_after is not None:
            return max(0.0, retry_after)
        return self.backoff(attempt)


NO_DELAY = RetryPolicy(base_delay_s=0.0, max_delay_s=0.0, jitter=0.0)


def parse_retry_after(headers: Mapping[str, str]) -> float | None:
    """Seconds to wait from `retry-after-ms` (OpenAI, Anthropic) or `retry-after` (seconds or an
    HTTP date). None when absent or unreadable."""
    ms = headers.get("retry-after-ms")
    if ms:
        try:
            return max(0.0, float(ms) / 1000.0)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime  # HTTP dates are rare: off start-up

    try:
        when = parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - time())
