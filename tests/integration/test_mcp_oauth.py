"""OAuth for HTTP MCP servers, against a local OAuth-protected server built with the SDK's auth
(tests/mcp/oauth_server.py: authorization server and resource server on 127.0.0.1).

A session meets the server: it needs sign-in (status and advisory), the session goes on. The
sign-in starts through xum's server app, the authorization step is driven with httpx instead of
a browser (the authorization server approves at once and redirects to xum's callback), the
tokens are stored 0600; the same session's next message uses the server, a second session
reuses the stored token without signing in again, and an expired token is refreshed by the SDK.
The tokens never appear in events, session logs or xum's logs."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.integration.server_support import AUTH, server_client
from tests.mcp import oauth_server
from tests.mcp.support import write_config
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.opening import open_session

pytestmark = pytest.mark.repo(name="proj", files={"app.py": "x = 1\n"}, message="first")


@pytest.fixture
def oauth_mcp(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """The server's MCP URL and the directory where it counts registrations and refreshes."""
    marks = tmp_path / "oauth-marks"
    marks.mkdir()
    env = {**os.environ, "MCP_TEST_DIR": str(marks)}
    proc = subprocess.Popen([sys.executable, oauth_server.__file__], env=env)
    try:
        deadline = time.monotonic() + 30
        while not (marks / "port").exists():
            assert proc.poll() is None, "the OAuth test server exited"
            assert time.monotonic() < deadline, "the OAuth test server did not start"
            time.sleep(0.02)
        yield f"http://127.0.0.1:{(marks / 'port').read_text()}/mcp", marks
    finally:
        proc.terminate()
        proc.wait(10)


def count(marks: Path, name: str) -> int:
    path = marks / name
    return int(path.read_text()) if path.exists() else 0


def results(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "tool-result"]


def search() -> Any:
    return fakellm.tool_call("tool_catalog_search", {"query": "echo"})


def sign_in() -> None:
    """What the browser does: start the sign-in, follow the authorization URL (the server
    approves at once), and land on xum's callback with the code."""
    with server_client() as client:
        res = client.post("/api/mcp/oauth/start", json={"name": "web"}, headers=AUTH)
        assert res.status_code == 200, res.text
        started = res.json()
        assert started["signedIn"] is False and started["authorizationUrl"]
        approved = httpx.get(started["authorizationUrl"], follow_redirects=False, timeout=30)
        assert approved.status_code in (302, 303, 307), approved.text
        back = httpx.URL(approved.headers["location"])
        assert back.path == "/api/mcp/oauth/callback"
        # No xum token: the browser arrives from the authorization server.
        page = client.get(f"{back.path}?{back.query.decode()}")
        assert page.status_code == 200, page.text
        assert "Signed in to web" in page.text
        # The state is used up: the same link does nothing a second time.
        again = client.get(f"{back.path}?{back.query.decode()}")
        assert again.status_code == 400 and "No sign-in is waiting" in again.text


