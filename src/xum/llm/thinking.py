"""Thinking levels: parsing names and model-relative numbers, clamping, and each wire's knob.

Levels, low to high: off, low, medium, high, xhigh, max. Every model allows a contiguous range
of them (from the catalog; off..high for a model the catalog does not know). A named level
outside the range is clamped into it; a number 0-9 counts up from the bottom of the range, one
level per step, and stops at the top.
"""

from __future__ import annotations

from typing import Literal

from xum.core.errors import UsageError
from xum.llm.catalog import lookup
from xum.llm.types import THINKING_LEVELS, ThinkingLevel

DEFAULT_THINKING: ThinkingLevel = "medium"  # the CLI default (`XUM_THINKING_LEVEL=medium`)
UNKNOWN_MODEL_RANGE: tuple[ThinkingLevel, ThinkingLevel] = ("off", "high")

_NAMES: dict[str, ThinkingLevel] = {level: level for level in THINKING_LEVELS}
_NAMES["med"] = "medium"
_RANK: dict[ThinkingLevel, int] = {level: i for i, level in enumerate(THINKING_LEVELS)}


def allowed_levels(provider: str | None, model: str | None) -> tuple[ThinkingLevel, ...]:
    """The levels the model accepts, lowest first."""
    info = lookup(provider, model) if provider and model else None
    low, high = (info.thinking_min, info.thinking_max) if info else UNKNOWN_MODEL_RANGE
    return THINKING_LEVELS[_RANK[low] : _RANK[high] + 1]


def clamp_thinking(level: ThinkingLevel, provider: str | None, model: str | None) -> ThinkingLevel:
    allowed = allowed_levels(provider, model)
    rank = _RANK[level]
    if rank < _RANK[allowed[0]]:
        return allowed[0]
    if rank > _RANK[allowed[-1]]:
        return allowed[-1]
    return level


def parse_thinking(
    text: str | int, provider: str | None = None, model: str | None = None
) -> ThinkingLevel:
    """A level from a name (any case; `med` = medium) or a model-relative number 0-9."""
    raw = str(text).strip().lower()
    if len(raw) == 1 and raw.isdigit():
        allowed = allowed_levels(provider, model)
        return allowed[min(int(raw), len(allowed) - 1)]
    level = _NAMES.get(raw)
    if level is None:
        raise UsageError(
            f"unknown thinking level '{text}'",
            hint="use off, low, medium (med), high, xhigh, max, or a number 0-9 relative to the "
            "model's range (0 = its lowest level)",
        )
    return clamp_thinking(level, provider, model)


def split_override(text: str) -> tuple[str | None, str | None]:
    """`opus+high` -> ("opus", "high"); `+2` -> (None, "2"); `sonnet` -> ("sonnet", None)."""
    model, plus, level = text.partition("+")
    return (model.strip() or None, level.strip() or None if plus else None)


# Per-wire knobs ------------------------------------------------------------------------------

# Anthropic extended thinking: `budget_tokens` per level (the API's minimum is 1024).
# max_tokens is raised to leave ANTHROPIC_ANSWER_ROOM after the budget, within 64k.
ANTHROPIC_BUDGETS: dict[ThinkingLevel, int] = {
    "low": 4_000,
    "medium": 8_000,
    "high": 16_000,
    "xhigh": 32_000,
    "max": 48_000,
}
ANTHROPIC_MIN_BUDGET = 1_024
ANTHROPIC_ANSWER_ROOM = 16_000

# OpenAI `reasoning.effort` (Responses) and `reasoning_effort` (chat completions): the GPT-6
# models take none (Luna only), low, medium, high, xhigh and max, so the names map one to one.
OPENAI_EFFORT: dict[ThinkingLevel, str] = {
    "off": "none",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "xhigh",
    "max": "max",
}
_BASIC_EFFORT: dict[ThinkingLevel, str] = {
    "off": "none",
    "low": "low",
    "medium": "medium",
    "high": "high",
    "xhigh": "high",
    "max": "high",
}


def chat_effort(
    level: ThinkingLevel, style: Literal["openai", "basic", "disabled"] | None
) -> str | None:
    """The chat-completions `reasoning_effort` for a model's style; None = send nothing."""
    if style == "openai":
        return OPENAI_EFFORT[level]
    if style == "basic":
        return _BASIC_EFFORT[level]
    if style == "disabled":
        return "none"
    return None
