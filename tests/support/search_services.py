"""Fake search services on 127.0.0.1, in their own JSON shapes:

* SearXNG: `GET /search?q=...&format=json` answers `query`, `number_of_results` and `results`
  (`url`, `title`, `content`, `engine`);
* the Brave Search API: `GET /res/v1/web/search?q=...&count=N` answers `web.results` (`title`,
  `url`, `description`), the request's `X-Subscription-Token` recorded.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


class SearchService:
    def __init__(self) -> None:
        self.queries: list[dict[str, list[str]]] = []  # the query string of every request
        self.paths: list[str] = []
        self.tokens: list[str | None] = []  # the X-Subscription-Token of every request
        self.results: list[dict[str, Any]] = []
        self.redirect: str | None = None  # answer the next request with a 302 to this URL
        self.status = 200
        self.url = ""


@contextmanager
def fake_search_service() -> Iterator[SearchService]:
    state = SearchService()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            state.queries.append(query)
            state.paths.append(parts.path)
            state.tokens.append(self.headers.get("X-Subscription-Token"))
            if state.redirect is not None:
                self.send_response(302)
                self.send_header("Location", state.redirect)
                state.redirect = None
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if parts.path == "/res/v1/web/search":
                brave = [
                    {"title": r.get("title"), "url": r.get("url"), "description": r.get("content")}
                    for r in state.results
                ]
                self._json({"type": "search", "web": {"type": "search", "results": brave}})
                return
            if parts.path != "/search" or query.get("format") != ["json"]:
                self.send_response(403)  # what SearXNG says when the JSON format is off
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            self._json(
                {
                    "query": query.get("q", [""])[0],
                    "number_of_results": len(state.results),
                    "results": state.results,
                }
            )

        def _json(self, data: dict[str, Any]) -> None:
            body = json.dumps(data).encode()
            self.send_response(state.status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    state.url = f"http://127.0.0.1:{server.server_address[1]}"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield state
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


def hit(n: int, **extra: Any) -> dict[str, Any]:
    """One SearXNG result."""
    return {
        "url": f"https://docs.example/page-{n}",
        "title": f"Page {n}",
        "content": f"About page {n}.",
        "engine": "duckduckgo",
        **extra,
    }
