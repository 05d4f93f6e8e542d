"""web_fetch: GET one http(s) URL behind the SSRF guard and return it as readable text."""

from __future__ import annotations

import asyncio
import codecs
import re
import ssl
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar
from urllib.parse import urljoin

import httpx
from pydantic import Field

from xum import __version__
from xum.core.errors import ConfigError
from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.bounds import bound_text
from xum.tools.html_text import html_to_text
from xum.tools.input import ToolInput
from xum.tools.ssrf import (
    AllowRule,
    Refused,
    Resolver,
    check_destination,
    load_allow_rules,
    system_resolver,
)

MAX_REDIRECTS = 5
MAX_BODY_BYTES = 5 * 1024 * 1024
TIMEOUT_S = 30.0
OUTPUT_HEAD_BYTES = 48 * 1024
OUTPUT_TAIL_BYTES = 8 * 1024
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
_DEFAULT_PORTS = {"http": 80, "https": 443}
_META_CHARSET = re.compile(rb"""<meta[^>]+charset\s*=\s*["']?\s*([A-Za-z0-9_.:-]+)""", re.I)
_TEXT_TYPES = (
    "application/json",
    "application/xml",
    "application/javascript",
    "application/x-javascript",
    "application/ld+json",
    "application/rss+xml",
    "application/atom+xml",
    "application/x-yaml",
    "application/yaml",
    "application/toml",
    "application/x-sh",
    "application/sql",
)


class WebFetchInput(ToolInput):
    url: str = Field(description="The http:// or https:// URL to fetch.")


@dataclass(slots=True)
class FetchedPage:
    url: str  # the final URL, after redirects
    status: int
    reason: str
    content_type: str
    body: bytes
    body_truncated: bool
    redirects: list[str] = field(default_factory=list)


class FetchFailed(Exception):
    """A fetch that did not produce a response; the message is meant for the model."""


async def fetch(
    url: str,
    *,
    resolver: Resolver = system_resolver,
    rules: list[AllowRule] | None = None,
    timeout_s: float = TIMEOUT_S,
    max_bytes: int = MAX_BODY_BYTES,
    verify: ssl.SSLContext | bool = True,
    headers: Mapping[str, str] | None = None,
) -> FetchedPage:
    """GET `url`, checking every hop with the SSRF guard and following at most 5 redirects.

    Raises Refused (the guard said no) or FetchFailed (network, TLS, protocol, time).
    `verify` is httpx's: True checks certificates against the bundled roots; an SSLContext
    brings its own (tests, private CAs). `headers` go with the first request only: a
    credential for `url`'s service must not follow a redirect anywhere.
    """
    rules = rules or []
    redirects: list[str] = []
    try:
        async with (
            asyncio.timeout(timeout_s),
            httpx.AsyncClient(
                trust_env=False,  # a proxy would do its own DNS lookup, past the guard
                follow_redirects=False,  # every hop is checked here
                timeout=httpx.Timeout(timeout_s),
                headers={"User-Agent": f"xum/{__version__} (web_fetch)"},
                verify=verify,
            ) as client,
        ):
            current = url
            extra = dict(headers or {})
            for _ in range(MAX_REDIRECTS + 1):
                page = await _fetch_once(client, current, resolver, rules, max_bytes, extra)
                extra = {}
                if isinstance(page, str):
                    redirects.append(page)
                    current = page
                    continue
                page.redirects = redirects
                return page
    except TimeoutError:
        raise FetchFailed(f"timed out after {timeout_s:g} s") from None
    except httpx.HTTPError as exc:
        raise FetchFailed(f"{type(exc).__name__}: {exc or 'request failed'}") from None
    raise Refused(f"more than {MAX_REDIRECTS} redirects (last: {current}); stopped")


async def _fetch_once(
    client: httpx.AsyncClient,
    url: str,
    resolver: Resolver,
    rules: list[AllowRule],
    max_bytes: int,
    extra_headers: dict[str, str],
) -> FetchedPage | str:
    """One hop: the page, or the next URL when the server redirects."""
    try:
        parsed = httpx.URL(url)
    except (httpx.InvalidURL, ValueError) as exc:
        raise Refused(f"not a valid URL: {url} ({exc})") from None
    if parsed.scheme not in _DEFAULT_PORTS:
        raise Refused(f"only http and https URLs can be fetched, not {parsed.scheme or url!r}")
    if parsed.userinfo:
        raise Refused("URLs with a user name or password are refused")
    if not parsed.raw_host:
        raise Refused(f"{url} has no host")
    host = parsed.raw_host.decode("ascii")
    port = parsed.port or _DEFAULT_PORTS[parsed.scheme]
    address = await check_destination(host, port, resolver=resolver, rules=rules)
    # Connect to the address that was checked; the name travels in Host and in TLS SNI, and
    # the certificate is verified against the name.
    target = parsed.copy_with(host=address, fragment=None)
    extensions = {"sni_hostname": host} if parsed.scheme == "https" else {}
    request = client.build_request(
        "GET",
        target,
        headers={
            "Host": parsed.netloc.decode("ascii"),
            "Accept": "text/html, text/plain;q=0.9, application/json;q=0.8, */*;q=0.5",
            **extra_headers,
        },
        extensions=extensions,
    )
    response = await client.send(request, stream=True)
    try:
        location: str | None = response.headers.get("location")
        if response.status_code in _REDIRECTS and location:
            return urljoin(str(parsed.copy_with(fragment=None)), location)
        body = bytearray()
        truncated = False
        async for chunk in response.aiter_bytes():
            body += chunk
            if len(body) > max_bytes:
                del body[max_bytes:]
                truncated = True
                break
        return FetchedPage(
            url=str(parsed),
            status=response.status_code,
            reason=response.reason_phrase,
            content_type=response.headers.get("content-type", ""),
            body=bytes(body),
            body_truncated=truncated,
        )
    finally:
        await response.aclose()


