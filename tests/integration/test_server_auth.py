"""Who gets in: bearer token, session cookie, sign-in exchange, Origin and Host checks, REST and
WebSocket alike."""

from __future__ import annotations

from pathlib import Path

import pytest
from starlette.testclient import TestClient
from starlette.websockets import WebSocketDisconnect

from tests.integration.server_support import AUTH, ORIGIN, TOKEN, WS_URL, server_client
from xum.server.state import ServerConfig


def test_api_routes_need_the_token_and_the_shell_does_not() -> None:
    with server_client() as client:
        for path in ("/api/projects", "/api/workspaces", "/openapi.json", "/api/server/info"):
            res = client.get(path)
            assert res.status_code == 401, path
            assert res.json()["error"]["code"] == "unauthorized"
            assert client.get(path, headers=AUTH).status_code == 200, path
        wrong = client.get("/api/projects", headers={"Authorization": "Bearer nope"})
        assert wrong.status_code == 401
        assert client.get("/api/projects", headers={"Authorization": TOKEN}).status_code == 401
        assert client.get("/").status_code == 200
        assert client.get("/some/client/route").status_code == 200  # the app shell again
        assert client.get("/api/auth/status").json() == {
            "authRequired": True,
            "authenticated": False,
            "sessionEnded": False,
        }


def test_unbuilt_ui_says_how_to_build_it(tmp_path: Path) -> None:
    with server_client(static_dir=tmp_path) as client:
        res = client.get("/")
        assert res.status_code == 200
        assert "make build-web" in res.text
        assert "default-src 'self'" in res.headers["content-security-policy"]
        assert res.headers["x-frame-options"] == "DENY"


def test_built_ui_files_are_served_safely(tmp_path: Path) -> None:
    (tmp_path / "assets").mkdir()
    (tmp_path / "index.html").write_text("<!doctype html><title>ui</title>")
    (tmp_path / "assets" / "app.js").write_text("console.log(1)")
    (tmp_path.parent / "secret.txt").write_text("TOPSECRET")
    with server_client(static_dir=tmp_path) as client:
        assert client.get("/").text.startswith("<!doctype html><title>ui")
        js = client.get("/assets/app.js")
        assert js.status_code == 200 and "javascript" in js.headers["content-type"]
        assert client.get("/assets/missing.js").status_code == 404
        escape = client.get("/%2e%2e/secret.txt")
        assert escape.status_code == 404 and "TOPSECRET" not in escape.text


def test_sign_in_link_sets_a_strict_cookie_and_redirects_the_token_away() -> None:
    with server_client() as client:
        res = client.get(f"/?token={TOKEN}", follow_redirects=False)
        assert res.status_code == 303
        assert res.headers["location"] == "/"
        cookie = res.headers["set-cookie"]
        assert cookie.startswith("xum_session=")
        assert TOKEN not in cookie
        for attribute in ("HttpOnly", "SameSite=strict", "Path=/", "Max-Age="):
            assert attribute.lower() in cookie.lower(), attribute
        assert "secure" not in cookie.lower()  # plain http here
        # The cookie now opens the API (the test client keeps it).
        assert client.get("/api/projects").status_code == 200
        assert client.get("/api/auth/status").json()["authenticated"] is True
        # A wrong token: redirected without a cookie.
        client.cookies.clear()
        bad = client.get("/?token=wrong", follow_redirects=False)
        assert bad.status_code == 303 and bad.headers["location"] == "/?signin=failed"
        assert "set-cookie" not in bad.headers
        assert client.get("/api/projects").status_code == 401


def test_cookie_is_secure_behind_https() -> None:
    with server_client() as client:
        res = client.get(
            f"/?token={TOKEN}", headers={"X-Forwarded-Proto": "https"}, follow_redirects=False
        )
        assert "secure" in res.headers["set-cookie"].lower()


def use_session(client: TestClient, cookie: str) -> None:
    """Send only this session cookie from now on (setting one beside the cookie a response set
    would keep both with some httpx versions, so the old one goes first)."""
    client.cookies.clear()
    client.cookies.set("xum_session", cookie)


def test_login_logout_and_session_management() -> None:
    with server_client() as client:
        assert client.post("/api/auth/login", json={"token": "bad"}).status_code == 401
        assert client.post("/api/auth/login", json={"token": TOKEN}).status_code == 200
        mine = client.cookies.get("xum_session")
        assert mine
        other = client.get(f"/?token={TOKEN}", follow_redirects=False).cookies["xum_session"]
        use_session(client, mine)
        sessions = client.get("/api/auth/sessions").json()["sessions"]
        assert len(sessions) == 2
        assert sum(s["current"] for s in sessions) == 1
        assert all(mine not in str(s) and other not in str(s) for s in sessions)
        assert client.post("/api/auth/sessions/revoke-others").json() == {"revoked": 1}
        use_session(client, other)
        assert client.get("/api/projects").status_code == 401
        use_session(client, mine)
        assert client.post("/api/auth/logout").status_code == 200
        assert client.get("/api/projects").status_code == 401
        assert client.delete("/api/auth/sessions/nope", headers=AUTH).status_code == 404


