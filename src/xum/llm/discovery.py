"""Model discovery: ask a provider which model ids it serves, for the settings page's suggestions.

Discovery only suggests. It never adds a model to `providers.jsonc` and never changes routing; a
listed id is not a promise that the account may use it. One listing is one or a few GETs against
the provider's own model-list API, made with the provider's credential as its inference requests
send it:

| Endpoint | Request |
|---|---|
| Anthropic Messages (Anthropic, custom `anthropic-messages`) | `GET {baseUrl}/models?limit=1000` with `x-api-key` (or the bearer token) and `anthropic-version`; pages follow `has_more` / `last_id` |
| Google's default endpoint | the Gemini API's own `GET .../v1beta/models` with `x-goog-api-key`; only models that advertise `generateContent` |
| Everything else (OpenAI, xAI, DeepSeek, Moonshot AI, OpenRouter, Z.ai, Ollama, custom OpenAI-shaped) | `GET {baseUrl}/models` with `Authorization: Bearer` (none for keyless servers) |

Every listing is bounded: one deadline for all its pages, a cap on the bytes read and on the ids
kept. Redirects are not followed (a redirect could carry the key to another host). Error
messages never contain the key, even when the provider's own message quotes it.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlsplit, urlunsplit

import orjson

from xum import __version__
from xum.llm.endpoint import Endpoint, auth_headers

MODEL_ID_MAX = 200
TIMEOUT_S = 10.0
MAX_BYTES = 8 * 1024 * 1024
MAX_MODELS = 5000
MAX_PAGES = 10
CACHE_TTL_S = 60.0


def model_id_problem(model_id: str) -> str | None:
    """Why `model_id` cannot be added to a provider's `models`, or None when it can."""
    if not model_id:
        return "a model id cannot be empty"
    if len(model_id) > MODEL_ID_MAX:
        return f"a model id has at most {MODEL_ID_MAX} characters"
    if any(c.isspace() for c in model_id):
        return "a model id cannot contain spaces or other whitespace"
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in model_id):
        return "a model id cannot contain control characters"
    return None


@dataclass(frozen=True, slots=True)
class ListedModel:
    id: str
    display_name: str | None = None


@dataclass(frozen=True, slots=True)
class Listing:
    models: tuple[ListedModel, ...]
    truncated: bool  # more ids than MAX_MODELS, or more pages than MAX_PAGES
    cached: bool = False


class ListingError(Exception):
    """Why a listing failed, in words safe to show (never the key)."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message


_cache: dict[tuple[Any, ...], tuple[float, Listing]] = {}


def clear_cache() -> None:
    _cache.clear()


def _cache_key(endpoint: Endpoint) -> tuple[Any, ...]:
    # A changed key, URL or header is a different catalog; the key itself is not kept.
    digest = hashlib.sha256((endpoint.api_key or "").encode()).hexdigest()
    return (
        endpoint.provider,
        endpoint.wire,
        endpoint.base_url,
        endpoint.auth_style,
        digest,
        tuple(sorted(endpoint.headers.items())),
    )


async def list_models(endpoint: Endpoint, *, refresh: bool = False) -> Listing:
    """The ids `endpoint`'s provider lists, or ListingError. Successes are cached briefly."""
    key = _cache_key(endpoint)
    hit = _cache.get(key)
    now = time.monotonic()
    if hit is not None and not refresh and now - hit[0] < CACHE_TTL_S:
        return Listing(hit[1].models, hit[1].truncated, cached=True)
    try:
        async with asyncio.timeout(TIMEOUT_S):
            listing = await _fetch(endpoint)
    except TimeoutError:
        raise ListingError(f"no complete answer within {TIMEOUT_S:g} s") from None
    except ListingError as exc:
        # Whatever the provider or the network layer said, the key is not shown.
        raise ListingError(_scrub(exc.message, endpoint.api_key)) from None
    _cache[key] = (time.monotonic(), listing)
    return listing


# ---- One provider's catalog -------------------------------------------------------------------


def _style(endpoint: Endpoint) -> str:
    if endpoint.wire == "anthropic":
        return "anthropic"
    if endpoint.provider == "google" and endpoint.base_url.endswith("/openai"):
        return "gemini"
    return "openai"


def _headers(endpoint: Endpoint, style: str) -> dict[str, str]:
    headers = {"Accept": "application/json", "User-Agent": f"xum/{__version__}"}
    headers.update(endpoint.headers)
    if style == "anthropic":
        from xum.llm.anthropic import API_VERSION  # the wire module: only when listing

        headers["anthropic-version"] = API_VERSION
    if style != "gemini":
        headers.update(auth_headers(endpoint))
    elif endpoint.api_key and endpoint.auth_style != "none":
        headers["x-goog-api-key"] = endpoint.api_key  # the Gemini API's own header
    return headers


async def _fetch(endpoint: Endpoint) -> Listing:
    import httpx

    style = _style(endpoint)
    headers = _headers(endpoint, style)
    base = endpoint.base_url.rstrip("/")
    if style == "gemini":
        base = base.removesuffix("/openai")
    budget = _Budget()
    found: dict[str, ListedModel] = {}
    truncated = False
    cursor: str | None = None
    async with httpx.AsyncClient(follow_redirects=False, timeout=TIMEOUT_S) as client:
        for _page in range(MAX_PAGES):
            url = _page_url(base, style, cursor)
            data = await _get_json(client, url, headers, budget, endpoint.api_key)
            models, cursor = _parse(style, data)
            for model in models:
                if model.id in found:
                    continue
                if len(found) >= MAX_MODELS:
                    truncated = True
                    break
                found[model.id] = model
            if cursor is None or truncated:
                break
        else:
            truncated = cursor is not None
    return Listing(tuple(found.values()), truncated)


