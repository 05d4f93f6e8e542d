"""config.json `webSearch`: which kind of web search a model gets, if any.

Two kinds, each offered only where it can work:

* the provider's own, server-side search (`native: true`): Anthropic's web search tool on the
  Anthropic API, the `web_search` tool on OpenAI's Responses API. The provider runs the
  searches inside the reply; xum adds the tool to the request and records what came back.
* the client-side `web_search` tool, backed by a search API the user runs or subscribes to
  (`searxng`: the base URL of a SearXNG instance with its JSON format enabled; or `brave`: the
  Brave Search API, its key in the `BRAVE_SEARCH_API_KEY` environment variable). Offered to
  every model that does not get the native search.

Nothing is on by default: a search leaves the machine (and the native one costs per search).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

CONFIG_KEY = "webSearch"
BRAVE_URL = "https://api.search.brave.com/res/v1"
# Ends in `_API_KEY`, so it is one of xum's own secrets: kept from commands, masked in output.
BRAVE_KEY_VAR = "BRAVE_SEARCH_API_KEY"
DEFAULT_MAX_USES = 5
DEFAULT_MAX_RESULTS = 8
MAX_RESULTS_LIMIT = 20

# (provider id, wire) pairs whose API has a server-side web search tool. Only the providers'
# own endpoints: a compatible server or a proxy on the same wire may not implement the tool.
_NATIVE = frozenset({("anthropic", "anthropic"), ("openai", "openai-responses")})


@dataclass(frozen=True, slots=True)
class NativeSearch:
    """The provider-side search a request carries (`LLMRequest.web_search`)."""

    max_uses: int = DEFAULT_MAX_USES  # searches per request (Anthropic's `max_uses`)
    allowed_domains: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class WebSearchConfig:
    native: bool = False
    searxng: str | None = None  # base URL; the tool calls {base}/search?q=...&format=json
    brave: str | None = None  # base URL; the tool calls {base}/web/search?q=...&count=N
    max_uses: int = DEFAULT_MAX_USES
    max_results: int = DEFAULT_MAX_RESULTS
    allowed_domains: tuple[str, ...] = ()

    def client_backend(self, env: Mapping[str, str]) -> bool:
        """Whether the client-side tool can work: a SearXNG instance, or Brave with its key."""
        return self.searxng is not None or (
            self.brave is not None and bool(env.get(BRAVE_KEY_VAR, "").strip())
        )

    def native_search(self) -> NativeSearch:
        return NativeSearch(self.max_uses, self.allowed_domains)


def native_supported(provider: str, wire: str) -> bool:
    return (provider, wire) in _NATIVE


def web_search_config(config: Mapping[str, Any]) -> WebSearchConfig:
    """Parse config.json `webSearch`; ValueError names the key that is wrong."""
    raw = config.get(CONFIG_KEY)
    if raw is None:
        return WebSearchConfig()
    if not isinstance(raw, Mapping):
        raise ValueError(f"{CONFIG_KEY} must be an object")
    unknown = sorted(
        set(raw) - {"native", "searxng", "brave", "maxUses", "maxResults", "allowedDomains"}
    )
    if unknown:
        raise ValueError(f"{CONFIG_KEY} has unknown keys: {', '.join(unknown)}")
    native = raw.get("native", False)
    if not isinstance(native, bool):
        raise ValueError(f"{CONFIG_KEY}.native must be true or false")
    searxng = _base_url(raw.get("searxng"), "searxng")
    brave = _brave(raw.get("brave"))
    if searxng is not None and brave is not None:
        raise ValueError(f"{CONFIG_KEY} names both searxng and brave; keep one")
    return WebSearchConfig(
        native=native,
        searxng=searxng,
        brave=brave,
        max_uses=_count(raw, "maxUses", DEFAULT_MAX_USES, 50),
        max_results=_count(raw, "maxResults", DEFAULT_MAX_RESULTS, MAX_RESULTS_LIMIT),
        allowed_domains=_domains(raw.get("allowedDomains")),
    )


def _base_url(value: Any, key: str) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str) or not value.strip():
        raise ValueError(f"{CONFIG_KEY}.{key} must be a URL, e.g. http://127.0.0.1:8888")
    parts = urlsplit(value.strip())
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise ValueError(f"{CONFIG_KEY}.{key} must be an http(s) URL, not {value!r}")
    if parts.username or parts.password:
        raise ValueError(f"{CONFIG_KEY}.{key} must not carry a user name or password")
    return value.strip().rstrip("/")


def _brave(value: Any) -> str | None:
    """`brave: true` (the public API) or `{"baseUrl": ...}` (a gateway in front of it)."""
    if value is None or value is False:
        return None
    if value is True:
        return BRAVE_URL
    if isinstance(value, Mapping) and set(value) <= {"baseUrl"}:
        return _base_url(value.get("baseUrl", BRAVE_URL), "brave.baseUrl")
    raise ValueError(f'{CONFIG_KEY}.brave must be true or {{"baseUrl": "<url>"}}')


def _count(raw: Mapping[str, Any], key: str, default: int, limit: int) -> int:
    value = raw.get(key, default)
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= limit:
        raise ValueError(f"{CONFIG_KEY}.{key} must be a whole number from 1 to {limit}")
    return value


def _domains(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) and v.strip() for v in value):
        raise ValueError(f"{CONFIG_KEY}.allowedDomains must be a list of domain names")
    return tuple(v.strip().lower().rstrip(".") for v in value)


def domain_allowed(url: str, allowed: tuple[str, ...]) -> bool:
    """Whether `url`'s host is one of `allowed` or under one (no list: every host)."""
    if not allowed:
        return True
    host = (urlsplit(url).hostname or "").lower().rstrip(".")
    return any(host == d or host.endswith("." + d) for d in allowed)
