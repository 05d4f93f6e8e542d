"""How long one model reply may take, how big it may get, and how long retries may go on.

Three clocks bound a reply, because each one alone leaves a way to hang:

- the *idle* timeout: the longest wait for the reply's headers, and then between two whole
  events that carry something. SSE comments and Anthropic `ping` events are keep-alives: they
  prove the connection is up, not that the model is producing anything, so they do not reset
  it (a server that sends a comment every 5 s forever would otherwise hold a turn for ever).
  Nor do bytes of an event that has not ended: a stream trickling a byte every two seconds
  never completes an event and must not hold a turn for the half hour of the reply deadline.
  Only a half-received event past `PARTIAL_PROGRESS_BYTES` counts (a multi-MiB final event
  on a slow link). After a quarter of the idle timeout without progress the client says the
  reply is stalling (`Stalled`), so a user sees why nothing moves before it is ended;
- the *reply* deadline: the whole of one attempt, from sending the request to the last event;
- the *retry budget*: once this long has passed since the first attempt started, a failure is
  final instead of retried (five stalled attempts of 300 s each are not a reasonable wait).

Users set them in `config.json` under `modelRequests` (docs/providers.md); `xum.engine.route`
reads that object and hands it to `limits_from_config`. The wire clients never read files.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, NamedTuple

MIB = 1024 * 1024
# Bytes of one unfinished event past which its growth counts as progress: far above any delta
# event (a few hundred bytes), far below the final events that repeat a whole reply.
PARTIAL_PROGRESS_BYTES = 64 * 1024
# The `Stalled` advisory comes after this fraction of the idle timeout without progress.
STALL_NOTICE_FRACTION = 0.25

# config.json `modelRequests` key -> (field, lowest accepted value, what it is)
_KEYS: dict[str, tuple[str, float, str]] = {
    "connectTimeoutSeconds": ("connect_s", 0.001, "seconds"),
    "idleTimeoutSeconds": ("idle_s", 0.001, "seconds"),
    "replyTimeoutSeconds": ("reply_s", 0.001, "seconds"),
    "retryBudgetSeconds": ("retry_budget_s", 0.0, "seconds"),
    "maxRetries": ("max_retries", 0, "a whole number"),
    "maxReplyMiB": ("max_reply_bytes", 1, "a whole number of MiB"),
}
CONFIG_KEY = "modelRequests"


class ReplyLimits(NamedTuple):
    """The limits of one reply and its retries (defaults: docs/providers.md). A NamedTuple, not
    a dataclass: it is built at import time on `xum run`'s path, where a dataclass costs ~1 ms."""

    connect_s: float = 10.0
    # Two minutes: a healthy reply, even in a long thinking phase, streams a delta (or at least
    # a whole event) far more often than that; a stalled or trickling one is ended (and retried)
    # within about two minutes instead of holding the run for the 30-minute reply deadline.
    idle_s: float = 120.0
    reply_s: float = 1800.0  # 128K output tokens at ~70 tokens/s, with room to spare
    retry_budget_s: float = 600.0
    max_retries: int = 4  # retries after the first attempt
    # The largest real replies (a Responses `response.completed` that repeats 128K tokens of
    # output with encrypted reasoning) are a few MiB; 64 MiB bounds memory with a wide margin.
    max_reply_bytes: int = 64 * MIB
    write_s: float = 60.0  # sending the request body (not configurable: bodies are small)


def setting_name(field: str) -> str:
    """The config.json spelling of a `ReplyLimits` field, for messages that say what to raise."""
    for key, (name, _, _) in _KEYS.items():
        if name == field:
            return f"{CONFIG_KEY}.{key}"
    raise KeyError(field)


def limits_from_config(raw: Any) -> ReplyLimits:
    """The limits a `modelRequests` object asks for (None or absent keys keep the defaults).
    Raises ValueError naming the key and what it must be."""
    if raw is None:
        return ReplyLimits()
    if not isinstance(raw, Mapping):
        raise ValueError(f'"{CONFIG_KEY}" must be an object')
    unknown = sorted(set(raw) - set(_KEYS))
    if unknown:
        raise ValueError(
            f'"{CONFIG_KEY}" has unknown key(s) {", ".join(unknown)}; '
            f"known keys: {', '.join(_KEYS)}"
        )
    values: dict[str, Any] = {}
    for key, value in raw.items():
        field, lowest, what = _KEYS[key]
        whole = what != "seconds"
        ok_type = isinstance(value, int) if whole else isinstance(value, int | float)
        if isinstance(value, bool) or not ok_type or value < lowest:
            bound = "0 or more" if lowest == 0 else f"at least {lowest:g}"
            raise ValueError(f'"{CONFIG_KEY}.{key}" must be {what}, {bound} (got {value!r})')
        values[field] = value * MIB if field == "max_reply_bytes" else value
    return ReplyLimits(**values)


class ReplyClock:
    """The idle timer and the reply deadline of one attempt, on the event loop's clock."""

    __slots__ = (
        "_idle",
        "_idle_applies",
        "_last",
        "_start",
        "deadline_at",
        "keepalives",
        "noticed",
        "trickled",
    )

    def __init__(self, limits: ReplyLimits, now: float) -> None:
        self._start = now
        self._last = now
        self._idle = limits.idle_s
        self.deadline_at = now + limits.reply_s
        self._idle_applies = True
        self.keepalives = 0  # keep-alives since the last progress
        self.trickled = 0  # bytes of an unfinished event since the last progress
        self.noticed = False  # the stall advisory of this silence was given

    def progress(self, now: float) -> None:
        self._last = now
        self.keepalives = 0
        self.trickled = 0
        self.noticed = False

    def keepalive(self) -> None:
        self.keepalives += 1

    def trickle(self, size: int) -> None:
        self.trickled += size

    def silent_for(self, now: float) -> float:
        """Seconds since the last progress."""
        return now - self._last

    def notice_in(self, now: float) -> float | None:
        """Seconds until the stall advisory is due (None: given already for this silence)."""
        if self.noticed:
            return None
        return max(0.0, self._last + self._idle * STALL_NOTICE_FRACTION - now)

    def wait(self, now: float, *, idle: bool = True) -> float:
        """Seconds until the nearer of the two deadlines (never negative); with `idle` False,
        until the reply deadline alone (a reply asked for whole sends its headers last)."""
        self._idle_applies = idle
        until = min(self._last + self._idle, self.deadline_at) if idle else self.deadline_at
        return max(0.0, until - now)

    def reply_expired(self) -> bool:
        """After a timeout: whether the deadline that ran out was the reply's (else the idle
        timer's)."""
        return not self._idle_applies or self.deadline_at <= self._last + self._idle

    def elapsed(self, now: float) -> float:
        return now - self._start
