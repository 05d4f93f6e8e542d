"""How full the context is: the tokens the next request carries, against the model's window.

The figure comes from the provider whenever it can: a reply's usage says how many tokens its
request had (`input_tokens`, cached ones included) and how many it wrote, and both are in the
next request. Only what was appended after that reply (tool results, user messages, change
rows) is estimated. Before the segment's first reply everything is estimated: the frozen system
prompt and tools plus the history. The estimate is deliberately conservative (a token per three
bytes of the JSON that goes over the wire; real tokenizers average three and a half to four on
code and prose), so compaction comes a little early rather than too late.

`ContextMeter` follows the log incrementally, like the history projection: each request costs
the frames appended since the last one. `AutoCompactPolicy` says where the thresholds of a model
lie; a model whose context window is not known gets no usage-based compaction and no refusal.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import orjson

from xum.core.images import message_image_tokens
from xum.llm import catalog
from xum.store import compaction_config as cc
from xum.store import frame_types as ev
from xum.store.config import read_config
from xum.store.follower import FrameSource, LogFollower
from xum.store.frames import Frame

BYTES_PER_TOKEN = 3


def estimate_tokens(value: Any) -> int:
    """A conservative token count for any JSON value (a message, a tool list, a text)."""
    raw = value.encode("utf-8") if isinstance(value, str) else orjson.dumps(value)
    return -(-len(raw) // BYTES_PER_TOKEN)


class ContextMeter(LogFollower):
    from_boundary = True  # everything it counts starts over at a boundary

    def reset(self) -> None:
        super().reset()
        self.reported: int | None = None  # tokens of the last reply's request + its output
        self.extra = 0  # estimated tokens of what came after it
        self.frozen = 0  # estimated tokens of the segment's system prompt and tools
        self.messages = 0  # provider-visible messages in the segment (the summary included)

    def update(self, log: FrameSource) -> int:
        """Follow `log`; returns `tokens()`."""
        self.follow(log)
        return self.tokens()

    def tokens(self) -> int:
        """The next request's size: reported by the provider where possible, else estimated."""
        if self.reported is not None:
            return self.reported + self.extra
        return self.frozen + self.extra

    @property
    def estimated(self) -> bool:
        """True while no reply of this segment has reported its usage."""
        return self.reported is None

    def _apply(self, frame: Frame) -> None:
        kind, data = frame.type, frame.data
        if kind in ev.BOUNDARY_TYPES:
            summary = data.get("summary") if kind == ev.COMPACTION else None
            if kind == ev.COMPACTION and not isinstance(summary, str):
                return  # a malformed compaction is no boundary (the projection ignores it too)
            self.reported, self.frozen = None, 0
            self.extra = estimate_tokens(ev.summary_message(summary)) if summary else 0
            self.messages = 1 if summary else 0
        elif kind == ev.CONTEXT_FROZEN:
            self.frozen = estimate_tokens(data.get("system", "")) + estimate_tokens(
                data.get("tools", [])
            )
        elif kind == ev.ASSISTANT_MESSAGE:
            self.messages += 1
            usage = data.get("usage")
            inp = usage.get("input_tokens") if isinstance(usage, dict) else None
            out = usage.get("output_tokens") if isinstance(usage, dict) else None
            if isinstance(inp, int) and inp > 0:
                self.reported = inp + (out if isinstance(out, int) else 0)
                self.extra = 0
            else:  # no usage (an interrupted reply): count it as estimated
                self.extra += estimate_tokens(data.get("message"))
        elif kind in ev.MESSAGE_ROLES:
            self.messages += 1
            message = data.get("message")
            # An image's reference is a few bytes; what it costs the request is far more.
            self.extra += estimate_tokens(message) + message_image_tokens(message)


@dataclass(frozen=True, slots=True)
class AutoCompactPolicy:
    """Where usage-based compaction starts for one model."""

    window: int | None  # None: not known, so no usage-based compaction
    threshold: int  # percent of the window; 100 is off

    @property
    def enabled(self) -> bool:
        return self.window is not None and self.threshold < cc.THRESHOLD_OFF

    @property
    def limit(self) -> int | None:
        """A message sent at or above this many tokens is preceded by a compaction."""
        if not self.enabled or self.window is None:
            return None
        return self.window * self.threshold // 100

    @property
    def force_limit(self) -> int | None:
        """Mid-turn (a reply streaming, a tool loop), past this many tokens it compacts."""
        if not self.enabled or self.window is None:
            return None
        return self.window * min(self.threshold + cc.FORCE_BUFFER, 100) // 100

    def percent(self, tokens: int) -> float | None:
        return None if self.window is None else 100.0 * tokens / self.window


def known_window(
    provider: str, model_id: str, config: Mapping[str, Any] | None = None
) -> int | None:
    """The context window xum knows for a model: config.json `contextWindows` (`config`, else
    read now) first, then the built-in table. The provider-wide fallback the request path uses
    is a guess, not knowledge, so it does not count here."""
    configured = cc.configured_window(f"{provider}:{model_id}", config)
    if configured is not None:
        return configured
    info = catalog.lookup(provider, model_id)
    return info.context_window if info is not None else None


def policy_for(provider: str, model_id: str) -> AutoCompactPolicy:
    config = read_config()  # one snapshot for both answers (asked a few times per step)
    return AutoCompactPolicy(
        known_window(provider, model_id, config),
        cc.threshold_for(f"{provider}:{model_id}", config),
    )
