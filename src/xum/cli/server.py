"""`xum server`: the HTTP/WebSocket server the browser UI (and other clients) use."""

from __future__ import annotations

import os
import socket
import sys
from pathlib import Path

import click

from xum.core.errors import XumError


def _bind(host: str, port: int) -> socket.socket:
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    # Prefer IPv4 for names like localhost that resolve to both (browsers try both).
    infos.sort(key=lambda info: info[0] != socket.AF_INET)
    last: OSError | None = None
    for family, kind, proto, _name, address in infos:
        sock = socket.socket(family, kind, proto)
        try:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            sock.bind(address)
            sock.listen(2048)
            sock.set_inheritable(True)
            return sock
        except OSError as exc:
            sock.close()
            last = exc
    raise XumError(
        f"cannot listen on {host}:{port}: {last.strerror if last else 'no address'}",
        hint="pick another --port, or stop what is using it",
    )


def _quiet_server_class() -> type:
    import contextlib
    from collections.abc import Iterator

    import uvicorn

    class QuietServer(uvicorn.Server):
        """uvicorn re-raises a caught SIGTERM after shutting down, which would kill the process
        before the lock file is removed; here the signals only ask it to stop (see `_serve_claimed`)."""

        @contextlib.contextmanager
        def capture_signals(self) -> Iterator[None]:
            yield

    return QuietServer


def _url_host(host: str) -> str:
    if host in ("0.0.0.0", "::", ""):
        return "localhost"
    return f"[{host}]" if ":" in host else host


@click.command()
@click.option("--host", default="localhost", show_default=True, help="Host/interface to bind to.")
@click.option(
    "--port",
    default=3000,
    show_default=True,
    type=click.IntRange(0, 65535),
    help="Port (0: any free port).",
)
@click.option("--auth-token", default=None, help="Bearer token for HTTP/WS auth.")
@click.option(
    "--no-auth", is_flag=True, help="Disable authentication entirely (trusted networks only)."
)
@click.option("--print-auth-token", is_flag=True, help="Always print the auth token on startup.")
@click.option(
    "--allow-http-origin",
    is_flag=True,
    help="Accept https browser origins when a TLS proxy forwards X-Forwarded-Proto=http.",
)
@click.option(
    "--ssh-host", default=None, help="SSH host/alias for editor deep links in the browser."
)
@click.option(
    "--add-project",
    "add_projects",
    multiple=True,
    type=click.Path(file_okay=False, exists=True, path_type=Path),
    help="Add (and open) the project at this path; repeatable.",
)
def server(
    host: str,
    port: int,
    auth_token: str | None,
    no_auth: bool,
    print_auth_token: bool,
    allow_http_origin: bool,
    ssh_host: str | None,
    add_projects: tuple[Path, ...],
) -> None:
    """Start the HTTP/WebSocket server for the browser UI and remote access."""
    from xum.server import lockfile
    from xum.server.auth import ALLOW_HTTP_ORIGIN_ENV, resolve_token

    try:
        choice = resolve_token(no_auth=no_auth, auth_token=auth_token)
        claim = lockfile.claim_root()  # atomic: of two servers started at once, one wins
        try:
            _serve_claimed(
                host,
                port,
                choice.token,
                choice.source,
                print_auth_token,
                allow_http_origin or os.environ.get(ALLOW_HTTP_ORIGIN_ENV) == "1",
                ssh_host,
                list(add_projects),
            )
        finally:
            claim.release()
    except XumError as exc:
        click.echo(f"error: {exc.message}", err=True)
        if exc.hint:
            click.echo(f"  hint: {exc.hint}", err=True)
        sys.exit(1)


def _serve_claimed(
    host: str,
    port: int,
    token: str | None,
    source: str,
    print_token: bool,
    allow_http_origin: bool,
    ssh_host: str | None,
    add_projects: list[Path],
) -> None:
    import asyncio
    import gc
    import signal
    from urllib.parse import quote

    import uvicorn

    from xum.server import lockfile
    from xum.server.app import create_app
    from xum.server.state import ServerConfig
    from xum.server.wsbatch import BatchingWebSocketProtocol
    from xum.store import registry
    from xum.workspaces.checkouts.shared import project_root

    for path in add_projects:
        registry.ensure_project(str(project_root(path)))
    sock = _bind(host, port)
    port = sock.getsockname()[1]
    url = f"http://{_url_host(host)}:{port}"
    config = ServerConfig(
        host=host,
        port=port,
        token=token,
        allow_http_origin=allow_http_origin,
        ssh_host=ssh_host,
        add_projects=[str(p) for p in add_projects],
    )
    app = create_app(config)
    uv_config = uvicorn.Config(
        app,
        log_level="warning",
        access_log=False,  # request lines would include the sign-in link's token
        # uvicorn's websockets-sansio protocol, writing one loop iteration's frames together.
        ws=BatchingWebSocketProtocol,
        lifespan="on",
        ws_max_size=1024 * 1024,
        # Events are small JSON objects sent one by one: compressing each costs more latency and
        # CPU than it saves bandwidth (measured in bench/bench_server.py).
        ws_per_message_deflate=False,
        timeout_graceful_shutdown=15,
    )
    uv_server = _quiet_server_class()(uv_config)

    def stop() -> None:
        if uv_server.should_exit:
            uv_server.force_exit = True  # a second Ctrl-C: do not wait for connections
        uv_server.should_exit = True

    def announce() -> None:
        click.echo(f"xum server listening on {url}")
        if token is None:
            click.echo(
                "authentication is OFF (--no-auth): anyone who can reach this port can use it"
            )
        elif source == "generated" or print_token:
            click.echo(f"open this link to sign in: {url}/?token={quote(token, safe='')}")
            if print_token:
                click.echo(f"auth token: {token}")
            if source == "generated":
                from xum.server.token_store import token_path

                click.echo(
                    f"the generated token is kept in {token_path()} (0600), so browsers stay "
                    "signed in across restarts; delete that file to sign every browser out"
                )
        else:
            # A token the user supplied is not echoed (stdout may be a shared log); the sign-in
            # page takes it, and --print-auth-token prints the one-click link.
            click.echo(
                f"sign in at {url}/ with the token from {source} (the page asks for it), "
                "or add --print-auth-token for a sign-in link"
            )
        sys.stdout.flush()

    lockfile.write_lock(url, token, host, port)
    try:

        async def main() -> None:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                loop.add_signal_handler(sig, stop)
            # Said only once SIGINT and SIGTERM are handled: whoever reads the line and stops
            # the server at once gets a clean stop (server.lock removed), not a default kill.
            announce()
            await uv_server.serve(sockets=[sock])

        # What is loaded by now (the app, its libraries) lives as long as the process: keep it
        # out of the garbage collector's full passes, which would otherwise walk it all (some
        # 30 ms with every stream on the loop waiting) to find nothing.
        gc.freeze()
        asyncio.run(main())
    finally:
        lockfile.remove_lock()
        sock.close()
