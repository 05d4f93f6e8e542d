"""A fake SearXNG instance on 127.0.0.1: `GET /search?q=...&format=json` answers the instance's
JSON shape (`query`, `number_of_results`, `results` with `url`, `title`, `content`, `engine`)."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import parse_qs, urlsplit


class FakeSearxng:
    def __init__(self) -> None:
        self.queries: list[dict[str, list[str]]] = []  # the query string of every request
        self.results: list[dict[str, Any]] = []
        self.redirect: str | None = None  # answer 302 to this URL instead
        self.status = 200
        self.url = ""


@contextmanager
def fake_searxng() -> Iterator[FakeSearxng]:
    state = FakeSearxng()

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            parts = urlsplit(self.path)
            query = parse_qs(parts.query)
            state.queries.append(query)
            if state.redirect is not None:
                self.send_response(302)
                self.send_header("Location", state.redirect)
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            if parts.path != "/search" or query.get("format") != ["json"]:
                self.send_response(403)  # what SearXNG says when the JSON format is off
                self.send_header("Content-Length", "0")
                self.end_headers()
                return
            body = json.dumps(
                {
                    "query": query.get("q", [""])[0],
                    "number_of_results": len(state.results),
                    "results": state.results,
                }
            ).encode()
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
