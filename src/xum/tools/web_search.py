"""web_search: search the web through the search API the user configured: a SearXNG instance
(`GET {base}/search?q=...&format=json`) or the Brave Search API (`GET {base}/web/search?q=...`,
its key from `BRAVE_SEARCH_API_KEY` in an `X-Subscription-Token` header).

Offered only when config.json `webSearch` names one and the model does not get its provider's
own search instead (xum.llm.websearch). The request goes through web_fetch's SSRF guard: the
configured service's host and port are opened for this request only, because the user named it
(a SearXNG on 127.0.0.1 is the usual setup); any other private address stays refused, redirects
included, and the Brave key goes to the configured URL only (never along a redirect). The model
gets titles, links and snippets, bounded in count and size; reading a page is web_fetch's job,
under the same guard.
"""

from __future__ import annotations

import html
import os
import re
from typing import Any, ClassVar
from urllib.parse import urlencode, urlsplit

import orjson
from pydantic import Field

from xum.core.errors import ConfigError
from xum.llm.websearch import BRAVE_KEY_VAR, WebSearchConfig, domain_allowed, web_search_config
from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput
from xum.tools.ssrf import AllowRule, Refused, Resolver, load_allow_rules, system_resolver
from xum.tools.web_fetch import FetchedPage, FetchFailed, fetch

MAX_QUERY_CHARS = 400
MAX_RESPONSE_BYTES = 2 * 1024 * 1024
TIMEOUT_S = 20.0
MAX_TITLE_CHARS = 200
MAX_SNIPPET_CHARS = 400
MAX_URL_CHARS = 500
_TAG = re.compile(r"<[^>]*>")  # Brave marks the matched words with <strong>


class WebSearchInput(ToolInput):
    query: str = Field(description="What to search the web for (a few keywords work best).")


class WebSearchTool(Tool):
    name = "web_search"
    description = (
        "Search the web and get back a short list of results: title, URL and a snippet for each "
        "(at most 20; the user's configuration sets how many). Use it to find current "
        "information, documentation or sources, then read a result with web_fetch."
    )
    Input: ClassVar[type[ToolInput]] = WebSearchInput
    read_only = True

    def __init__(self, resolver: Resolver | None = None) -> None:
        self.resolver = resolver or system_resolver

    def summary(self, args: WebSearchInput) -> str:
        return args.query

    async def run(self, args: WebSearchInput, ctx: ToolContext) -> ToolResult:
        from xum.store.config import read_config

        query = " ".join(args.query.split())
        if not query:
            return error("the query is empty; say what to search for")
        if len(query) > MAX_QUERY_CHARS:
            return error(f"the query is over {MAX_QUERY_CHARS} characters; shorten it")
        try:
            config = web_search_config(read_config())
        except ValueError as exc:
            return error(f"web search is misconfigured: {exc} (config.json; see docs/tools.md)")
        if config.searxng is not None:
            url = f"{config.searxng}/search?" + urlencode({"q": query, "format": "json"})
            return await self._search("searxng", query, config.searxng, url, {}, config)
        if config.brave is not None:
            key = os.environ.get(BRAVE_KEY_VAR, "").strip()
            if not key:
                return error(
                    f"the Brave Search API needs its key: the user can set {BRAVE_KEY_VAR} in "
                    "xum's environment (docs/tools.md)"
                )
            url = f"{config.brave}/web/search?" + urlencode(
                {"q": query, "count": config.max_results}
            )
            headers = {"Accept": "application/json", "X-Subscription-Token": key}
            return await self._search("brave", query, config.brave, url, headers, config)
        return error(
            "web search has no search service configured: the user can set "
            '"webSearch": {"searxng": "<instance URL>"} in config.json (docs/tools.md)'
        )

    async def _search(
        self,
        backend: str,
        query: str,
        base: str,
        url: str,
        headers: dict[str, str],
        config: WebSearchConfig,
    ) -> ToolResult:
        try:
            rules, problems = load_allow_rules()
        except ConfigError as exc:
            rules, problems = [], [exc.message]
        try:
            page = await fetch(
                url,
                resolver=self.resolver,
                rules=[*rules, _configured_host(base)],
                timeout_s=TIMEOUT_S,
                max_bytes=MAX_RESPONSE_BYTES,
                headers=headers,
            )
        except Refused as exc:
            return error(f"the search service was refused: {exc}", refused=True)
        except FetchFailed as exc:
            return error(f"the search service at {base} did not answer: {exc}")
        data = _json(page, base, backend)
        if isinstance(data, ToolResult):
            return data
        raw = _results(data, backend)
        hits = _hits(raw, config)
        return ToolResult(
            output=_render(query, hits, len(raw)),
            meta={
                "backend": backend,
                "query": query,
                "results": [{"title": h["title"], "url": h["url"]} for h in hits],
                "config_problems": problems,
            },
        )


