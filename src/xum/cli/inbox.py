"""`xum inbox`: the attention inbox of a running `xum server`, for scripts and terminals
(docs/inbox.md).

It lists what waits for a person across every workspace of the server and answers an item by
its id, through the server's `/api/inbox` routes; the server is found as the other attached
front-ends find it (`--server-url`, `XUM_SERVER_URL`, or this root's `server.lock`). An answer
given here leaves every other client's inbox at once, and the other way round.
"""

from __future__ import annotations

import sys
import time
from typing import TYPE_CHECKING, Any, NoReturn
from urllib.parse import quote

import click
import orjson

if TYPE_CHECKING:
    import httpx

    from xum.host.server_target import ServerTarget

TIMEOUT_S = 30.0


class _Server:
    """The few REST calls this command makes; errors leave as a message and exit 1."""

    def __init__(self, target: ServerTarget) -> None:
        import httpx

        self.target = target
        headers = {"Accept": "application/json"}
        if target.token:
            headers["Authorization"] = f"Bearer {target.token}"
        self.http: httpx.Client = httpx.Client(
            base_url=target.url,
            headers=headers,
            timeout=TIMEOUT_S,
            # A proxy from the environment must not see a loopback server's token.
            trust_env=not _loopback(target.url),
        )

    def call(self, method: str, path: str, body: object = None) -> dict[str, Any]:
        import httpx

        try:
            res = self.http.request(method, path, json=body)
        except httpx.HTTPError as exc:
            _fail(
                f"the xum server at {self.target.url} did not answer ({type(exc).__name__})",
                "check that it is still running (`xum server`), then try again",
            )
        try:
            data = orjson.loads(res.content) if res.content else {}
        except orjson.JSONDecodeError:
            data = {}
        if res.status_code >= 400:
            error = data.get("error") if isinstance(data, dict) else None
            if isinstance(error, dict) and isinstance(error.get("message"), str):
                _fail(error["message"], error.get("hint"))
            _fail(f"the xum server answered HTTP {res.status_code}", "its log says why")
        return data if isinstance(data, dict) else {}


def _loopback(url: str) -> bool:
    from ipaddress import ip_address
    from urllib.parse import urlsplit

    host = (urlsplit(url).hostname or "").lower()
    if host == "localhost":
        return True
    try:
        return ip_address(host).is_loopback
    except ValueError:
        return False


def _fail(message: str, hint: str | None = None) -> NoReturn:
    sys.stderr.write(f"error: {message}\n")
    if hint:
        sys.stderr.write(f"  hint: {hint}\n")
    sys.exit(1)


def _connect(ctx: click.Context) -> _Server:
    from xum.core.errors import XumError
    from xum.host.server_target import resolve_server

    options = ctx.find_root().params if ctx.parent is None else ctx.parent.params
    try:
        target = resolve_server(options.get("server_url"), options.get("auth_token"))
    except XumError as exc:
        _fail(exc.message, exc.hint)
    return _Server(target)


def _item_path(item_id: str, action: str) -> str:
    return f"/api/inbox/{quote(item_id, safe='')}/{action}"


@click.group(invoke_without_command=True)
@click.option("--json", "as_json", is_flag=True, help="Print the items as one JSON object.")
@click.option(
    "--server-url",
    default=None,
    metavar="URL",
    help="The xum server (default: $XUM_SERVER_URL, else the one running on this XUM_ROOT).",
)
@click.option(
    "--auth-token",
    default=None,
    metavar="TOKEN",
    help="Its token (default: $XUM_SERVER_AUTH_TOKEN, else the one it keeps on this root).",
)
@click.pass_context
def inbox(
    ctx: click.Context, as_json: bool, server_url: str | None, auth_token: str | None
) -> None:
    """What waits for you across every workspace of a running xum server.

    Without a command: the list (id, kind, workspace, since, what it waits for). Answer an item
    with approve, deny, answer, dismiss or read.
    """
    if ctx.invoked_subcommand is not None:
        return
    data = _connect(ctx).call("GET", "/api/inbox")
    items = [i for i in data.get("items") or [] if isinstance(i, dict)]
    if as_json:
        sys.stdout.write(orjson.dumps({"items": items}).decode() + "\n")
        return
    if not items:
        click.echo("nothing waits for you")
        return
    now = time.time()
    for item in items:
        where = f"{_project_name(item)}/{item.get('workspaceName', '?')}"
        ago = _ago(now - int(item.get("since", 0)) / 1000)
        actions = ",".join(str(a) for a in item.get("actions") or [])
        click.echo(
            f"{item.get('id')}  {item.get('kind')}  {where}  {ago}  "
            f"{item.get('summary')}  [{actions}]"
        )


