"""The WebSocket at `/api/ws`: one per client, workspace streams multiplexed over it.

Two tasks per connection: the reader handles subscribe / unsubscribe / ping; the writer drains
the client's bounded outbox (see `outbox.py`) into the socket. Auth and Origin were checked by
the middleware before the handshake was accepted.
"""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import orjson
from fastapi import APIRouter, WebSocket, WebSocketDisconnect

from xum.core.errors import XumError
from xum.core.version import version_string
from xum.server.hub import Client, dumps
from xum.server.state import ServerState, get_state
from xum.store import registry

router = APIRouter()

PROTOCOL = 1
MAX_CLIENT_MESSAGE = 64 * 1024


def _error(code: str, message: str) -> str:
    return dumps({"type": "error", "error": {"code": code, "message": message}})


async def _writer(websocket: WebSocket, client: Client) -> None:
    while True:
        text = await client.outbox.get()
        if text is None:
            return
        await websocket.send_text(text)


async def _handle(state: ServerState, client: Client, raw: str) -> None:
    if len(raw) > MAX_CLIENT_MESSAGE:
        client.outbox.put_control(_error("invalid_message", "message too large"))
        return
    try:
        msg: Any = orjson.loads(raw)
    except orjson.JSONDecodeError:
        client.outbox.put_control(_error("invalid_message", "not JSON"))
        return
    if not isinstance(msg, dict):
        client.outbox.put_control(_error("invalid_message", "expected a JSON object"))
        return
    kind = msg.get("type")
    if kind == "ping":
        client.outbox.put_control(dumps({"type": "pong", "id": msg.get("id")}))
        return
    if kind == "inbox-subscribe":
        # The inbox as it is, then every change: one loop step, so nothing falls between.
        items = [item.to_json() for item in state.hosts.inbox.items()]
        client.outbox.put_control(dumps({"type": "inbox", "items": items}))
        client.inbox = True
        return
    if kind == "notifications-subscribe":
        # From now on, every notification (docs/notifications.md); none are kept for later.
        client.notifications = True
        return
    if kind not in ("subscribe", "unsubscribe"):
        client.outbox.put_control(_error("invalid_message", f"unknown message type {kind!r}"))
        return
    ws_id = msg.get("workspaceId")
    if not isinstance(ws_id, str) or not ws_id:
        client.outbox.put_control(_error("invalid_message", "workspaceId is required"))
        return
    if kind == "unsubscribe":
        state.hub.unsubscribe(client, ws_id)
        return
    after = msg.get("afterSeq", 0)
    if type(after) is not int or after < 0:
        client.outbox.put_control(_error("invalid_message", "afterSeq must be an integer >= 0"))
        return
    if ws_id not in state.hub.channels and registry.get_workspace(ws_id) is None:
        client.outbox.put_control(_error("not_found", f"no workspace with id '{ws_id[:80]}'"))
        return
    try:
        await state.hub.subscribe(client, ws_id, after)
    except XumError as exc:
        client.outbox.put_control(_error(exc.code, exc.message))


@router.websocket("/api/ws")
async def events_socket(websocket: WebSocket) -> None:
    state = get_state(websocket)
    await websocket.accept()
    client = state.hub.connect()
    client.outbox.put_control(
        dumps({"type": "hello", "protocol": PROTOCOL, "serverVersion": version_string()})
    )
    known = [r.id for r in await asyncio.to_thread(registry.list_workspaces)]
    state.hub.send_statuses(client, known)
    writer = asyncio.create_task(_writer(websocket, client), name=f"ws writer {client.id}")
    try:
        while True:
            reader = asyncio.ensure_future(websocket.receive_text())
            done, _ = await asyncio.wait({reader, writer}, return_when=asyncio.FIRST_COMPLETED)
            if writer in done:
                reader.cancel()
                with contextlib.suppress(BaseException):
                    await reader
                break
            try:
                raw = reader.result()
            except (WebSocketDisconnect, RuntimeError, KeyError):
                break
            await _handle(state, client, raw)
    finally:
        state.hub.disconnect(client)
        writer.cancel()
        with contextlib.suppress(BaseException):
            await writer
        with contextlib.suppress(Exception):
            await websocket.close()
