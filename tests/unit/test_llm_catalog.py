"""Model strings, aliases, thinking levels and prices."""

from __future__ import annotations

import pytest

from xum.core.errors import UsageError
from xum.llm import catalog
from xum.llm.catalog import (
    DEFAULT_MODEL,
    anthropic_thinking_style,
    context_window,
    default_max_output_tokens,
    resolve_model_string,
)
from xum.llm.errors import LLMError
from xum.llm.pricing import BUILTIN_PRICES, Price, cost_usd, parse_user_prices
from xum.llm.thinking import allowed_levels, clamp_thinking, parse_thinking, split_override
from xum.llm.types import Usage

# The docs' Models table, verbatim: model string -> aliases.
DOCS_TABLE = {
    "anthropic:claude-fable-5-1": ["fable"],
    "anthropic:claude-mythos-5-1": ["mythos"],
    "anthropic:claude-opus-5-5": ["opus"],
    "anthropic:claude-sonnet-5-5": ["sonnet"],
    "anthropic:claude-haiku-5-5": ["haiku"],
    "openai:gpt-6.1-sol": ["gpt", "sol"],
    "openai:gpt-6-luna": ["luna"],
    "openai:gpt-6-astra": ["astra", "gpt-6-astra"],
    "google:gemini-3.1-pro-preview": ["gemini", "gemini-pro"],
    "google:gemini-3.8-flash": ["gemini-flash"],
    "xai:grok-4.7": ["grok", "grok-4.7"],
    "deepseek:deepseek-v4-pro": ["deepseek", "deepseek-pro", "deepseek-v4", "deepseek-v4-pro"],
    "deepseek:deepseek-v4-flash": ["deepseek-flash", "deepseek-v4-flash"],
    "moonshotai:kimi-k3": ["kimi", "k3", "kimi-k3"],
    "zai:glm-5.3-flash": ["glm", "glm-flash", "glm-5.3-flash"],
}


def test_table_matches_the_docs_exactly() -> None:
    assert {m.model_string: list(m.aliases) for m in catalog.MODELS} == DOCS_TABLE
    assert [m.model_string for m in catalog.MODELS] == list(DOCS_TABLE)
    assert DEFAULT_MODEL == "anthropic:claude-opus-5-5"


@pytest.mark.parametrize(
    ("text", "expected"),
    [(alias, ms) for ms, aliases in DOCS_TABLE.items() for alias in aliases]
    + [
        ("OPUS", "anthropic:claude-opus-5-5"),
        (" sonnet ", "anthropic:claude-sonnet-5-5"),
        ("claude-haiku-5-5", "anthropic:claude-haiku-5-5"),
        ("gpt-6.1-sol", "openai:gpt-6.1-sol"),
        ("anthropic:claude-opus-5-5", "anthropic:claude-opus-5-5"),
        ("openrouter:anthropic/claude-x", "openrouter:anthropic/claude-x"),  # any id is accepted
        ("ollama:qwen3-coder:30b", "ollama:qwen3-coder:30b"),  # the model id may contain ':'
        ("local-vllm:my model", "local-vllm:my model"),
    ],
)
def test_resolve_model_string(text: str, expected: str) -> None:
    provider, model = resolve_model_string(text)
    assert f"{provider}:{model}" == expected


def test_unknown_alias_names_nearby_ones() -> None:
    with pytest.raises(LLMError) as info:
        resolve_model_string("sonet")
    assert info.value.kind == "config"
    assert "sonnet" in info.value.message and "provider:model" in (info.value.hint or "")
    with pytest.raises(LLMError):
        resolve_model_string("Bad Provider:x")
    with pytest.raises(LLMError):
        resolve_model_string("anthropic:")


def test_limits() -> None:
    assert context_window("anthropic", "claude-opus-5-5") == 1_000_000
    assert context_window("openai", "gpt-6-luna") == 1_050_000
    assert context_window("anthropic", "claude-3-5-haiku") == 200_000  # provider default
    assert context_window("my-llama", "whatever") == catalog.DEFAULT_CONTEXT_WINDOW
    assert default_max_output_tokens("anthropic", "claude-sonnet-5-5") == 128_000
    assert default_max_output_tokens("anthropic", "claude-unknown") == 32_000
    assert default_max_output_tokens("ollama", "x") is None


@pytest.mark.parametrize(
    ("model", "style"),
    [
        ("claude-opus-5-5", "adaptive"),
        ("claude-sonnet-4-6", "adaptive"),
        ("claude-opus-4-8", "adaptive"),
        ("claude-mythos-preview", "adaptive"),
        ("claude-sonnet-4-5-20250929", "budget"),
        ("claude-opus-4-1", "budget"),
        ("claude-sonnet-4-20250514", "budget"),
        ("claude-3-7-sonnet-latest", "budget"),
        ("deepseek-chat", "budget"),
    ],
)
def test_anthropic_thinking_style(model: str, style: str) -> None:
    assert anthropic_thinking_style(model) == style


