"""Token precedence, origin matching and browser sessions (the pieces; the wiring is tested
through the app in tests/integration/test_server_auth.py)."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from xum.server.auth import BrowserSessions, origin_allowed, resolve_token, tokens_equal


def test_token_precedence_all_four_levels() -> None:
    env = {"XUM_SERVER_AUTH_TOKEN": "from-env"}
    assert resolve_token(no_auth=True, auth_token="flag", env=env).token is None
    assert resolve_token(no_auth=True, auth_token="flag", env=env).source == "--no-auth"
    flag = resolve_token(no_auth=False, auth_token="flag", env=env)
    assert (flag.token, flag.source) == ("flag", "--auth-token")
    from_env = resolve_token(no_auth=False, auth_token=None, env=env)
    assert (from_env.token, from_env.source) == ("from-env", "XUM_SERVER_AUTH_TOKEN")
    generated = resolve_token(no_auth=False, auth_token=None, env={})
    assert generated.source == "generated" and generated.token and len(generated.token) >= 40
    blank = resolve_token(no_auth=False, auth_token="  ", env={"XUM_SERVER_AUTH_TOKEN": " "})
    assert blank.source == "generated"


def test_tokens_equal() -> None:
    assert tokens_equal("abc", "abc")
    assert not tokens_equal("abd", "abc")
    assert not tokens_equal(None, "abc")
    assert not tokens_equal("\udcff", "abc")  # odd input is a mismatch, not a crash


@pytest.mark.parametrize(
    ("origin", "host", "ok"),
    [
        ("http://localhost:3000", "localhost:3000", True),
        ("http://localhost:3000/", "localhost:3000", True),
        ("http://LOCALHOST:3000", "localhost:3000", True),
        ("http://localhost:3001", "localhost:3000", False),
        ("http://127.0.0.1:3000", "localhost:3000", False),
        ("https://localhost:3000", "localhost:3000", False),
        ("http://evil.example", "localhost:3000", False),
        ("null", "localhost:3000", False),
        ("http://[::1]:3000", "[::1]:3000", True),
        ("http://box.lan", "box.lan", True),
        ("http://box.lan:80", "box.lan", True),
        ("http://localhost:3000", None, False),
    ],
)
def test_origin_must_be_the_servers_own(origin: str, host: str | None, ok: bool) -> None:
    assert (
        origin_allowed(
            origin, host_header=host, scheme="http", forwarded_proto=None, allow_http_origin=False
        )
        is ok
    )


def test_allow_http_origin_accepts_https_behind_a_rewriting_proxy() -> None:
    kwargs = {"host_header": "xum.example.com", "scheme": "http", "forwarded_proto": "http"}
    assert not origin_allowed("https://xum.example.com", allow_http_origin=False, **kwargs)  # type: ignore[arg-type]
    assert origin_allowed("https://xum.example.com", allow_http_origin=True, **kwargs)  # type: ignore[arg-type]
    # A proxy that says https is believed without the flag.
    assert origin_allowed(
        "https://xum.example.com",
        host_header="xum.example.com",
        scheme="http",
        forwarded_proto="https",
        allow_http_origin=False,
    )


def test_browser_sessions_persist_hashed_and_die_with_the_token(tmp_path: Path) -> None:
    path = tmp_path / "sessions.json"
    sessions = BrowserSessions("token-1", path)
    secret, record = sessions.create("Firefox")
    assert secret not in path.read_text() and "token-1" not in path.read_text()
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert BrowserSessions("token-1", path).lookup(secret) is not None  # survives a restart
    assert BrowserSessions("token-2", path).lookup(secret) is None  # a new token ends it
    assert sessions.lookup("wrong") is None
    assert sessions.revoke(record.public_id)
    assert sessions.lookup(secret) is None