def test_browser_sessions_survive_a_restart_with_the_same_token_only() -> None:
    with server_client() as client:
        client.get(f"/?token={TOKEN}", follow_redirects=False)
        cookie = client.cookies.get("xum_session")
    with server_client() as client:
        use_session(client, cookie or "")
        assert client.get("/api/projects").status_code == 200
    with server_client(token="another-token") as client:
        use_session(client, cookie or "")
        assert client.get("/api/projects").status_code == 401
        # The sign-in page can say why: this browser was signed in, and that sign-in ended.
        status = client.get("/api/auth/status").json()
        assert status["authenticated"] is False and status["sessionEnded"] is True
        client.cookies.clear()
        assert client.get("/api/auth/status").json()["sessionEnded"] is False


def test_foreign_origin_is_refused_even_with_the_token() -> None:
    with server_client() as client:
        ok = client.get("/api/projects", headers={**AUTH, "Origin": ORIGIN})
        assert ok.status_code == 200
        for origin in (
            "http://evil.example",
            "http://localhost:3001",
            "null",
            "https://localhost:3000",
        ):
            res = client.post(
                "/api/projects", json={"path": "/"}, headers={**AUTH, "Origin": origin}
            )
            assert res.status_code == 403, origin
            assert res.json()["error"]["code"] == "forbidden_origin"


def test_foreign_origin_is_refused_without_auth_too() -> None:
    with server_client(token=None) as client:
        assert client.get("/api/projects").status_code == 200
        assert client.get("/api/auth/status").json() == {
            "authRequired": False,
            "authenticated": True,
            "sessionEnded": False,
        }
        res = client.get("/api/projects", headers={"Origin": "http://evil.example"})
        assert res.status_code == 403


def test_dns_rebinding_host_is_refused_on_loopback() -> None:
    with server_client() as client:
        res = client.get("/api/projects", headers={**AUTH, "Host": "evil.example:3000"})
        assert res.status_code == 403
        assert res.json()["error"]["code"] == "forbidden_host"
        assert client.get("/", headers={"Host": "127.0.0.1:3000"}).status_code == 200
    # Bound to every interface, any name may reach it (the token guards it).
    with server_client(host="0.0.0.0") as client:
        assert (
            client.get("/api/projects", headers={**AUTH, "Host": "box.lan:3000"}).status_code == 200
        )


def test_websocket_needs_auth_and_the_right_origin() -> None:
    with server_client() as client:
        with pytest.raises(WebSocketDisconnect), client.websocket_connect(WS_URL) as ws:
            ws.receive_json()
        with (
            pytest.raises(WebSocketDisconnect),
            client.websocket_connect(
                WS_URL, headers={**AUTH, "Origin": "http://evil.example"}
            ) as ws,
        ):
            ws.receive_json()
        with client.websocket_connect(WS_URL, headers={**AUTH, "Origin": ORIGIN}) as ws:
            assert ws.receive_json()["type"] == "hello"
        client.get(f"/?token={TOKEN}", follow_redirects=False)  # a browser: the cookie
        with client.websocket_connect(WS_URL, headers={"Origin": ORIGIN}) as ws:
            assert ws.receive_json()["type"] == "hello"


def test_oversized_bodies_are_refused() -> None:
    with server_client() as client:
        res = client.post(
            "/api/projects",
            content=b'{"path": "' + b"a" * (1024 * 1024 + 10) + b'"}',
            headers={**AUTH, "Content-Type": "application/json"},
        )
        assert res.status_code == 413
        assert res.json()["error"]["code"] == "payload_too_large"


def test_allow_http_origin_flag() -> None:
    headers = {**AUTH, "Origin": "https://localhost:3000", "X-Forwarded-Proto": "http"}
    with server_client() as client:
        assert client.get("/api/projects", headers=headers).status_code == 403
    with server_client(allow_http_origin=True) as client:
        assert client.get("/api/projects", headers=headers).status_code == 200


def test_config_defaults_match_the_docs() -> None:
    config = ServerConfig()
    assert (config.host, config.port) == ("localhost", 3000)
    assert config.loopback_only
