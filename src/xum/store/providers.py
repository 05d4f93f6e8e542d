"""`$XUM_ROOT/providers.jsonc`: which providers exist, where they live and how to authenticate.

Provider settings are user-global on purpose: nothing inside a repository can choose where
prompts go or which key pays for them. This module only parses and validates the file; turning
an entry plus the environment into a usable endpoint is `xum.engine.endpoints`'s job.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal
from urllib.parse import urlsplit

from xum.core.errors import ConfigError
from xum.core.jsonc import load_jsonc_file
from xum.core.paths import providers_path

ProviderType = Literal["openai-compatible", "openai-responses", "anthropic-messages"]
PROVIDER_TYPES: tuple[ProviderType, ...] = (
    "openai-compatible",
    "openai-responses",
    "anthropic-messages",
)
WireFormat = Literal["responses", "chatCompletions"]


@dataclass(frozen=True, slots=True)
class BuiltinProvider:
    """A provider xum knows without configuration."""

    id: str
    display_name: str
    provider_type: ProviderType  # the wire its default endpoint speaks
    default_base_url: str
    key_env: tuple[str, ...] = ()  # fallbacks, first set wins
    base_url_env: str | None = None
    needs_key: bool = True


# Default endpoints, each checked against the provider's own documentation (docs/providers.md).
BUILTIN_PROVIDERS: dict[str, BuiltinProvider] = {
    p.id: p
    for p in (
        BuiltinProvider(
            "anthropic",
            "Anthropic",
            "anthropic-messages",
            "https://api.anthropic.com/v1",
            ("ANTHROPIC_API_KEY", "ANTHROPIC_AUTH_TOKEN"),
            "ANTHROPIC_BASE_URL",
        ),
        BuiltinProvider(
            "openai",
            "OpenAI",
            "openai-responses",
            "https://api.openai.com/v1",
            ("OPENAI_API_KEY",),
            "OPENAI_BASE_URL",
        ),
        BuiltinProvider(
            "google",
            "Google",
            "openai-compatible",
            "https://generativelanguage.googleapis.com/v1beta/openai",
            ("GOOGLE_GENERATIVE_AI_API_KEY", "GOOGLE_API_KEY"),
            "GOOGLE_BASE_URL",
        ),
        BuiltinProvider(
            "xai",
            "xAI",
            "openai-compatible",
            "https://api.x.ai/v1",
            ("XAI_API_KEY",),
            "XAI_BASE_URL",
        ),
        BuiltinProvider(
            "deepseek",
            "DeepSeek",
            "openai-compatible",
            "https://api.deepseek.com",
            ("DEEPSEEK_API_KEY",),
        ),
        BuiltinProvider(
            "openrouter",
            "OpenRouter",
            "openai-compatible",
            "https://openrouter.ai/api/v1",
            ("OPENROUTER_API_KEY",),
        ),
        BuiltinProvider(
            "moonshotai",
            "Moonshot AI",
            "openai-compatible",
            "https://api.moonshot.ai/v1",
            ("MOONSHOT_API_KEY",),
        ),
        BuiltinProvider(
            "zai", "Z.ai", "openai-compatible", "https://api.z.ai/api/paas/v4", ("ZAI_API_KEY",)
        ),
        BuiltinProvider(
            "ollama",
            "Ollama",
            "openai-compatible",
            "http://localhost:11434/v1",
            needs_key=False,
        ),
    )
}

# Names the documented product reserves for providers xum does not implement yet (PARITY.md).
# A custom provider may not take them either, so configs stay portable.
RESERVED_PROVIDER_IDS = frozenset({"bedrock", "github-copilot", "copilot", "coder", "xum-gateway"})

_PROVIDER_ID = re.compile(r"^[a-z0-9][a-z0-9_-]*$")

# Keys each kind of entry understands; anything else is reported by `xum doctor` and ignored.
_COMMON_KEYS = {"apiKey", "apiKeyFile", "baseUrl", "modelParameters", "models", "displayName"}
_BUILTIN_EXTRA_KEYS: dict[str, set[str]] = {
    "openai": {"wireFormat"},
    "openrouter": {"order", "allow_fallbacks", "only", "ignore", "data_collection"},
    "xai": {"searchParameters"},
}
_CUSTOM_KEYS = _COMMON_KEYS | {"providerType"}


@dataclass(frozen=True, slots=True)
class ProviderEntry:
    """One provider as configured: built-in (possibly with no entry at all) or custom."""

    id: str
    provider_type: ProviderType
    builtin: BuiltinProvider | None
    api_key: str | None = None
    api_key_file: str | None = None
    base_url: str | None = None  # normalized; None means "use the environment or the default"
    wire_format: WireFormat | None = None
    display_name: str | None = None
    models: tuple[str, ...] = ()
    model_parameters: dict[str, dict[str, Any]] = field(default_factory=dict)
    extra: dict[str, Any] = field(default_factory=dict)  # provider-specific settings
    unknown_keys: tuple[str, ...] = ()

    @property
    def is_custom(self) -> bool:
        return self.builtin is None


@dataclass(frozen=True, slots=True)
class ProvidersConfig:
    """`providers.jsonc`, parsed: the entries by provider id."""

    path: Path
    entries: dict[str, ProviderEntry]

    def get(self, provider_id: str) -> ProviderEntry | None:
        entry = self.entries.get(provider_id)
        if entry is None and provider_id in BUILTIN_PROVIDERS:
            builtin = BUILTIN_PROVIDERS[provider_id]
            return ProviderEntry(
                id=provider_id, provider_type=builtin.provider_type, builtin=builtin
            )
        return entry

    def all_ids(self) -> list[str]:
        return list(BUILTIN_PROVIDERS) + [k for k in self.entries if k not in BUILTIN_PROVIDERS]


def validate_provider_id(provider_id: str) -> str | None:
    """Why `provider_id` cannot name a custom provider, or None when it can."""
    if not _PROVIDER_ID.match(provider_id):
        return (
            "provider ids use lowercase letters, digits, '_' and '-', start with a letter or "
            "digit, and contain no '.', ':', '/' or whitespace"
        )
    if provider_id in BUILTIN_PROVIDERS or provider_id in RESERVED_PROVIDER_IDS:
        return f"'{provider_id}' is a built-in provider name; pick another id"
    return None


def normalize_base_url(url: str, provider_type: ProviderType, *, where: str, path: str) -> str:
    """Apply the documented base-URL rules for `provider_type`.

    OpenAI-shaped: an origin-only URL gains `/v1`; an explicit path is kept; a bare trailing
    slash keeps requests at the origin root. Anthropic-shaped: trailing slashes go and `/v1` is
    appended unless the URL already ends with it. Queries and fragments are refused because the
    endpoint path is appended to the string.
    """
    parts = urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ConfigError(f"{where}: baseUrl must be an http(s) URL, got {url!r}", path=path)
    if parts.query or parts.fragment or url.rstrip().endswith(("?", "#")):
        raise ConfigError(
            f"{where}: baseUrl must not contain a query string or fragment; pass credentials "
            "with apiKey or apiKeyFile instead",
            path=path,
        )
    origin = f"{parts.scheme}://{parts.netloc}"
    if provider_type == "anthropic-messages":
        trimmed = (origin + parts.path).rstrip("/")
        return trimmed if trimmed.endswith("/v1") else trimmed + "/v1"
    if parts.path == "":
        return origin + "/v1"
    if parts.path == "/":
        return origin
    return origin + parts.path.rstrip("/")


def normalize_builtin_base_url(
    provider: BuiltinProvider, url: str, *, where: str, path: str
) -> str:
    if provider.id == "ollama":
        # Ollama's native API lives at /api; its OpenAI-compatible one at /v1 next to it.
        trimmed = url.strip().rstrip("/")
        if trimmed.endswith("/api"):
            url = trimmed[: -len("/api")] + "/v1"
    normalized = normalize_base_url(url, provider.provider_type, where=where, path=path)
    if provider.id == "google" and not normalized.endswith("/openai"):
        # Gemini's OpenAI-compatible surface sits under the API version: .../v1beta/openai
        normalized += "/openai"
    return normalized


def _expect_str(value: Any, where: str, path: str) -> str:
    if not isinstance(value, str) or not value.strip():
        raise ConfigError(f"{where} must be a non-empty string", path=path)
    return value.strip()


def _parse_model_parameters(value: Any, where: str, path: str) -> dict[str, dict[str, Any]]:
    if not isinstance(value, dict):
        raise ConfigError(f"{where}.modelParameters must be an object keyed by model id", path=path)
    out: dict[str, dict[str, Any]] = {}
    for model, params in value.items():
        if not isinstance(params, dict):
            raise ConfigError(f'{where}.modelParameters["{model}"] must be an object', path=path)
        out[str(model)] = dict(params)
    return out


def _parse_entry(provider_id: str, raw: Any, path: str) -> ProviderEntry:
    where = f'"{provider_id}"'
    if not isinstance(raw, dict):
        raise ConfigError(f"{where} must be an object", path=path)
    builtin = BUILTIN_PROVIDERS.get(provider_id)
    if builtin is None:
        problem = validate_provider_id(provider_id)
        if problem:
            raise ConfigError(f"{where}: {problem}", path=path)
        ptype = raw.get("providerType")
        if ptype not in PROVIDER_TYPES:
            raise ConfigError(
                f"{where}.providerType must be one of {', '.join(PROVIDER_TYPES)} (got {ptype!r})",
                path=path,
            )
        if "baseUrl" not in raw:
            raise ConfigError(f"{where}.baseUrl is required for a custom provider", path=path)
        provider_type: ProviderType = ptype
        allowed = _CUSTOM_KEYS
    else:
        provider_type = builtin.provider_type
        allowed = _COMMON_KEYS | _BUILTIN_EXTRA_KEYS.get(provider_id, set())

    wire_format: WireFormat | None = None
    if builtin is not None and builtin.id == "openai" and "wireFormat" in raw:
        if raw["wireFormat"] not in ("responses", "chatCompletions"):
            raise ConfigError(
                f'{where}.wireFormat must be "responses" or "chatCompletions"', path=path
            )
        wire_format = raw["wireFormat"]
        if wire_format == "chatCompletions":
            provider_type = "openai-compatible"

    base_url = None
    if "baseUrl" in raw:
        url = _expect_str(raw["baseUrl"], f"{where}.baseUrl", path)
        if builtin is not None:
            base_url = normalize_builtin_base_url(builtin, url, where=where, path=path)
        else:
            base_url = normalize_base_url(url, provider_type, where=where, path=path)

    models = raw.get("models", [])
    if not isinstance(models, list) or not all(isinstance(m, str) for m in models):
        raise ConfigError(f"{where}.models must be a list of model id strings", path=path)

    return ProviderEntry(
        id=provider_id,
        provider_type=provider_type,
        builtin=builtin,
        api_key=_expect_str(raw["apiKey"], f"{where}.apiKey", path) if "apiKey" in raw else None,
        api_key_file=(
            _expect_str(raw["apiKeyFile"], f"{where}.apiKeyFile", path)
            if "apiKeyFile" in raw
            else None
        ),
        base_url=base_url,
        wire_format=wire_format,
        display_name=str(raw["displayName"]) if "displayName" in raw else None,
        models=tuple(models),
        model_parameters=(
            _parse_model_parameters(raw["modelParameters"], where, path)
            if "modelParameters" in raw
            else {}
        ),
        extra={k: raw[k] for k in _BUILTIN_EXTRA_KEYS.get(provider_id, set()) if k in raw},
        unknown_keys=tuple(sorted(k for k in raw if k not in allowed)),
    )


def parse_providers(data: Any, path: str) -> dict[str, ProviderEntry]:
    if data is None:
        return {}
    if not isinstance(data, dict):
        raise ConfigError("the top level must be an object keyed by provider id", path=path)
    return {str(pid): _parse_entry(str(pid), raw, path) for pid, raw in data.items()}


def load_providers(path: Path | None = None) -> ProvidersConfig:
    """Parse providers.jsonc. A missing file means "built-ins only". Errors name file:line:col."""
    path = path or providers_path()
    return ProvidersConfig(path=path, entries=parse_providers(load_jsonc_file(path), str(path)))


def key_values(config: ProvidersConfig) -> dict[str, str]:
    """The keys `providers.jsonc` holds or points at, as `<id>.apiKey` / `<id>.apiKeyFile` ->
    value, for the secret masker. A key file that cannot be read is left out (the endpoint that
    needs it reports that)."""
    found: dict[str, str] = {}
    for provider_id, entry in config.entries.items():
        if entry.api_key and entry.api_key.strip():
            found[f"{provider_id}.apiKey"] = entry.api_key.strip()
        if entry.api_key_file:
            try:
                value = Path(entry.api_key_file).expanduser().read_text(encoding="utf-8").strip()
            except (OSError, UnicodeDecodeError):
                continue
            if value:
                found[f"{provider_id}.apiKeyFile"] = value
    return found


def key_file_paths(config: ProvidersConfig) -> list[str]:
    """The absolute paths of the key files `providers.jsonc` points at (`apiKeyFile`, `~`
    expanded; relative ones as the provider clients read them, from the current directory),
    whether or not they exist: xum's own credentials, which no agent may read."""
    return [
        os.path.abspath(Path(entry.api_key_file).expanduser())
        for entry in config.entries.values()
        if entry.api_key_file
    ]


def model_parameters_for(
    entry: ProviderEntry, model_id: str, effective_id: str | None = None
) -> dict[str, Any]:
    """First match wins, no merging: the effective (dated) id, then the canonical id, then "*"."""
    for key in (effective_id, model_id, "*"):
        if key is not None and key in entry.model_parameters:
            return dict(entry.model_parameters[key])
    return {}