@inbox.command()
@click.argument("item_id")
@click.option("--always", is_flag=True, help="Allow this command prefix from now on (project).")
@click.pass_context
def approve(ctx: click.Context, item_id: str, always: bool) -> None:
    """Approve a waiting tool call once (or --always)."""
    decision = "always" if always else "once"
    _connect(ctx).call("POST", _item_path(item_id, "approve"), {"decision": decision})
    click.echo(f"approved ({decision})")


@inbox.command()
@click.argument("item_id")
@click.option("--reason", default=None, help="Why, for the model.")
@click.pass_context
def deny(ctx: click.Context, item_id: str, reason: str | None) -> None:
    """Deny a waiting tool call (the model is told the reason)."""
    body: dict[str, Any] = {"decision": "deny"}
    if reason:
        body["reason"] = reason
    _connect(ctx).call("POST", _item_path(item_id, "approve"), body)
    click.echo("denied")


@inbox.command()
@click.argument("item_id")
@click.argument("answers", nargs=-1, required=True)
@click.pass_context
def answer(ctx: click.Context, item_id: str, answers: tuple[str, ...]) -> None:
    """Answer a waiting question: one ANSWER per question, in order (an option's label or
    your own words; several labels of a multi-select joined with ", ")."""
    server = _connect(ctx)
    listed = server.call("GET", "/api/inbox").get("items") or []
    item = next((i for i in listed if isinstance(i, dict) and i.get("id") == item_id), None)
    if item is None:
        _fail(
            "no such item is waiting in the inbox",
            "it may have been answered already; `xum inbox` lists what waits",
        )
    if item.get("kind") != "question":
        _fail(f"item {item_id} is a {item.get('kind')}, not a question")
    questions = [q for q in (item.get("detail") or {}).get("questions") or []]
    if len(answers) != len(questions):
        _fail(
            f"this item asks {len(questions)} question(s); {len(answers)} answer(s) given",
            "give one answer per question, in order (`xum inbox --json` shows them)",
        )
    body = {"answers": {str(q.get("question")): a for q, a in zip(questions, answers, strict=True)}}
    server.call("POST", _item_path(item_id, "answer"), body)
    click.echo("answered")


@inbox.command()
@click.argument("item_id")
@click.pass_context
def dismiss(ctx: click.Context, item_id: str) -> None:
    """Take a notice off the list (a question: dismiss it, as a chat message would)."""
    _connect(ctx).call("POST", _item_path(item_id, "dismiss"))
    click.echo("dismissed")


@inbox.command()
@click.argument("item_id")
@click.pass_context
def read(ctx: click.Context, item_id: str) -> None:
    """Mark the item's workspace read up to it (its notices leave)."""
    _connect(ctx).call("POST", _item_path(item_id, "read"))
    click.echo("marked read")


def _project_name(item: dict[str, Any]) -> str:
    project = str(item.get("project") or "")
    return project.rstrip("/").rsplit("/", 1)[-1] or "?"


def _ago(seconds: float) -> str:
    seconds = max(0, int(seconds))
    if seconds < 60:
        return f"{seconds}s ago"
    if seconds < 3600:
        return f"{seconds // 60}m ago"
    if seconds < 86400:
        return f"{seconds // 3600}h ago"
    return f"{seconds // 86400}d ago"
