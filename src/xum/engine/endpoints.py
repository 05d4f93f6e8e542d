"""Turn a provider id (plus providers.jsonc and the environment) into a usable `Endpoint`.

Precedence for each setting: providers.jsonc first, then the documented environment variables,
then the built-in default. Only the user's global config and environment are consulted: a
repository can never redirect prompts or pick the key that pays for them.

This lives beside `route` in the engine layer because it joins two lower layers: it reads the
user's provider entries (`xum.store.providers`) and builds the `Endpoint` an `xum.llm` client
takes. The provider clients themselves never read a config file.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xum.core.errors import ConfigError
from xum.core.paths import providers_path
from xum.llm.endpoint import AuthStyle, Endpoint
from xum.llm.errors import LLMError
from xum.llm.types import Wire
from xum.store.providers import (
    ProviderEntry,
    ProvidersConfig,
    ProviderType,
    normalize_builtin_base_url,
)

WIRE_FOR_TYPE: dict[ProviderType, Wire] = {
    "anthropic-messages": "anthropic",
    "openai-responses": "openai-responses",
    "openai-compatible": "openai-chat",
}

_OPENROUTER_ROUTING = ("order", "allow_fallbacks", "only", "ignore", "data_collection")


@dataclass(frozen=True, slots=True)
class Credential:
    """An API key and where it was found."""

    value: str | None
    source: str | None  # "providers.jsonc:apiKey", "apiKeyFile:<path>", "env:NAME"; never the value


def find_credential(entry: ProviderEntry, env: Mapping[str, str]) -> Credential:
    """The key to use and where it came from. Raises ConfigError for an unreadable apiKeyFile."""
    if entry.api_key:
        return Credential(entry.api_key, "providers.jsonc:apiKey")
    if entry.api_key_file:
        key_path = Path(entry.api_key_file).expanduser()
        try:
            value = key_path.read_text(encoding="utf-8").strip()
        except OSError as exc:
            raise ConfigError(
                f'"{entry.id}".apiKeyFile: cannot read {key_path}: {exc.strerror}',
                path=str(key_path),
                hint="point apiKeyFile at a readable file holding only the key",
            ) from None
        if not value:
            raise ConfigError(f'"{entry.id}".apiKeyFile: {key_path} is empty', path=str(key_path))
        return Credential(value, f"apiKeyFile:{entry.api_key_file}")
    if entry.builtin is not None:
        for name in entry.builtin.key_env:
            value = env.get(name, "").strip()
            if value:
                return Credential(value, f"env:{name}")
    return Credential(None, None)


def needs_key(entry: ProviderEntry) -> bool:
    # Custom providers may be keyless local servers; of the built-ins only Ollama is keyless.
    return entry.builtin is not None and entry.builtin.needs_key


def missing_key_hint(entry: ProviderEntry) -> str:
    env_names = " or ".join(entry.builtin.key_env) if entry.builtin else ""
    file_hint = f'"apiKey" (or "apiKeyFile") under "{entry.id}" in {providers_path()}'
    return f"set {env_names}, or add {file_hint}" if env_names else f"add {file_hint}"


def _base_url(entry: ProviderEntry, env: Mapping[str, str]) -> str:
    if entry.base_url:
        return entry.base_url
    builtin = entry.builtin
    assert builtin is not None  # custom entries always carry a baseUrl
    if builtin.base_url_env and env.get(builtin.base_url_env, "").strip():
        return normalize_builtin_base_url(
            builtin,
            env[builtin.base_url_env],
            where=f"environment variable {builtin.base_url_env}",
            path=builtin.base_url_env,
        )
    return builtin.default_base_url


def _auth_style(entry: ProviderEntry, credential: Credential) -> AuthStyle:
    if credential.value is None:
        return "none"
    if entry.provider_type == "anthropic-messages":
        # ANTHROPIC_AUTH_TOKEN is a bearer token (gateways, proxies); API keys use x-api-key.
        return "bearer" if credential.source == "env:ANTHROPIC_AUTH_TOKEN" else "x-api-key"
    return "bearer"


def _body_options(entry: ProviderEntry) -> dict[str, Any]:
    if entry.id == "openrouter":
        routing = {k: entry.extra[k] for k in _OPENROUTER_ROUTING if k in entry.extra}
        return {"provider": routing} if routing else {}
    if entry.id == "xai" and "searchParameters" in entry.extra:
        return {"search_parameters": entry.extra["searchParameters"]}
    return {}


def resolve_endpoint(
    provider_id: str, config: ProvidersConfig, env: Mapping[str, str] | None = None
) -> Endpoint:
    env = os.environ if env is None else env
    entry = config.get(provider_id)
    if entry is None:
        known = ", ".join(config.all_ids())
        raise LLMError(
            "config",
            f"unknown provider '{provider_id}'",
            provider=provider_id,
            hint=f"use one of: {known}; or add a custom provider to {providers_path()}",
        )
    credential = find_credential(entry, env)
    if credential.value is None and needs_key(entry):
        raise LLMError(
            "config",
            f"no API key for provider '{provider_id}'",
            provider=provider_id,
            hint=missing_key_hint(entry),
        )
    headers: dict[str, str] = {}
    if entry.id == "openai":
        # The OpenAI SDKs' variables for billing a request to an organization and a project.
        for var, header in (
            ("OPENAI_ORG_ID", "OpenAI-Organization"),
            ("OPENAI_PROJECT_ID", "OpenAI-Project"),
        ):
            if env.get(var, "").strip():
                headers[header] = env[var].strip()
    return Endpoint(
        provider=provider_id,
        wire=WIRE_FOR_TYPE[entry.provider_type],
        base_url=_base_url(entry, env),
        api_key=credential.value,
        key_source=credential.source,
        auth_style=_auth_style(entry, credential),
        headers=headers,
        body_options=_body_options(entry),
    )


def configured_provider_ids(
    config: ProvidersConfig, env: Mapping[str, str] | None = None
) -> list[str]:
    """Providers that could serve a request now: a credential, or a keyless entry the user wrote
    (Ollama and custom local servers count only once they appear in providers.jsonc)."""
    env = os.environ if env is None else env
    out = []
    for pid in config.all_ids():
        entry = config.get(pid)
        if entry is None:
            continue
        try:
            credential = find_credential(entry, env)
        except ConfigError:
            continue
        if credential.value is not None or (pid in config.entries and not needs_key(entry)):
            out.append(pid)
    return out
