"""An MCP server for the tests, written with the official `mcp` SDK (its `MCPServer`).

Run as `python -m tests.mcp.server [--exit-at-start] [--http PORT]`: stdio by default, or
streamable HTTP on 127.0.0.1. `MCP_TEST_TOOLS` (comma-separated) picks which tools it offers
(default: all), so a test can change a server's tools by changing its config entry.
`MCP_TEST_DIR` names a directory where the server leaves its pid and its barrier files:
`started-<tool>` when a slow call begins, `cancelled-<tool>` when the client cancels it.
"""

from __future__ import annotations

import asyncio
import base64
import os
import sys
from pathlib import Path

from mcp.server.mcpserver import Context, MCPServer

# A 1x1 PNG.
PIXEL = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg=="
)
ALL_TOOLS = ("echo", "slow", "crash", "die", "whoami", "picture", "big", "grow")


def _mark(name: str) -> None:
    where = os.environ.get("MCP_TEST_DIR")
    if where:
        Path(where, name).write_text(str(os.getpid()))


def build() -> MCPServer:
    server: MCPServer = MCPServer("xum-test", log_level="CRITICAL")
    wanted = os.environ.get("MCP_TEST_TOOLS")
    chosen = set(wanted.split(",")) if wanted else set(ALL_TOOLS)

    def tool(fn):  # type: ignore[no-untyped-def]
        if fn.__name__ in chosen:
            server.tool()(fn)
        return fn

    @tool
    def echo(text: str) -> str:
        """Echo the text back, unchanged."""
        return text

    @tool
    async def slow(seconds: float) -> str:
        """Wait for the given number of seconds, then answer 'done'."""
        _mark("started-slow")
        try:
            await asyncio.sleep(seconds)
        except asyncio.CancelledError:
            _mark("cancelled-slow")
            raise
        return "done"

    @tool
    def crash() -> str:
        """A tool whose code raises."""
        raise RuntimeError("the crash tool crashed on purpose")

    @tool
    def die() -> str:
        """Make the whole server process exit mid-call."""
        print("dying now", file=sys.stderr, flush=True)
        os._exit(3)

    @tool
    def whoami() -> str:
        """The server's working directory, pid and the TEST_SECRET environment variable."""
        return f"cwd={os.getcwd()} pid={os.getpid()} secret={os.environ.get('TEST_SECRET', '')}"

    @tool
    def picture():  # type: ignore[no-untyped-def]
        """A tiny image and a resource link."""
        from mcp_types import ImageContent, ResourceLink, TextContent

        return [
            TextContent(text="here is a picture"),
            ImageContent(data=base64.b64encode(PIXEL).decode(), mime_type="image/png"),
            ResourceLink(name="readme", uri="file:///tmp/readme.md", mime_type="text/markdown"),
        ]

    @tool
    def big(lines: int) -> str:
        """Many lines of output."""
        return "\n".join(f"line {i}" for i in range(lines))

    @tool
    async def grow(ctx: Context) -> str:  # type: ignore[type-arg]
        """Add a tool named `extra` and tell the client the tool list changed."""

        def extra() -> str:
            """A tool that appeared while the server ran."""
            return "extra"

        server.add_tool(extra)
        await ctx.session.send_tool_list_changed()
        return "grew"

    @server.prompt()
    def greet(name: str, style: str = "plain") -> str:
        """A greeting prompt."""
        return f"Say hello to {name} in a {style} way."

    return server


def main() -> None:
    _mark("pid")
    print("xum test server starting", file=sys.stderr, flush=True)
    if "--exit-at-start" in sys.argv:
        print("refusing to start: --exit-at-start", file=sys.stderr, flush=True)
        sys.exit(7)
    server = build()
    if "--http" in sys.argv:
        serve_http(server, int(sys.argv[sys.argv.index("--http") + 1]))
    else:
        server.run("stdio")


def serve_http(server: MCPServer, port: int) -> None:
    """Streamable HTTP on 127.0.0.1:`port` (0: any; the port is written to MCP_TEST_DIR/port).
    With MCP_TEST_TOKEN set, a request without `Authorization: Bearer <token>` gets a 401."""
    import socket

    import uvicorn

    app = server.streamable_http_app()
    token = os.environ.get("MCP_TEST_TOKEN")

    async def guarded(scope, receive, send):  # type: ignore[no-untyped-def]
        if scope["type"] == "http" and token:
            headers = dict(scope.get("headers") or [])
            if headers.get(b"authorization") != f"Bearer {token}".encode():
                await send({"type": "http.response.start", "status": 401, "headers": []})
                await send({"type": "http.response.body", "body": b"missing token"})
                return
        await app(scope, receive, send)

    sock = socket.socket()
    sock.bind(("127.0.0.1", port))
    sock.listen(128)  # before the port is announced: an early client waits, is not refused
    _mark_text("port", str(sock.getsockname()[1]))
    config = uvicorn.Config(guarded, log_level="warning", lifespan="on")
    uvicorn.Server(config).run(sockets=[sock])


def _mark_text(name: str, text: str) -> None:
    where = os.environ.get("MCP_TEST_DIR")
    if where:
        Path(where, name + ".tmp").write_text(text)
        os.replace(Path(where, name + ".tmp"), Path(where, name))


if __name__ == "__main__":
    main()
