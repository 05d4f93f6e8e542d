"""The governor's settings: config.json `governor`, read and checked in one place.

    "governor": {
      "maxConcurrent": 8,                      // requests in flight per provider (default 8)
      "providers": {
        "anthropic": {"maxConcurrent": 4,
                      "models": {"claude-opus-4-5": {"maxConcurrent": 2}}}
      },
      "maxConcurrentSubagents": 16,            // sub-agents running at once, whole process
      "budget": {"usdPerDay": 50, "usdPerProjectPerDay": 10}
    }

Every key is optional. The defaults never hold back one session: a session and its sub-agents
(four at most running per parent by default) stay under 8 requests to a provider, and no budget
applies until one is set. A value of the wrong kind is a `ConfigError` that names the key.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from xum.core.errors import ConfigError
from xum.core.paths import config_path

DEFAULT_MAX_CONCURRENT = 8
DEFAULT_MAX_SUBAGENTS = 16
KEY = "governor"


@dataclass(frozen=True)
class ProviderLimits:
    max_concurrent: int = DEFAULT_MAX_CONCURRENT
    models: dict[str, int] = field(default_factory=dict)  # model id -> its own cap


@dataclass(frozen=True)
class GovernorSettings:
    max_concurrent: int = DEFAULT_MAX_CONCURRENT  # for a provider with no entry of its own
    providers: dict[str, ProviderLimits] = field(default_factory=dict)
    max_subagents: int = DEFAULT_MAX_SUBAGENTS
    usd_per_day: float | None = None  # every workspace of every project, per UTC day
    usd_per_project_per_day: float | None = None

    def provider_cap(self, provider: str) -> int:
        limits = self.providers.get(provider)
        return limits.max_concurrent if limits is not None else self.max_concurrent

    def model_cap(self, provider: str, model: str) -> int | None:
        limits = self.providers.get(provider)
        return limits.models.get(model) if limits is not None else None

    @property
    def has_budget(self) -> bool:
        return self.usd_per_day is not None or self.usd_per_project_per_day is not None


def parse_settings(config: Mapping[str, Any]) -> GovernorSettings:
    """The `governor` section of a parsed config.json (absent: the defaults)."""
    section = config.get(KEY)
    if section is None:
        return GovernorSettings()
    where = KEY
    table = _table(section, where)
    _known(table, where, {"maxConcurrent", "providers", "maxConcurrentSubagents", "budget"})
    default_cap = _count(table, "maxConcurrent", where, DEFAULT_MAX_CONCURRENT)
    providers: dict[str, ProviderLimits] = {}
    raw_providers = table.get("providers")
    if raw_providers is not None:
        for provider, raw in _table(raw_providers, f"{where}.providers").items():
            at = f"{where}.providers.{provider}"
            entry = _table(raw, at)
            _known(entry, at, {"maxConcurrent", "models"})
            models: dict[str, int] = {}
            raw_models = entry.get("models")
            if raw_models is not None:
                for model, raw_model in _table(raw_models, f"{at}.models").items():
                    model_at = f"{at}.models.{model}"
                    model_entry = _table(raw_model, model_at)
                    _known(model_entry, model_at, {"maxConcurrent"})
                    models[model] = _count(model_entry, "maxConcurrent", model_at, default_cap)
            providers[provider] = ProviderLimits(
                _count(entry, "maxConcurrent", at, default_cap), models
            )
    budget: dict[str, Any] = {}
    if table.get("budget") is not None:
        budget = _table(table["budget"], f"{where}.budget")
        _known(budget, f"{where}.budget", {"usdPerDay", "usdPerProjectPerDay"})
    return GovernorSettings(
        max_concurrent=default_cap,
        providers=providers,
        max_subagents=_count(table, "maxConcurrentSubagents", where, DEFAULT_MAX_SUBAGENTS),
        usd_per_day=_usd(budget, "usdPerDay", f"{where}.budget"),
        usd_per_project_per_day=_usd(budget, "usdPerProjectPerDay", f"{where}.budget"),
    )


def _error(message: str, hint: str) -> ConfigError:
    return ConfigError(message, path=str(config_path()), hint=hint)


def _table(value: object, where: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _error(
            f"{where} must be an object", f'write "{where}": {{...}} (see docs/governor.md)'
        )
    return value


def _known(table: Mapping[str, Any], where: str, keys: set[str]) -> None:
    unknown = sorted(set(table) - keys)
    if unknown:
        raise _error(
            f"{where} has an unknown key {unknown[0]!r}",
            f"the keys {where} takes are: {', '.join(sorted(keys))} (docs/governor.md)",
        )


def _count(table: Mapping[str, Any], key: str, where: str, default: int) -> int:
    value = table.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _error(
            f"{where}.{key} must be a whole number of at least 1, not {value!r}",
            f"set {where}.{key} to 1 or more, or remove it for the default ({default})",
        )
    return value


def _usd(table: Mapping[str, Any], key: str, where: str) -> float | None:
    value = table.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int | float) or value < 0:
        raise _error(
            f"{where}.{key} must be an amount in US dollars (0 or more), not {value!r}",
            f"set {where}.{key} to a number such as 25, or remove it for no limit",
        )
    return float(value)
