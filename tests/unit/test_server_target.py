"""Which server a front-end attaches to: flag, then XUM_SERVER_URL, then server.lock; and which
token (flag, env, the lock's for the same server, the kept generated one)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from xum.core.errors import UsageError
from xum.engine import events as E
from xum.host.remote_wire import event_from_json, partial_events
from xum.host.server_target import NoServerError, ServerTarget, resolve_server


def _write_lock(root: Path, url: str, token: str | None, pid: int) -> None:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "server.lock"
    path.write_text(json.dumps({"url": url, "token": token, "pid": pid, "host": "x", "port": 1}))
    os.chmod(path, 0o600)


def test_no_server_anywhere_says_how_to_get_one(xum_root: Path) -> None:
    with pytest.raises(NoServerError) as err:
        resolve_server(env={})
    assert "xum server" in (err.value.hint or "")


def test_the_lock_names_url_and_token(xum_root: Path) -> None:
    _write_lock(xum_root, "http://127.0.0.1:4321", "lock-token", os.getpid())
    target = resolve_server(env={})
    assert (target.url, target.token) == ("http://127.0.0.1:4321", "lock-token")
    assert target.ws_url == "ws://127.0.0.1:4321/api/ws"
    assert "lock-token" not in repr(target)
    # The env token wins over the lock's, the flag over both.
    assert resolve_server(env={"XUM_SERVER_AUTH_TOKEN": "env"}).token == "env"
    assert resolve_server(token="flag", env={"XUM_SERVER_AUTH_TOKEN": "env"}).token == "flag"


def test_a_lock_left_by_a_dead_process_is_no_server(xum_root: Path) -> None:
    _write_lock(xum_root, "http://127.0.0.1:4321", "t", 2**22 + 12345)
    with pytest.raises(NoServerError):
        resolve_server(env={})


def test_url_from_flag_or_env(xum_root: Path) -> None:
    _write_lock(xum_root, "http://127.0.0.1:4321", "lock-token", os.getpid())
    env = {"XUM_SERVER_URL": "https://box.example:9000/"}
    target = resolve_server(env=env)
    assert target.url == "https://box.example:9000" and target.token is None
    assert target.ws_url == "wss://box.example:9000/api/ws"
    # The lock's token only goes to the server the lock names.
    assert resolve_server("http://127.0.0.1:4321/", env=env).token == "lock-token"
    with pytest.raises(UsageError):
        resolve_server("box.example:9000", env={})


def test_the_kept_generated_token_is_used_for_a_named_url(xum_root: Path) -> None:
    kept = xum_root / "server" / "auth-token"
    kept.parent.mkdir(parents=True, mode=0o700)
    kept.write_text("kept-token-0123456789abcdef0123456789\n")
    os.chmod(kept, 0o644)  # readable by others: not trusted
    assert resolve_server("http://127.0.0.1:1", env={}).token is None
    os.chmod(kept, 0o600)
    target = resolve_server("http://127.0.0.1:1", env={})
    assert target == ServerTarget("http://127.0.0.1:1", "kept-token-0123456789abcdef0123456789")


def test_events_come_back_typed_from_their_json() -> None:
    reply = E.AssistantMessage(
        seq=3,
        ts=9,
        text="hi",
        reasoning="",
        tool_calls=[],
        finish_reason="stop",
        usage=None,
        cost_usd=None,
    )
    end = E.TurnEnd(seq=4, ts=10, turn_id="t", reason="completed")
    for event in (reply, end, E.TextDelta(text="x"), E.Advisory(kind="k", message="m")):
        assert event_from_json(event.to_dict()) == event
    assert event_from_json({"type": "from-the-future"}) is None
    partial = {
        "message": {"text": "so far", "reasoning": "", "tool_calls": []},
        "turnId": "t",
        "step": 1,
    }
    assert partial_events(partial) == [
        E.DiscardPartial(),
        E.StepStart(step=1, turn_id="t"),
        E.TextDelta(text="so far"),
    ]