def _page_url(base: str, style: str, cursor: str | None) -> str:
    if style == "anthropic":
        query: dict[str, str] = {"limit": "1000"}
        if cursor:
            query["after_id"] = cursor
        return f"{base}/models?{urlencode(query)}"
    if style == "gemini":
        query = {"pageSize": "1000"}
        if cursor:
            query["pageToken"] = cursor
        return f"{base}/models?{urlencode(query)}"
    return f"{base}/models"


@dataclass
class _Budget:
    left: int = MAX_BYTES


def _shown(url: str) -> str:
    """The URL without user info or query, for messages."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


def _scrub(text: str, key: str | None) -> str:
    if key and len(key) >= 4:
        text = text.replace(key, "***")
    return text


async def _get_json(
    client: Any, url: str, headers: dict[str, str], budget: _Budget, key: str | None
) -> Any:
    import httpx

    shown = _shown(url)
    try:
        async with client.stream("GET", url, headers=headers) as response:
            chunks: list[bytes] = []
            async for chunk in response.aiter_bytes():
                budget.left -= len(chunk)
                if budget.left < 0:
                    raise ListingError(
                        f"the catalog from {shown} is larger than {MAX_BYTES // (1024 * 1024)} MiB"
                    )
                chunks.append(chunk)
            status = response.status_code
    except httpx.HTTPError as exc:
        reason = _scrub(str(exc) or type(exc).__name__, key)
        raise ListingError(f"cannot reach {shown}: {reason}") from None
    raw = b"".join(chunks)
    if 300 <= status < 400:
        raise ListingError(
            f"HTTP {status} from {shown}: redirects are not followed; point baseUrl at the API"
        )
    if status >= 400:
        detail = _error_detail(raw)
        hint = " (check the API key)" if status in (401, 403) else ""
        if status == 404:
            hint = " (this server may not offer a model list; enter ids by hand)"
        suffix = f": {_scrub(detail, key)}" if detail else ""
        raise ListingError(f"HTTP {status} from {shown}{suffix}{hint}")
    try:
        return orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise ListingError(f"the answer from {shown} is not JSON") from None


def _error_detail(raw: bytes) -> str:
    try:
        data = orjson.loads(raw)
    except orjson.JSONDecodeError:
        text = raw.decode("utf-8", "replace").strip()
        return " ".join(text.split())[:200]
    message: Any = None
    if isinstance(data, dict):
        err = data.get("error")
        if isinstance(err, dict):
            message = err.get("message")
        elif isinstance(err, str):
            message = err
        message = message or data.get("message") or data.get("detail")
    if isinstance(data, list) and data and isinstance(data[0], dict):
        return _error_detail(orjson.dumps(data[0]))  # Gemini wraps errors in a list
    return " ".join(str(message).split())[:200] if message else ""


def _clean_id(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value if model_id_problem(value) is None else None


def _name(value: Any) -> str | None:
    if not isinstance(value, str) or not value.strip():
        return None
    return " ".join(value.split())[:200]


def _parse(style: str, data: Any) -> tuple[list[ListedModel], str | None]:
    """The models of one page and the cursor of the next page (None: the last page)."""
    if style == "gemini":
        return _parse_gemini(data)
    items: Any = None
    if isinstance(data, dict):
        items = data.get("data")
        if items is None:
            items = data.get("models")  # a few OpenAI-shaped servers use "models"
    elif isinstance(data, list):
        items = data
    if not isinstance(items, list):
        raise ListingError("the answer has no model list (expected a `data` array)")
    out = []
    for item in items:
        if isinstance(item, str):
            model_id, name = _clean_id(item), None
        elif isinstance(item, dict):
            model_id = _clean_id(item.get("id") or item.get("model") or item.get("name"))
            name = _name(item.get("display_name") or item.get("name"))
        else:
            continue
        if model_id is not None:
            out.append(ListedModel(model_id, name if name != model_id else None))
    cursor = None
    if style == "anthropic" and isinstance(data, dict) and data.get("has_more") is True:
        last = data.get("last_id")
        cursor = last if isinstance(last, str) and last else None
    return out, cursor


def _parse_gemini(data: Any) -> tuple[list[ListedModel], str | None]:
    if not isinstance(data, dict) or not isinstance(data.get("models", []), list):
        raise ListingError("the answer has no model list (expected a `models` array)")
    out = []
    for item in data.get("models", []):
        if not isinstance(item, dict):
            continue
        methods = item.get("supportedGenerationMethods")
        if not isinstance(methods, list) or "generateContent" not in methods:
            continue
        raw = item.get("name")
        model_id = _clean_id(raw.removeprefix("models/") if isinstance(raw, str) else None)
        if model_id is not None:
            name = _name(item.get("displayName"))
            out.append(ListedModel(model_id, name if name != model_id else None))
    token = data.get("nextPageToken")
    return out, token if isinstance(token, str) and token else None