async def test_sign_in_then_sessions_use_and_refresh_the_token(
    repo: Path, fake_llm: FakeLLM, xum_root: Path, oauth_mcp: tuple[str, Path]
) -> None:
    url, marks = oauth_mcp
    # Tool search on (the default): the session's tool list was frozen before the server had
    # tools, and a search loads them.
    write_config(xum_root / "mcp.jsonc", {"web": {"url": url}})
    seen: list[dict[str, Any]] = []

    async with open_session(repo, fake_llm, name_hint="oauth") as (session, events):
        fake_llm.script(fakellm.text("no tools yet"))
        await session.agent.run_turn("hello")
        told = [e for e in events if e["type"] == "advisory" and e["kind"] == "mcp-sign-in"]
        advisories = [(e["kind"], e["message"]) for e in events if e["type"] == "advisory"]
        assert len(told) == 1, advisories  # what the session said instead, if it failed
        assert "'web' needs you to sign in" in told[0]["message"]
        assert session.mcp is not None
        assert {s.name: s.status for s in session.mcp.states()} == {"web": "needs-sign-in"}

        sign_in()
        store = xum_root / "mcp-oauth.json"
        assert stat.S_IMODE(store.stat().st_mode) == 0o600
        tokens = json.loads(store.read_text())[url]["tokens"]
        first_access, first_refresh = tokens["access_token"], tokens["refresh_token"]

        # The same session picks the server up with its next message (no 30 s retry wait).
        fake_llm.script(
            search(),
            fakellm.tool_call("mcp__web__echo", {"text": "signed in"}),
            fakellm.text("done"),
        )
        await session.agent.run_turn("again")
        found, echo = results(events)
        assert "mcp__web__echo" in found["output"]
        assert echo["output"] == "signed in" and not echo["is_error"]
        seen += events
    assert count(marks, "authorized") == 1

    # A second session reuses the stored token: no new sign-in, no new registration.
    registered = count(marks, "registered")
    async with open_session(repo, fake_llm, name_hint="oauth2") as (session, events):
        fake_llm.script(
            search(), fakellm.tool_call("mcp__web__echo", {"text": "two"}), fakellm.text("ok")
        )
        await session.agent.run_turn("second")
        _, echo = results(events)
        assert echo["output"] == "two" and not echo["is_error"]
        assert not [e for e in events if e.get("kind") == "mcp-sign-in"]
        seen += events
    assert count(marks, "authorized") == 1 and count(marks, "registered") == registered
    assert count(marks, "refreshed") == 0

    # The stored token expired: the SDK refreshes it before the first request.
    data = json.loads(store.read_text())
    data[url]["tokens"]["expires_at"] = time.time() - 60
    store.write_text(json.dumps(data))
    async with open_session(repo, fake_llm, name_hint="oauth3") as (session, events):
        fake_llm.script(
            search(), fakellm.tool_call("mcp__web__echo", {"text": "3"}), fakellm.text("ok")
        )
        await session.agent.run_turn("third")
        _, echo = results(events)
        assert echo["output"] == "3" and not echo["is_error"]
        seen += events
    assert count(marks, "refreshed") == 1 and count(marks, "authorized") == 1
    refreshed = json.loads(store.read_text())[url]["tokens"]
    assert refreshed["access_token"] != first_access
    assert refreshed["expires_at"] > time.time()

    # The tokens never reach events, session logs or xum's logs.
    secrets = {first_access, first_refresh, refreshed["access_token"], refreshed["refresh_token"]}
    dumped = json.dumps(seen)
    assert not [s for s in secrets if s in dumped]
    for path in xum_root.rglob("*"):
        if path.is_file() and path != store and not path.name.endswith(".lock"):
            body = path.read_bytes()
            assert not [s for s in secrets if s.encode() in body], path


async def test_servers_with_their_own_authorization_header_get_no_oauth(
    repo: Path, fake_llm: FakeLLM, xum_root: Path, oauth_mcp: tuple[str, Path]
) -> None:
    url, marks = oauth_mcp
    write_config(
        xum_root / "mcp.jsonc",
        {"web": {"url": url, "headers": {"Authorization": "Bearer not-a-token"}}},
        toolSearch=False,
    )
    async with open_session(repo, fake_llm, name_hint="static") as (session, events):
        fake_llm.script(fakellm.text("ok"))
        await session.agent.run_turn("hello")
        failed = [e for e in events if e["type"] == "advisory" and e["kind"] == "mcp-server-failed"]
        assert failed and "HTTP 401" in failed[0]["message"]
        assert not [e for e in events if e.get("kind") == "mcp-sign-in"]
    assert count(marks, "registered") == 0


def test_the_callback_refuses_unknown_states_and_commands_cannot_sign_in(
    xum_root: Path, oauth_mcp: tuple[str, Path]
) -> None:
    write_config(xum_root / "mcp.jsonc", {"cmd": "true"})
    with server_client() as client:
        page = client.get("/api/mcp/oauth/callback?state=made-up&code=x")
        assert page.status_code == 400 and "No sign-in is waiting" in page.text
        res = client.post("/api/mcp/oauth/start", json={"name": "cmd"}, headers=AUTH)
        assert res.status_code == 422 and "only HTTP servers sign in" in res.text
        res = client.post("/api/mcp/oauth/start", json={"name": "nope"}, headers=AUTH)
        assert res.status_code == 404
        # Starting a sign-in needs the server's token like every other route.
        assert client.post("/api/mcp/oauth/start", json={"name": "cmd"}).status_code == 401
