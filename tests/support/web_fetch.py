"""A small web server for the web_fetch tests: HTML, JSON, binary, redirects, a big body."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from xum.store.config import update_config
from xum.tools.web_fetch import MAX_BODY_BYTES

BIG_ITEMS = 5000


@contextmanager
def serve_pages() -> Iterator[tuple[int, list[dict[str, str]]]]:
    """Serve `Handler`'s pages on a free loopback port: (port, the requests seen so far)."""
    seen: list[dict[str, str]] = []
    handler = type("RecordingHandler", (Handler,), {"seen": seen})
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=httpd.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield httpd.server_address[1], seen
    finally:
        httpd.shutdown()
        httpd.server_close()


def allow(*hosts: str) -> None:
    update_config(lambda config: config.__setitem__("webFetch", {"allowHosts": list(hosts)}))


PAGE = b"""<!doctype html><html><head><title>Test  Page</title>
<script>var secret = 1;</script><style>body { color: red }</style></head>
<body><nav><a href="/">Home</a> | <a href="/about">About</a></nav>
<h1>Welcome</h1><p>Read <a href="/docs/intro">the intro</a> first.</p>
<ul><li>alpha</li><li>beta</li></ul>
<pre>code  block
  indented</pre></body></html>"""


# A text body much longer than what web_fetch shows the model, so it spills to a file.
BIG_JSON = b"[" + b",".join(b'{"n": %d}' % i for i in range(BIG_ITEMS)) + b"]"


class Handler(BaseHTTPRequestHandler):
    seen: list[dict[str, str]]

    def log_message(self, *args: Any) -> None:
        pass

    def do_GET(self) -> None:
        type(self).seen.append({"path": self.path, "host": self.headers.get("Host", "")})
        port = self.server.server_address[1]
        routes = {
            "/page": (200, "text/html; charset=utf-8", PAGE),
            "/json": (200, "application/json", b'{"ok": true}'),
            "/png": (200, "image/png", b"\x89PNG\r\n\x1a\n" + bytes(100)),
            "/missing": (404, "text/plain", b"no such page"),
            "/big": (200, "text/plain", b"x" * (MAX_BODY_BYTES + 1024 * 1024)),
            "/host": (200, "text/plain", self.headers.get("Host", "").encode()),
            "/json-big": (200, "application/json", BIG_JSON),
        }
        redirects = {
            "/to-page": "/page",
            "/to-loopback-name": f"http://localhost:{port}/page",
            "/to-metadata": "http://169.254.169.254/latest/meta-data/",
            "/loop": "/loop",
        }
        if self.path in redirects:
            self.send_response(302)
            self.send_header("Location", redirects[self.path])
            self.send_header("Content-Length", "0")
            self.end_headers()
            return
        status, content_type, body = routes.get(self.path, (404, "text/plain", b"?"))
        self.send_response(status)
        self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)
