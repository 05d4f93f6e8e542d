"""What a reply cost, in USD, from its `Usage`.

A model is priced only where a published price list says so (each entry names its source). Any
other model is unpriced: `cost_usd` returns None rather than a made-up zero. Users add or
correct prices in `~/.xum/config.json` under `modelPrices`; those win over the built-in table.

Usage convention (see `xum.llm.types`): `input_tokens` is the whole prompt, of which
`cache_read_tokens` were cache hits and `cache_write_tokens` were written to the cache; output
tokens already include reasoning tokens on every wire, so reasoning is not billed twice.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from xum.llm.types import Usage

_M = 1_000_000.0


@dataclass(frozen=True, slots=True)
class Price:
    """USD per million tokens. Missing cache prices fall back to the input price."""

    input: float
    output: float
    cache_read: float | None = None
    cache_write: float | None = None
    # Long-prompt tier: when the whole prompt exceeds `long_above` tokens, every token of that
    # request (output included) is billed at `long` instead.
    long_above: int | None = None
    long: Price | None = None

    def for_prompt(self, prompt_tokens: int) -> Price:
        if (
            self.long is not None
            and self.long_above is not None
            and prompt_tokens > self.long_above
        ):
            return self.long
        return self

    def cost(self, usage: Usage) -> float:
        tier = self.for_prompt(usage.input_tokens)
        read = min(usage.cache_read_tokens, usage.input_tokens)
        write = min(usage.cache_write_tokens, usage.input_tokens - read)
        fresh = usage.input_tokens - read - write
        read_price = tier.input if tier.cache_read is None else tier.cache_read
        write_price = tier.input if tier.cache_write is None else tier.cache_write
        return (
            fresh * tier.input
            + read * read_price
            + write * write_price
            + usage.output_tokens * tier.output
        ) / _M


def _openai(input: float, output: float, cached: float, write: float) -> Price:
    # GPT-6 pricing doubles input and cache rates and raises output 1.5x for a request whose
    # prompt exceeds 272K tokens (whole request).
    return Price(
        input,
        output,
        cached,
        write,
        long_above=272_000,
        long=Price(input * 2, output * 1.5, cached * 2, write * 2),
    )


# Sources, read 2026-11:
#   Anthropic: https://platform.claude.com/docs/en/about-claude/pricing and each model's
#     overview page (platform.claude.com/docs/en/models/<model>/overview). Cache writes are the
#     5-minute rate (the TTL xum's ephemeral breakpoints use). Sonnet 5.5 cache hits were cut to
#     $0.10 on 2026-10-07.
#   OpenAI: https://developers.openai.com/api/docs/pricing and the model pages
#     (developers.openai.com/api/docs/models/<model>); Standard processing tier.
# Google, xAI, DeepSeek, Moonshot AI and Z.ai models are left unpriced: no first-party price list
# for these ids was at hand. Add them with `modelPrices`.
BUILTIN_PRICES: dict[str, Price] = {
    "anthropic:claude-fable-5-1": Price(10.0, 50.0, 0.25, 12.5),
    "anthropic:claude-mythos-5-1": Price(10.0, 50.0, 0.25, 12.5),
    "anthropic:claude-opus-5-5": Price(4.0, 20.0, 0.20, 5.0),
    "anthropic:claude-sonnet-5-5": Price(2.0, 10.0, 0.10, 2.5),
    "anthropic:claude-haiku-5-5": Price(
        0.10, 0.50, 0.01, 0.125, long_above=100_000, long=Price(0.50, 2.50, 0.05, 0.625)
    ),
    "openai:gpt-6.1-sol": _openai(2.0, 10.0, 0.10, 2.5),
    "openai:gpt-6-luna": _openai(0.10, 0.50, 0.01, 0.125),
    "openai:gpt-6-astra": _openai(10.0, 50.0, 1.0, 12.5),
}


def parse_user_prices(raw: Mapping[str, Any]) -> dict[str, Price]:
    """`modelPrices` from config.json: `{"provider:model": {"input": x, "output": y,
    "cacheRead": z, "cacheWrite": w}}`. Entries without both input and output are skipped
    (a partial price would under-report); non-numeric values raise ValueError."""
    out: dict[str, Price] = {}
    for model, entry in raw.items():
        if not isinstance(entry, Mapping):
            raise ValueError(f"modelPrices[{model!r}] must be an object")
        if entry.get("input") is None or entry.get("output") is None:
            continue
        out[model] = Price(
            _number(model, "input", entry["input"]),
            _number(model, "output", entry["output"]),
            _optional(model, "cacheRead", entry.get("cacheRead")),
            _optional(model, "cacheWrite", entry.get("cacheWrite")),
        )
    return out


def _number(model: str, key: str, value: Any) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise ValueError(f"modelPrices[{model!r}].{key} must be a non-negative number")
    return float(value)


def _optional(model: str, key: str, value: Any) -> float | None:
    return None if value is None else _number(model, key, value)


def price_for(model_string: str, user_prices: Mapping[str, Price] | None = None) -> Price | None:
    if user_prices and model_string in user_prices:
        return user_prices[model_string]
    return BUILTIN_PRICES.get(model_string)


def cost_usd(
    model_string: str, usage: Usage, user_prices: Mapping[str, Price] | None = None
) -> float | None:
    """The reply's cost in USD, or None when the model has no known price."""
    price = price_for(model_string, user_prices)
    return None if price is None else price.cost(usage)