def _configured_host(base: str) -> AllowRule:
    """The one destination the user opened by configuring it: the service's host and port."""
    parts = urlsplit(base)
    port = parts.port or (443 if parts.scheme == "https" else 80)
    return AllowRule(host=(parts.hostname or "").lower().rstrip("."), port=port)


def _json(page: FetchedPage, base: str, backend: str) -> Any:
    """The answer's JSON, or an error result the model can pass on."""
    if page.status != 200:
        hint = ""
        if backend == "searxng" and page.status == 403:
            hint = " (is the JSON format enabled in its settings.yml?)"
        elif backend == "brave" and page.status in (401, 403, 422):
            hint = f" (is {BRAVE_KEY_VAR} a valid key?)"
        return error(f"the search service at {base} answered {page.status}{hint}")
    try:
        return orjson.loads(page.body)
    except orjson.JSONDecodeError:
        cut = " (the answer was cut at 2 MB)" if page.body_truncated else ""
        return error(f"the search service at {base} did not send JSON{cut}")


def _results(data: Any, backend: str) -> list[dict[str, Any]]:
    """The results in one shape: `url`, `title` and `content` (the snippet)."""
    if not isinstance(data, dict):
        return []
    if backend == "brave":
        web = data.get("web")
        raw = web.get("results") if isinstance(web, dict) else None
        return [
            {
                "url": item.get("url"),
                "title": _plain(item.get("title")),
                "content": _plain(item.get("description")),
            }
            for item in (raw if isinstance(raw, list) else [])
            if isinstance(item, dict)
        ]
    raw = data.get("results")
    return [item for item in (raw if isinstance(raw, list) else []) if isinstance(item, dict)]


def _plain(value: Any) -> str:
    """A Brave field as text: its highlighting tags dropped, its entities decoded."""
    return html.unescape(_TAG.sub("", str(value or "")))


def _clip(value: Any, limit: int) -> str:
    text = " ".join(str(value or "").split())
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _hits(raw: list[dict[str, Any]], config: WebSearchConfig) -> list[dict[str, str]]:
    hits: list[dict[str, str]] = []
    seen: set[str] = set()
    for item in raw:
        if not isinstance(item.get("url"), str):
            continue
        url = item["url"].strip()
        if urlsplit(url).scheme not in ("http", "https") or len(url) > MAX_URL_CHARS:
            continue
        if url in seen or not domain_allowed(url, config.allowed_domains):
            continue
        seen.add(url)
        hits.append(
            {
                "title": _clip(item.get("title"), MAX_TITLE_CHARS) or url,
                "url": url,
                "snippet": _clip(item.get("content"), MAX_SNIPPET_CHARS),
            }
        )
        if len(hits) >= config.max_results:
            break
    return hits


def _render(query: str, hits: list[dict[str, str]], found: int) -> str:
    if not hits:
        return f'No results for "{query}".'
    lines = [f'Results for "{query}" ({len(hits)} shown of {found}):']
    for n, hit in enumerate(hits, 1):
        lines.append("")
        lines.append(f"{n}. {hit['title']}")
        lines.append(f"   {hit['url']}")
        if hit["snippet"]:
            lines.append(f"   {hit['snippet']}")
    return "\n".join(lines)
