"""Helpers for the server tests: an in-process app behind Starlette's TestClient (real routes,
real middleware, real event loop in a thread), real git repositories, the fake LLM server."""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from xum.server.app import create_app
from xum.server.state import ServerConfig
from xum.testing.fakellm import FakeLLM

# Starlette would rather use httpx2; the httpx it supports today is what xum already ships.
warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
from starlette.testclient import TestClient  # noqa: E402
from starlette.testclient import WebSocketTestSession as WS  # noqa: E402

TOKEN = "test-token-0123456789"
BASE = "http://localhost:3000"
WS_URL = "ws://localhost:3000/api/ws"
ORIGIN = "http://localhost:3000"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MODEL = "anthropic:claude-sonnet-5-5"


@contextmanager
def server_client(token: str | None = TOKEN, **config: Any) -> Iterator[TestClient]:
    config.setdefault("maintenance_interval_s", 0.2)
    app = create_app(ServerConfig(token=token, **config))
    with TestClient(app, base_url=BASE, raise_server_exceptions=False) as client:
        yield client


def use_fake_llm(monkeypatch: pytest.MonkeyPatch, server: FakeLLM) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", server.url)


def idle(client: TestClient, wid: str) -> bool:
    """Whether workspace `wid` is idle now."""
    status = client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["status"]
    return bool(status["state"] == "idle")


def create_workspace(
    client: TestClient, project: Path, runtime: str = "local", **fields: Any
) -> dict[str, Any]:
    body = {"projectPath": str(project), "runtime": {"type": runtime}, "model": MODEL, **fields}
    res = client.post("/api/workspaces", json=body, headers=AUTH)
    assert res.status_code == 201, res.text
    data: dict[str, Any] = res.json()
    return data


def receive_json(ws: WS, timeout: float = 30.0) -> dict[str, Any]:
    """The next message, or an AssertionError after `timeout` (never hang a test run)."""
    import anyio

    async def get() -> Any:
        with anyio.fail_after(timeout):
            return await ws._send_rx.receive()

    try:
        message = ws.portal.call(get)
    except TimeoutError:
        raise AssertionError(f"no WebSocket message within {timeout} s") from None
    ws._raise_on_close(message)
    data: dict[str, Any] = json.loads(message["text"])
    return data


def receive_until(
    ws: WS, stop: Callable[[dict[str, Any]], bool], limit: int = 5000, timeout: float = 30.0
) -> list[dict[str, Any]]:
    """Messages up to and including the first for which `stop` is true."""
    out: list[dict[str, Any]] = []
    for _ in range(limit):
        try:
            msg = receive_json(ws, timeout)
        except AssertionError as exc:
            raise AssertionError(f"{exc}; received before: {out[-8:]}") from None
        out.append(msg)
        if stop(msg):
            return out
    raise AssertionError(f"no stopping message in {limit} messages: {out[-5:]}")


def subscribe(ws: WS, workspace_id: str, after: int = 0) -> list[dict[str, Any]]:
    """Subscribe `ws` to a workspace's events after seq `after`: the messages up to its
    `subscribed`."""
    ws.send_json({"type": "subscribe", "workspaceId": workspace_id, "afterSeq": after})
    return receive_until(
        ws, lambda m: m["type"] == "subscribed" and m["workspaceId"] == workspace_id
    )


@contextmanager
def subscribed(client: TestClient, workspace_id: str, after: int = 0) -> Iterator[WS]:
    """A WebSocket past its hello, subscribed to a workspace's events after seq `after`."""
    with client.websocket_connect(WS_URL, headers=AUTH) as ws:
        ws.receive_json()
        subscribe(ws, workspace_id, after)
        yield ws


def is_event(kind: str) -> Callable[[dict[str, Any]], bool]:
    return lambda m: m.get("type") == "event" and m["event"]["type"] == kind


def wait_for(predicate: Callable[[], bool], timeout: float = 10.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.02)
    raise AssertionError("condition not met in time")


def events_of(
    messages: list[dict[str, Any]], workspace_id: str | None = None
) -> list[dict[str, Any]]:
    return [
        m["event"]
        for m in messages
        if m.get("type") == "event" and (workspace_id is None or m["workspaceId"] == workspace_id)
    ]
