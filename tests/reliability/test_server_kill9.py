"""`xum server` killed with SIGKILL mid-stream, 100 times, while a client is attached.

A small "zygote" process imports xum and its server stack once and forks a real `xum server`
(the CLI's own `server` command, on 127.0.0.1, a real port, a real token) for each round, so a
round costs a fork rather than an interpreter start. Each round the client connects over a real
WebSocket, subscribes after the last `seq` it saw, starts a turn when none is open (the fake LLM
streams slowly, so kills land mid-reply), reads for a random number of messages and the test
SIGKILLs the server. Checked every round, and at the end:

* the server comes back and every workspace opens (listed, subscribable);
* no committed event is lost: each one the client saw is in the log with the same seq and type,
  the log's seqs are contiguous and it has no damaged frame;
* the client resumes from its last `seq`: what it is sent after resubscribing starts right
  after it, with no gap and no repeat;
* the log makes a valid provider history (a turn cut off by a kill is closed on reopen).

Loopback only. Budget: 100 rounds of fork + start + a little streaming, about 60-90 s on a busy
2-core machine (pytest-timeout stops a hang); nothing asserts a time.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from websockets.sync.client import ClientConnection, connect

from tests.gitrepo import make_repo
from tests.support.engine import assert_valid_log
from xum.engine.derive import frame_event
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM, RecordedRequest

pytestmark = [pytest.mark.slow, pytest.mark.timeout(600)]

ROUNDS = int(os.environ.get("XUM_KILL9_SERVER_ROUNDS", "100"))
TOKEN = "kill9-token-0123456789abcdef"
AUTH = {"Authorization": f"Bearer {TOKEN}"}
MODEL = "anthropic:claude-sonnet-5-5"
LONG = "".join(f"word{i} " for i in range(400))

_ZYGOTE = textwrap.dedent(
    """
    import os, signal, sys
    import uvicorn, fastapi  # noqa: F401  (loaded once, before any fork)
    import xum.cli.server, xum.workspaces.assembly, xum.workspaces.lifecycle  # noqa: F401
    import xum.llm.anthropic, xum.server.wsbatch, xum.engine.agent  # noqa: F401
    from xum.cli.app import cli
    from xum.server.app import create_app
    from xum.server.state import ServerConfig

    create_app(ServerConfig(token="warm-up"))  # imports the routes and builds the schemas once

    signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # killed servers are reaped at once
    for line in sys.stdin:
        pid = os.fork()
        if pid == 0:
            os.setsid()
            null = os.open(os.devnull, os.O_RDWR)
            log = os.open(line.strip(), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
            os.dup2(null, 0); os.dup2(log, 1); os.dup2(log, 2)
            try:
                cli(["server", "--host", "127.0.0.1", "--port", "0", "--auth-token", sys.argv[1]],
                    prog_name="xum", standalone_mode=False)
            finally:
                os._exit(0)
        print(pid, flush=True)
    """
)


class Zygote:
    def __init__(self, env: dict[str, str], log: Path) -> None:
        self.log = log
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _ZYGOTE, TOKEN],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    def fork(self) -> int:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"{self.log}\n")
        self.proc.stdin.flush()
        return int(self.proc.stdout.readline())

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def wait_for_server(root: Path, pid: int) -> str:
    """The url of the server `pid`, once its lock file names it (bounded)."""
    deadline = time.monotonic() + 60
    lock = root / "server.lock"
    while time.monotonic() < deadline:
        try:
            data = json.loads(lock.read_text())
        except (OSError, ValueError):
            data = {}
        if data.get("pid") == pid:
            return str(data["url"])
        time.sleep(0.01)
    raise AssertionError(f"server {pid} never wrote its lock file")


def receive(ws: ClientConnection, timeout: float = 30.0) -> dict[str, Any] | None:
    try:
        raw = ws.recv(timeout=timeout)
    except TimeoutError:
        return None
    except Exception:  # the server died under the client: the round is over
        return None
    data: dict[str, Any] = json.loads(raw)
    return data


def subscribe(ws: ClientConnection, workspace_id: str, after: int) -> list[dict[str, Any]]:
    """Subscribe after `after`; the committed events of the backlog (in order)."""
    ws.send(json.dumps({"type": "subscribe", "workspaceId": workspace_id, "afterSeq": after}))
    events: list[dict[str, Any]] = []
    while True:
        msg = receive(ws)
        assert msg is not None, "the server did not answer the subscription"
        events += committed(msg, workspace_id)
        if msg.get("type") == "subscribed" and msg.get("workspaceId") == workspace_id:
            return events
        if msg.get("type") == "resync":
            raise AssertionError(f"a resync after seq {after}: {msg}")


def committed(msg: dict[str, Any], workspace_id: str) -> list[dict[str, Any]]:
    """The committed event a message carries (the backlog, too, is sent event by event)."""
    if msg.get("workspaceId") != workspace_id or msg.get("type") != "event":
        return []
    return [msg["event"]] if "seq" in msg["event"] else []


def responder(request: RecordedRequest) -> fakellm.Reply:
    # Slow enough that most kills land in the middle of a reply.
    return fakellm.text(LONG, chunk_size=12, delay=0.004)


@pytest.fixture
def zygote(xum_root: Path, fake_llm: FakeLLM, tmp_path: Path) -> Iterator[Zygote]:
    fake_llm.set_responder(responder)
    env = dict(os.environ)
    env.update(ANTHROPIC_API_KEY="test-key", ANTHROPIC_BASE_URL=fake_llm.url)
    z = Zygote(env, tmp_path / "server.log")
    try:
        yield z
    finally:
        z.close()


def test_sigkill_mid_stream_loses_no_committed_event(
    zygote: Zygote, xum_root: Path, tmp_path: Path
) -> None:
    rng = random.Random(20261130)
    repo = make_repo(tmp_path / "repo")
    seen: dict[str, list[int]] = {}  # workspace -> the committed seqs the client was sent
    on_disk: dict[str, set[int]] = {}  # workspace -> seqs of the log's events after the last kill
    kills = 0
    for round_no in range(ROUNDS):
        pid = zygote.fork()
        url = wait_for_server(xum_root, pid)
        http = httpx.Client(base_url=url, headers=AUTH, timeout=30)
        try:
            if round_no == 0:
                for name in ("one", "two"):
                    body = {"projectPath": str(repo), "runtime": {"type": "local"}, "model": MODEL}
                    created = http.post("/api/workspaces", json={**body, "name": name})
                    assert created.status_code == 201, created.text
                    seen[created.json()["id"]] = []
                    on_disk[created.json()["id"]] = set()
            listed = {w["id"] for w in http.get("/api/workspaces").json()["workspaces"]}
            assert set(seen) <= listed, f"round {round_no}: a workspace is missing after restart"
            target = rng.choice(sorted(seen))
            ws_url = url.replace("http://", "ws://") + "/api/ws"
            with connect(ws_url, additional_headers=AUTH, open_timeout=30) as ws:
                assert (receive(ws) or {}).get("type") == "hello"
                for wid in sorted(seen):  # every workspace opens; each resumes where it was
                    after = max(seen[wid], default=0)
                    record(seen[wid], subscribe(ws, wid, after), f"round {round_no} {wid}")
                    missing = {s for s in on_disk[wid] if s > after} - set(seen[wid])
                    assert not missing, f"round {round_no}: resumed without {sorted(missing)}"
                http.post(f"/api/workspaces/{target}/messages", json={"text": f"go {round_no}"})
                for _ in range(rng.randint(1, 60)):
                    msg = receive(ws, timeout=10)
                    if msg is None:
                        break
                    for wid in seen:
                        record(seen[wid], committed(msg, wid), f"live {round_no}")
                os.kill(pid, signal.SIGKILL)
                kills += 1
        finally:
            http.close()
        wait_dead(pid)
        for wid, got in seen.items():
            on_disk[wid] = check_log(wid, got)
    assert kills == ROUNDS
    # A last start: everything opens, and a subscription from 0 replays the log's events.
    pid = zygote.fork()
    url = wait_for_server(xum_root, pid)
    try:
        with connect(url.replace("http://", "ws://") + "/api/ws", additional_headers=AUTH) as ws:
            receive(ws)
            for wid, got in seen.items():
                everything = [e["seq"] for e in subscribe(ws, wid, 0)]
                assert everything == sorted(set(everything))
                assert set(got) <= set(everything) and on_disk[wid] <= set(everything)
    finally:
        os.kill(pid, signal.SIGKILL)
        wait_dead(pid)
    for wid in seen:
        assert_valid_log(wid)


def record(seen: list[int], events: list[dict[str, Any]], where: str) -> None:
    """Keep the seqs the client was sent: each later than the one before (no repeat)."""
    for event in events:
        seq = event["seq"]
        assert not seen or seq > seen[-1], f"{where}: seq {seq} after {seen[-1]} (a repeat)"
        seen.append(seq)


def check_log(workspace_id: str, seen: list[int]) -> set[int]:
    """Nothing the client was sent is missing from the log, which is whole; the seqs of the
    log's events (frames such as request records take a seq but carry no event)."""
    log = SessionLog.open(workspace_id)
    try:
        frames = log.frames
        seqs = [f.seq for f in frames]
        assert seqs == list(range(1, len(seqs) + 1)), f"{workspace_id}: seqs not contiguous"
        assert not [f for f in frames if f.damaged], f"{workspace_id}: damaged frames"
        events = {f.seq for f in frames if f.seq is not None and frame_event(f) is not None}
    finally:
        log.close()
    lost = set(seen) - events
    assert not lost, f"{workspace_id}: committed events {sorted(lost)} lost"
    return events


def wait_dead(pid: int) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return
        time.sleep(0.01)
    raise AssertionError(f"server {pid} did not die")
