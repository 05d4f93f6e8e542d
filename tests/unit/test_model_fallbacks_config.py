"""config.json `modelFallbacks`: the documented shape, the built-in chains when the key is
absent, aliases resolved, and an error that names the entry and what to write instead."""

from __future__ import annotations

from typing import Any

import pytest

from xum.core.errors import ConfigError
from xum.engine.fallback_config import chain_for, model_fallbacks
from xum.engine.route import resolve_route


def test_without_the_key_the_built_in_chains_apply() -> None:
    assert model_fallbacks({}) == {
        "anthropic:claude-fable-5-1": ("anthropic:claude-opus-5",),
        "anthropic:claude-sonnet-5-5": ("anthropic:claude-sonnet-5",),
    }
    assert chain_for("anthropic:claude-sonnet-5-5", {}) == ("anthropic:claude-sonnet-5",)


def test_a_present_key_is_the_whole_truth() -> None:
    assert model_fallbacks({"modelFallbacks": {}}) == {}
    config = {"modelFallbacks": {"gpt": {"models": ["sonnet", "anthropic:claude-sonnet-5"]}}}
    # Aliases are resolved on both sides; the built-in chains are not merged in.
    assert model_fallbacks(config) == {
        "openai:gpt-6.1-sol": ("anthropic:claude-sonnet-5-5", "anthropic:claude-sonnet-5")
    }
    assert chain_for("anthropic:claude-sonnet-5-5", config) == ()


@pytest.mark.parametrize(
    ("value", "says"),
    [
        (["anthropic:claude-sonnet-5"], '"modelFallbacks" must be an object'),
        ({"sonnet": ["anthropic:claude-sonnet-5"]}, 'entry "sonnet" must be an object whose'),
        ({"sonnet": {"model": "x:y"}}, 'entry "sonnet" must be an object whose "models"'),
        ({"sonnet": {"models": ["x:y", ""]}}, 'entry "sonnet" must be an object'),
        ({"sonet": {"models": ["x:y"]}}, "key \"sonet\": unknown model 'sonet'"),
        ({"sonnet": {"models": ["opsu"]}}, "entry \"sonnet\": unknown model 'opsu'"),
        ({"sonnet": {"models": ["anthropic:claude-sonnet-5-5"]}}, "lists the model itself"),
    ],
)
def test_a_wrong_value_names_the_entry_and_the_fix(value: Any, says: str) -> None:
    with pytest.raises(ConfigError) as caught:
        model_fallbacks({"modelFallbacks": value})
    assert caught.value.message.startswith("config.json: ")
    assert says in caught.value.message
    assert caught.value.hint is not None and "models" in caught.value.hint


def test_a_wrong_config_fails_when_a_model_is_resolved() -> None:
    with pytest.raises(ConfigError, match="modelFallbacks"):
        resolve_route(
            "anthropic:claude-sonnet-5-5",
            env={"ANTHROPIC_API_KEY": "k"},
            config={"modelFallbacks": {"sonnet": {"models": "opus"}}},
        )
