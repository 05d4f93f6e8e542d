"""From a model string the user typed to everything a request needs: endpoint, model id,
parameters and prices.

Resolution happens before anything is written, so a missing key or an unknown model fails
cleanly with nothing half-created.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from xum.core.errors import ConfigError
from xum.core.paths import providers_path
from xum.engine.endpoints import configured_provider_ids, resolve_endpoint
from xum.engine.fallback_config import model_fallbacks
from xum.llm import catalog
from xum.llm.endpoint import Endpoint
from xum.llm.errors import LLMError
from xum.llm.limits import CONFIG_KEY as LIMITS_KEY
from xum.llm.limits import ReplyLimits, limits_from_config
from xum.llm.pricing import Price, parse_user_prices, price_for
from xum.llm.types import Usage
from xum.llm.websearch import NativeSearch, native_supported, web_search_config
from xum.store.config import load_config
from xum.store.providers import ProvidersConfig, load_providers, model_parameters_for

DOCUMENTED_DEFAULT = "anthropic:claude-opus-5-5"


def no_provider_hint() -> str:
    """What fixes "no provider": the variables, and the providers.jsonc this process reads."""
    return (
        "set a provider key in the environment (ANTHROPIC_API_KEY, ANTHROPIC_AUTH_TOKEN, "
        "OPENAI_API_KEY, GOOGLE_GENERATIVE_AI_API_KEY, XAI_API_KEY, DEEPSEEK_API_KEY, "
        'OPENROUTER_API_KEY, MOONSHOT_API_KEY or ZAI_API_KEY), or add a provider with an "apiKey" '
        f'(or a custom "providerType" + "baseUrl" for a local server) to {providers_path()}; '
        "`xum doctor` shows what xum can see"
    )


@dataclass(frozen=True)
class ModelRoute:
    """A resolved model string: provider, model id, endpoint and parameters."""

    provider: str
    model_id: str
    endpoint: Endpoint
    params: dict[str, Any] = field(default_factory=dict)
    user_prices: Mapping[str, Price] = field(default_factory=dict)
    # config.json `webSearch` for this model: the provider's own search (a request carries it),
    # else whether the client-side `web_search` tool is offered (xum.llm.websearch).
    web_search: NativeSearch | None = None
    search_tool: bool = False

    @property
    def model_string(self) -> str:
        return f"{self.provider}:{self.model_id}"

    @property
    def price(self) -> Price | None:
        return price_for(self.model_string, self.user_prices)

    def cost(self, usage: Usage) -> float | None:
        price = self.price
        return None if price is None else price.cost(usage)


def _user_prices(config: Mapping[str, Any]) -> dict[str, Price]:
    raw = config.get("modelPrices") or {}
    if not isinstance(raw, Mapping):
        raise ConfigError('"modelPrices" must be an object', path="config.json")
    try:
        return parse_user_prices(raw)
    except ValueError as exc:
        raise ConfigError(str(exc), path="config.json") from None


def _reply_limits(config: Mapping[str, Any]) -> ReplyLimits:
    """config.json `modelRequests`: the timeouts, size cap and retries of every reply."""
    try:
        return limits_from_config(config.get(LIMITS_KEY))
    except ValueError as exc:
        raise ConfigError(
            str(exc), path="config.json", hint="docs/providers.md lists the keys and defaults"
        ) from None


def _web_search(
    config: Mapping[str, Any], endpoint: Endpoint, env: Mapping[str, str]
) -> tuple[NativeSearch | None, bool]:
    """The route's web search: native where config asks for it and the API has it, else the
    client-side tool where a search backend is configured, else none."""
    try:
        search = web_search_config(config)
    except ValueError as exc:
        raise ConfigError(
            str(exc), path="config.json", hint="docs/tools.md (web_search) lists the keys"
        ) from None
    if search.native and native_supported(endpoint.provider, endpoint.wire):
        return search.native_search(), False
    return None, search.client_backend(env)


def default_model_string(
    providers: ProvidersConfig, config: Mapping[str, Any], env: Mapping[str, str]
) -> str:
    """config.json `defaultModel`, else the documented default when Anthropic is usable, else
    the first model of the first usable provider. No usable provider is a clear error."""
    chosen = config.get("defaultModel")
    if isinstance(chosen, str) and chosen.strip():
        return chosen.strip()
    usable = configured_provider_ids(providers, env)
    if "anthropic" in usable:
        return DOCUMENTED_DEFAULT
    for provider in usable:
        entry = providers.get(provider)
        if entry is not None and entry.models:
            return f"{provider}:{entry.models[0]}"
        known = [m for m in catalog.MODELS if m.provider == provider]
        if known:
            return known[0].model_string
    raise LLMError("config", "no model provider is configured", hint=no_provider_hint())


def resolve_route(
    model_text: str | None,
    *,
    providers: ProvidersConfig | None = None,
    config: Mapping[str, Any] | None = None,
    env: Mapping[str, str] | None = None,
) -> ModelRoute:
    env = os.environ if env is None else env
    providers = providers or load_providers()
    config = load_config() if config is None else config
    model_fallbacks(config)  # a wrong `modelFallbacks` is reported now, not at a refusal
    text = model_text or default_model_string(providers, config, env)
    provider, model_id = catalog.resolve_model_string(text)
    endpoint = replace(resolve_endpoint(provider, providers, env), limits=_reply_limits(config))
    entry = providers.get(provider)
    params = model_parameters_for(entry, model_id) if entry is not None else {}
    native, tool = _web_search(config, endpoint, env)
    return ModelRoute(
        provider,
        model_id,
        endpoint,
        params,
        _user_prices(config),
        web_search=native,
        search_tool=tool,
    )
