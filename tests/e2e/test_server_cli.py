"""`xum server` end to end: the real executable under uvicorn, real sockets, the fake LLM server,
real git repositories."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import stat
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from websockets.exceptions import InvalidStatus

from tests.e2e.cli import XUM
from tests.gitrepo import make_repo
from tests.integration.server_support import MODEL
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


class Server:
    def __init__(self, proc: subprocess.Popen[str], url: str, first_lines: list[str]) -> None:
        self.proc = proc
        self.url = url
        self.first_lines = first_lines

    def stop(self, sig: int = signal.SIGTERM) -> tuple[int, str, str]:
        self.proc.send_signal(sig)
        out, err = self.proc.communicate(timeout=20)
        return self.proc.returncode, "\n".join(self.first_lines) + "\n" + out, err


@contextmanager
def running_server(
    *args: str, env: dict[str, str] | None = None, cwd: Path | None = None
) -> Iterator[Server]:
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.Popen(
        [XUM, "server", "--port", "0", *args],
        env=full_env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    if "listening on" not in first:
        proc.kill()
        _, err = proc.communicate(timeout=10)
        raise AssertionError(f"server did not start: {first!r} {err}")
    url = first.split("listening on ", 1)[1].strip()
    lines = [first.rstrip("\n"), proc.stdout.readline().rstrip("\n")]
    server = Server(proc, url, lines)
    try:
        yield server
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=10)


def lock(root: Path) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((root / "server.lock").read_text())
    return data


def test_lock_file_signals_and_env_token(xum_root: Path) -> None:
    token = "env-token-abcdefghijklmnop"
    with running_server(env={"XUM_SERVER_AUTH_TOKEN": token}) as server:
        data = lock(xum_root)
        assert data["url"] == server.url and data["token"] == token
        assert data["pid"] == server.proc.pid and isinstance(data["port"], int)
        assert server.url.endswith(f":{data['port']}")
        assert stat.S_IMODE((xum_root / "server.lock").stat().st_mode) == 0o600
        assert "XUM_SERVER_AUTH_TOKEN" in server.first_lines[1]
        headers = {"Authorization": f"Bearer {token}"}
        assert httpx.get(f"{server.url}/api/projects", headers=headers).status_code == 200
        assert httpx.get(f"{server.url}/api/projects").status_code == 401
        signin = httpx.get(f"{server.url}/?token={token}", follow_redirects=False)
        assert signin.status_code == 303 and "xum_session" in signin.headers["set-cookie"]
        # A second server on the same root is refused while this one runs.
        second = subprocess.run(
            [XUM, "server", "--port", "0"], capture_output=True, text=True, timeout=30
        )
        assert second.returncode == 1 and "another xum server" in second.stderr
        code, out, err = server.stop(signal.SIGTERM)
    assert code == 0, err
    assert not (xum_root / "server.lock").exists()
    assert token not in out + err  # given by env and used in a sign-in link: never printed


def test_flag_beats_env_and_sigint_cleans_up(xum_root: Path) -> None:
    env = {"XUM_SERVER_AUTH_TOKEN": "from-env-token"}
    with running_server("--auth-token", "from-flag-token", "--print-auth-token", env=env) as server:
        assert lock(xum_root)["token"] == "from-flag-token"
        assert "auth token: from-flag-token" in "\n".join(
            [*server.first_lines, server.proc.stdout.readline()]
        )  # type: ignore[union-attr]
        ok = httpx.get(
            f"{server.url}/api/server/info", headers={"Authorization": "Bearer from-flag-token"}
        )
        assert ok.status_code == 200 and ok.json()["authRequired"] is True
        refused = httpx.get(
            f"{server.url}/api/server/info", headers={"Authorization": "Bearer from-env-token"}
        )
        assert refused.status_code == 401
        code, _out, err = server.stop(signal.SIGINT)
    assert code == 0, err
    assert not (xum_root / "server.lock").exists()


def test_no_auth_beats_everything(xum_root: Path) -> None:
    with running_server(
        "--no-auth", "--auth-token", "x", env={"XUM_SERVER_AUTH_TOKEN": "y"}
    ) as server:
        assert lock(xum_root)["token"] is None
        assert "authentication is OFF" in server.first_lines[1]
        assert httpx.get(f"{server.url}/api/projects").status_code == 200
        foreign = httpx.get(f"{server.url}/api/projects", headers={"Origin": "http://evil.example"})
        assert foreign.status_code == 403
        server.stop()


def test_generated_token_is_printed_as_a_sign_in_link(xum_root: Path, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    env = {k: v for k, v in os.environ.items() if k != "XUM_SERVER_AUTH_TOKEN"}
    cookies = httpx.Cookies()
    with running_server("--add-project", str(repo), env=env) as server:
        token = lock(xum_root)["token"]
        assert token and len(token) >= 40
        assert server.first_lines[1].endswith(f"{server.url}/?token={token}")
        assert server.proc.stdout is not None
        where = server.proc.stdout.readline()  # the start-up lines say where it is kept
        with httpx.Client(base_url=server.url, cookies=cookies) as client:
            signin = client.get(f"/?token={token}", follow_redirects=False)
            assert signin.status_code == 303
            projects = client.get("/api/projects").json()["projects"]  # the cookie works
            assert [p["path"] for p in projects] == [str(repo)]
            cookies = client.cookies
        server.stop()
    kept = xum_root / "server" / "auth-token"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    assert str(kept) in where and token not in where
    # A restart on the same root keeps the token, so the browser stays signed in.
    with running_server(env=env) as server:
        assert lock(xum_root)["token"] == token
        with httpx.Client(base_url=server.url, cookies=cookies) as client:
            assert client.get("/api/projects").status_code == 200
        server.stop()
    # Without the file the next start makes a new token, which ends every browser session.
    kept.unlink()
    with running_server(env=env) as server:
        assert lock(xum_root)["token"] != token
        with httpx.Client(base_url=server.url, cookies=cookies) as client:
            assert client.get("/api/projects").status_code == 401
            status = client.get("/api/auth/status").json()
            assert status["sessionEnded"] is True
        server.stop()


async def _ws_turn(url: str, token: str, fake: FakeLLM, repo: Path) -> None:
    ws_url = url.replace("http://", "ws://") + "/api/ws"
    headers = {"Authorization": f"Bearer {token}"}
    # A foreign Origin is refused at the handshake.
    with pytest.raises(InvalidStatus) as refused:
        async with websockets.connect(
            ws_url,
            additional_headers=headers,
            origin="http://evil.example",  # type: ignore[arg-type]
        ):
            pass
    assert refused.value.response.status_code == 403
    with pytest.raises(InvalidStatus):
        async with websockets.connect(ws_url):
            pass

    async with httpx.AsyncClient(base_url=url, headers=headers) as client:
        res = await client.post(
            "/api/workspaces",
            json={"projectPath": str(repo), "runtime": {"type": "worktree"}, "model": MODEL},
        )
        assert res.status_code == 201, res.text
        wid = res.json()["id"]
        async with websockets.connect(
            ws_url,
            additional_headers=headers,
            origin=url,  # type: ignore[arg-type]
        ) as ws:
            assert json.loads(await ws.recv())["type"] == "hello"
            await ws.send(json.dumps({"type": "subscribe", "workspaceId": wid, "afterSeq": 0}))
            await client.post(f"/api/workspaces/{wid}/messages", json={"text": "edit it"})
            events: list[dict[str, Any]] = []
            async with asyncio.timeout(30):
                while not events or events[-1]["type"] != "turn-end":
                    msg = json.loads(await ws.recv())
                    if msg["type"] == "event":
                        events.append(msg["event"])
        kinds = [e["type"] for e in events]
        assert kinds[0] == "turn-start" and kinds[-1] == "turn-end"
        assert "tool-result" in kinds and events[-1]["reason"] == "completed"
        assert "".join(e["text"] for e in events if e["type"] == "text-delta").endswith("Edited.")
        status = (await client.get(f"/api/workspaces/{wid}/git/status")).json()
        assert {e["path"] for e in status["entries"]} == {"app.py"}


def test_real_turn_over_a_real_websocket(xum_root: Path, tmp_path: Path, fake_llm: FakeLLM) -> None:
    repo = make_repo(tmp_path / "repo")
    fake_llm.script(
        fakellm.tool_call(
            "file_edit_replace_string",
            {"path": "app.py", "old_string": "'hi'", "new_string": "'hello'"},
        ),
        fakellm.reply("Edited."),
    )
    token = "ws-token-0123456789abcdef"
    env = {
        "XUM_SERVER_AUTH_TOKEN": token,
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake_llm.url,
    }
    with running_server(env=env) as server:
        asyncio.run(_ws_turn(server.url, token, fake_llm, repo))
        code, out, err = server.stop()
    assert code == 0, err
    assert token not in out + err


def test_two_servers_started_at_once_on_one_root_exactly_one_runs(xum_root: Path) -> None:
    """The root is claimed atomically (an flock), so the loser exits at once whatever the
    timing; before, both passed a check of server.lock and both served."""
    for _round in range(2):
        procs = [
            subprocess.Popen(
                [XUM, "server", "--port", "0", "--no-auth"],
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
                text=True,
            )
            for _ in range(2)
        ]
        try:
            deadline = time.monotonic() + 30
            while all(p.poll() is None for p in procs):
                assert time.monotonic() < deadline, "both servers are still running after 30 s"
                time.sleep(0.05)
            loser = next(p for p in procs if p.poll() is not None)
            winner = next(p for p in procs if p is not loser)
            _out, err = loser.communicate(timeout=10)
            assert loser.returncode == 1 and "another xum server" in err, err
            assert f"(pid {winner.pid})" in err
            assert winner.stdout is not None and "listening on" in winner.stdout.readline()
            assert lock(xum_root)["pid"] == winner.pid
            winner.send_signal(signal.SIGTERM)
            assert winner.wait(timeout=20) == 0
        finally:
            for p in procs:
                if p.poll() is None:
                    p.kill()
                    p.communicate(timeout=10)


def test_a_server_killed_with_sigkill_does_not_block_the_next(xum_root: Path) -> None:
    with running_server("--no-auth") as first:
        first.proc.kill()
        first.proc.communicate(timeout=10)
    assert (xum_root / "server.lock").exists()  # stale, and harmless
    with running_server("--no-auth") as second:
        assert lock(xum_root)["pid"] == second.proc.pid
        code, _out, err = second.stop(signal.SIGTERM)
    assert code == 0, err