# Thinking ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [("off", "off"), ("LOW", "low"), ("med", "medium"), ("Medium", "medium"), ("high", "high"),
     ("xhigh", "xhigh"), ("max", "max")],
)  # fmt: skip
def test_named_levels(text: str, expected: str) -> None:
    assert parse_thinking(text, "anthropic", "claude-sonnet-5-5") == expected


def test_numeric_levels_are_relative_to_the_model() -> None:
    # Haiku/Sonnet allow off..max; Opus and Astra start at low (docs: /haiku+0 vs /astra+0).
    assert parse_thinking("0", "anthropic", "claude-haiku-5-5") == "off"
    assert parse_thinking("0", "anthropic", "claude-opus-5-5") == "low"
    assert parse_thinking("0", "openai", "gpt-6-astra") == "low"
    assert parse_thinking("0", "openai", "gpt-6-luna") == "off"
    assert [parse_thinking(str(n), "anthropic", "claude-sonnet-5-5") for n in range(7)] == [
        "off", "low", "medium", "high", "xhigh", "max", "max"]  # fmt: skip
    assert parse_thinking("2", "anthropic", "claude-opus-5-5") == "high"
    assert parse_thinking("9", "openai", "gpt-6.1-sol") == "max"
    assert parse_thinking(9, "ollama", "llama") == "high"  # unknown models: off..high


def test_named_levels_are_clamped_into_the_model_range() -> None:
    assert parse_thinking("off", "anthropic", "claude-opus-5-5") == "low"
    assert parse_thinking("max", "google", "gemini-3.1-pro-preview") == "high"
    assert clamp_thinking("xhigh", None, None) == "high"
    assert allowed_levels("openai", "gpt-6.1-sol") == ("low", "medium", "high", "xhigh", "max")


@pytest.mark.parametrize("bad", ["", "extreme", "10", "-1", "1.5"])
def test_bad_levels(bad: str) -> None:
    with pytest.raises(UsageError):
        parse_thinking(bad)


def test_split_override() -> None:
    assert split_override("opus+high") == ("opus", "high")
    assert split_override("+2") == (None, "2")
    assert split_override("sonnet") == ("sonnet", None)
    assert split_override("haiku+") == ("haiku", None)


# Prices --------------------------------------------------------------------------------------


def test_unpriced_model_costs_none_not_zero() -> None:
    usage = Usage(input_tokens=1000, output_tokens=1000)
    assert cost_usd("xai:grok-4.7", usage) is None
    assert cost_usd("ollama:llama3", usage) is None


def test_cost_splits_cached_and_fresh_input() -> None:
    # Opus 5.5: $4 in, $20 out, $0.20 cache read, $5 cache write (5m) per MTok.
    usage = Usage(input_tokens=1_000_000, output_tokens=100_000, cache_read_tokens=600_000,
                  cache_write_tokens=300_000)  # fmt: skip
    expected = 0.1 * 4 + 0.6 * 0.20 + 0.3 * 5 + 0.1 * 20
    assert cost_usd("anthropic:claude-opus-5-5", usage) == pytest.approx(expected)


def test_long_prompt_tier_prices_the_whole_request() -> None:
    short = Usage(input_tokens=100_000, output_tokens=1_000)
    long = Usage(input_tokens=100_001, output_tokens=1_000)
    haiku = "anthropic:claude-haiku-5-5"
    assert cost_usd(haiku, short) == pytest.approx(0.1 * 0.10 + 0.001 * 0.50)
    assert cost_usd(haiku, long) == pytest.approx(0.100001 * 0.50 + 0.001 * 2.50)
    sol = BUILTIN_PRICES["openai:gpt-6.1-sol"]
    assert sol.for_prompt(300_000).input == 4.0 and sol.for_prompt(300_000).output == 15.0


def test_user_prices_win_and_missing_cache_prices_fall_back_to_input() -> None:
    prices = parse_user_prices(
        {
            "xai:grok-4.7": {"input": 3, "output": 15},
            "anthropic:claude-opus-5-5": {"input": 1, "output": 1, "cacheRead": 0, "cacheWrite": 2},
            "half:entry": {"input": 1},  # skipped: a partial price would under-report
        }
    )
    assert set(prices) == {"xai:grok-4.7", "anthropic:claude-opus-5-5"}
    usage = Usage(input_tokens=2_000_000, output_tokens=1_000_000, cache_read_tokens=1_000_000)
    assert cost_usd("xai:grok-4.7", usage, prices) == pytest.approx(2 * 3 + 15)
    assert cost_usd("anthropic:claude-opus-5-5", usage, prices) == pytest.approx(1 + 0 + 1)
    assert prices["xai:grok-4.7"] == Price(3.0, 15.0)


@pytest.mark.parametrize("bad", [{"input": "3", "output": 1}, {"input": -1, "output": 1}, 5])
def test_bad_user_prices_are_rejected(bad: object) -> None:
    with pytest.raises(ValueError):
        parse_user_prices({"p:m": bad})


def test_every_builtin_price_is_for_a_catalog_model() -> None:
    known = {m.model_string for m in catalog.MODELS}
    assert set(BUILTIN_PRICES) <= known
