"""Doom-loop guard: a model calling the same tool with the same arguments again and again.

Identical consecutive calls first earn an advisory appended to the tool result (escalating in
tone), then a hard stop that ends the turn. The step limit is the backstop for loops this
cannot see (alternating calls, say).
"""

from __future__ import annotations

from dataclasses import dataclass

import orjson

ADVISE_AT = 3  # the third identical call in a row gets an advisory
STOP_AT = 6  # the sixth ends the turn


def call_fingerprint(name: str, arguments: str) -> str:
    """Equal for calls that mean the same thing (key order and whitespace ignored)."""
    try:
        canonical = orjson.dumps(orjson.loads(arguments or "{}"), option=orjson.OPT_SORT_KEYS)
    except orjson.JSONDecodeError:
        canonical = arguments.encode()
    return name + "\0" + canonical.decode("utf-8", "replace")


@dataclass
class Verdict:
    """What the guard says about the latest tool calls."""

    repeats: int
    advisory: str | None = None
    stop: bool = False


class DoomLoopGuard:
    def __init__(self, advise_at: int = ADVISE_AT, stop_at: int = STOP_AT) -> None:
        self.advise_at = advise_at
        self.stop_at = stop_at
        self._last: str | None = None
        self._repeats = 0

    def observe(self, name: str, arguments: str) -> Verdict:
        fingerprint = call_fingerprint(name, arguments)
        self._repeats = self._repeats + 1 if fingerprint == self._last else 1
        self._last = fingerprint
        n = self._repeats
        if n >= self.stop_at:
            return Verdict(
                n,
                f"Stopped: `{name}` was called {n} times in a row with identical arguments. "
                "The turn ends here so it does not loop forever.",
                stop=True,
            )
        if n >= self.advise_at:
            tone = "again" if n == self.advise_at else "yet again"
            return Verdict(
                n,
                f"Note from xum: you called `{name}` with identical arguments {tone} ({n} times in a "
                "row) and got the same kind of result. Repeating it will not change the outcome: "
                f"change the approach. After {self.stop_at} identical calls the turn is stopped.",
            )
        return Verdict(n)

    def reset(self) -> None:
        self._last = None
        self._repeats = 0