def page_text(page: FetchedPage) -> tuple[str | None, str]:
    """(title, readable text); raises FetchFailed for content that is not text."""
    media = page.content_type.split(";", 1)[0].strip().lower()
    charset = _charset(page)
    if media in ("text/html", "application/xhtml+xml") or (not media and _looks_html(page.body)):
        title, text = html_to_text(page.body.decode(charset, errors="replace"), page.url)
        return title or None, text
    if media.startswith("text/") or media in _TEXT_TYPES or media.endswith(("+json", "+xml")):
        return None, page.body.decode(charset, errors="replace")
    if not media and b"\0" not in page.body[:8192]:
        return None, page.body.decode(charset, errors="replace")
    raise FetchFailed(
        f"the response is {media or 'untyped binary data'} ({len(page.body):,} bytes), not "
        "text; web_fetch reads HTML and text only. Download it with bash (curl -o) to inspect it."
    )


def _charset(page: FetchedPage) -> str:
    match = re.search(r"charset\s*=\s*\"?([A-Za-z0-9_.:-]+)", page.content_type, re.I)
    found: str | None = match.group(1) if match else None
    if found is None:
        meta = _META_CHARSET.search(page.body[:4096])
        found = meta.group(1).decode("ascii") if meta else None
    try:
        return "utf-8" if found is None else codecs.lookup(found).name
    except LookupError:
        return "utf-8"


def _looks_html(body: bytes) -> bool:
    head = body[:1024].lstrip().lower()
    return head.startswith((b"<!doctype html", b"<html")) or b"<body" in head


class WebFetchTool(Tool):
    name = "web_fetch"
    description = (
        "Fetch an http(s) URL and return the page as readable text: HTML becomes Markdown-like "
        "text (headings, links, lists, code), other text types come back as they are. Only "
        "public addresses are reachable (private, loopback and cloud-metadata addresses are "
        "refused, redirects included); at most 5 redirects, 5 MB and 30 s. Long pages keep "
        "their start and end, with the full text saved to a file named in the result. Binary "
        "content (images, PDFs, archives) is refused."
    )
    Input: ClassVar[type[ToolInput]] = WebFetchInput
    read_only = True

    def __init__(
        self, resolver: Resolver | None = None, verify: ssl.SSLContext | bool = True
    ) -> None:
        self.resolver = resolver or system_resolver
        self.verify = verify

    def summary(self, args: WebFetchInput) -> str:
        return args.url

    async def run(self, args: WebFetchInput, ctx: ToolContext) -> ToolResult:
        try:
            rules, problems = load_allow_rules()
        except ConfigError as exc:
            rules, problems = [], [exc.message]
        try:
            page = await fetch(
                args.url.strip(), resolver=self.resolver, rules=rules, verify=self.verify
            )
            # Off the event loop: converting a large page takes a while, and in the server the
            # loop is every workspace's.
            title, text = await asyncio.to_thread(page_text, page)
        except Refused as exc:
            return error(str(exc), refused=True)
        except FetchFailed as exc:
            return error(f"fetching {args.url} failed: {exc}")
        header = [f"URL: {page.url}"]
        if page.redirects:
            header.append(f"Redirected from: {args.url}")
        header.append(f"Status: {page.status} {page.reason}".rstrip())
        if page.content_type:
            header.append(f"Content-Type: {page.content_type}")
        if title:
            header.append(f"Title: {title}")
        body = text.strip() or "(empty body)"
        if page.body_truncated:
            body += f"\n[the response was cut at {MAX_BODY_BYTES // (1024 * 1024)} MB]"
        output, spill = await bound_text(
            "\n".join(header) + "\n\n" + body,
            runtime=ctx.runtime,
            scratch_dir=ctx.scratch_dir,
            suffix=".md",
            head_bytes=OUTPUT_HEAD_BYTES,
            tail_bytes=OUTPUT_TAIL_BYTES,
        )
        return ToolResult(
            output=output,
            is_error=page.status >= 400,
            meta={
                "url": page.url,
                "status": page.status,
                "content_type": page.content_type,
                "bytes": len(page.body),
                "body_truncated": page.body_truncated,
                "redirects": page.redirects,
                "spill_path": spill,
                "config_problems": problems,
            },
        )
