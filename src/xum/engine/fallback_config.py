"""config.json `modelFallbacks`: which model a turn moves to when its model refuses.

Shape (docs/models.md, "Refusal fallbacks")::

    "modelFallbacks": {
      "anthropic:claude-sonnet-5-5": { "models": ["anthropic:claude-sonnet-5"] }
    }

A key is the model that refuses, a value's `models` the models to try after it, in order. Keys
and models are model strings or aliases; both are resolved to `provider:model-id`, so a chain
applies whichever way the user named the model. Without the key, the built-in chains apply (what
a new install starts with); once the key is there, it is the whole truth: `{}` means no
fallbacks, and a later xum with other built-in chains changes nothing in it.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from xum.core.errors import ConfigError
from xum.llm import catalog
from xum.llm.errors import LLMError

CONFIG_KEY = "modelFallbacks"
HINT = (
    'write "modelFallbacks": {"<provider:model>": {"models": ["<provider:model>", ...]}} '
    "(docs/models.md, Refusal fallbacks), or remove the key to use the built-in chains"
)

Chains = dict[str, tuple[str, ...]]


def _model_string(text: str, where: str) -> str:
    try:
        provider, model_id = catalog.resolve_model_string(text)
    except LLMError as exc:
        raise ConfigError(
            f'"{CONFIG_KEY}" {where}: {exc.message}', path="config.json", hint=HINT
        ) from None
    return f"{provider}:{model_id}"


def model_fallbacks(config: Mapping[str, Any]) -> Chains:
    """Every chain, keys and models as `provider:model-id`. ConfigError names the entry that
    is wrong and what it should be."""
    raw = config.get(CONFIG_KEY)
    if raw is None:
        return dict(catalog.DEFAULT_MODEL_FALLBACKS)
    if not isinstance(raw, Mapping):
        raise ConfigError(
            f'"{CONFIG_KEY}" must be an object mapping a model string to {{"models": [...]}}',
            path="config.json",
            hint=HINT,
        )
    chains: Chains = {}
    for key, entry in raw.items():
        source = _model_string(str(key), f'key "{key}"')
        models = entry.get("models") if isinstance(entry, Mapping) else None
        if not isinstance(models, list) or not all(isinstance(m, str) and m for m in models):
            raise ConfigError(
                f'"{CONFIG_KEY}" entry "{key}" must be an object whose "models" is a list of '
                'model strings, e.g. {"models": ["anthropic:claude-sonnet-5"]}',
                path="config.json",
                hint=HINT,
            )
        chain: list[str] = []
        for model in models:
            target = _model_string(model, f'entry "{key}"')
            if target == source:
                raise ConfigError(
                    f'"{CONFIG_KEY}" entry "{key}" lists the model itself; a model that refused '
                    "would only refuse again",
                    path="config.json",
                    hint=f'remove "{model}" from its "models"',
                )
            if target not in chain:
                chain.append(target)
        chains[source] = tuple(chain)
    return chains


def chain_for(model_string: str, config: Mapping[str, Any]) -> tuple[str, ...]:
    """The models to try, in order, when `model_string` (`provider:model-id`) refuses; empty
    when it has no chain."""
    return model_fallbacks(config).get(model_string, ())
