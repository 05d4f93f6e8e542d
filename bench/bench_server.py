"""Fan-out latency of `xum server`: many workspaces streaming at once to one WebSocket client.

Setup: a real `xum server` subprocess (its own `$XUM_ROOT`), the fake LLM server on a thread of
this process, and one WebSocket client (a process of its own, so it shares no GIL with the fake
server) subscribed to every workspace.
Each workspace gets a message; every reply streams `DELTAS` text deltas, one SSE event every
`DELAY_S` (20 per second, about a provider's pace), so all workspaces stream at the same time:
1000 deltas per second through the server. The streams start at staggered phases of the tick,
as independent streams would, instead of all 50 deltas landing in the same millisecond.

What is measured, per delta: from the moment the fake server handed the delta's bytes to the
kernel (`time.monotonic()` right after `Response.chunk` returns; an asyncio write to an idle
socket is a `send()` syscall made on the spot) to the moment the client's `recv()` returned the
WebSocket message carrying that delta. Each delta's text is a unique marker `[WWIIII]`
(workspace, index), so sends and receives pair exactly; both timestamps come from the same
CLOCK_MONOTONIC of one machine, so the difference is sound. The path covered is everything in
between: TCP to the server, SSE parsing, the engine's event, the hub's fan-out queue, the
WebSocket frame and TCP back.

Each server gets two rounds: `cold`, where every session opens (route, hooks, system prompt,
tools) as its first turn starts, while the others already stream; and `warm`, the same again
with the sessions open: the steady fan-out the aim is about. The baseline, measured in the same
run, is the same with one workspace; the ratio shows what fan-out costs. The aim is a warm p99
under 50 ms at 50 workspaces. The machine's other load shows in the figures (they are
percentiles of one run, not medians of many): read them next to the baseline.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.util import percentile, subscribe_all
from xum.testing import fakellm
from xum.testing.fakellm import http as fake_http

XUM = str(Path(sys.executable).with_name("xum"))
WORKSPACES = 50
DELTAS = 40
DELAY_S = 0.05  # 20 deltas/s per stream: about what a provider streams (several tokens each)
TOKEN = "bench-token-0123456789abcdef"
MARK = re.compile(rb"\[(\d{2})(\d{4})\]")


class SendClock:
    """Times at which the fake server wrote each marker, recorded from its own thread."""

    def __init__(self) -> None:
        self.sent: dict[bytes, float] = {}
        self._lock = threading.Lock()
        self._original = fake_http.Response.chunk

    def install(self) -> None:
        clock = self
        original = self._original

        async def chunk(self: Any, data: bytes) -> None:
            await original(self, data)
            now = time.monotonic()
            found = MARK.findall(data)
            if found:
                with clock._lock:
                    for ws, idx in found:
                        clock.sent[ws + idx] = now

        fake_http.Response.chunk = chunk  # type: ignore[method-assign]

    def uninstall(self) -> None:
        fake_http.Response.chunk = self._original  # type: ignore[method-assign]


def _responder(request: Any) -> fakellm.Reply:
    text = json.dumps(request.json.get("messages", []))
    found = re.search(r"bench workspace (\d+)", text)
    ws = int(found.group(1)) if found else 99
    body = "".join(f"[{ws:02d}{i:04d}]" for i in range(DELTAS))
    # Real streams are not in step with each other: each starts at its own phase of the tick.
    phase = (ws % WORKSPACES) * DELAY_S / WORKSPACES
    return fakellm.reply(body, chunk_size=8, delay=DELAY_S, first_byte_delay=phase)


def _start_server(root: Path, fake_url: str) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ)
    env.update(
        XUM_ROOT=str(root),
        HOME=str(root.parent),
        XUM_SERVER_AUTH_TOKEN=TOKEN,
        ANTHROPIC_API_KEY="bench-key",
        ANTHROPIC_BASE_URL=fake_url,
    )
    argv = [XUM, "server", "--port", "0"]
    if os.environ.get("XUM_BENCH_PROFILE"):  # a cProfile dump of the server, for digging
        argv = [
            sys.executable,
            "-m",
            "cProfile",
            "-o",
            os.environ["XUM_BENCH_PROFILE"],
            "-m",
            "xum",
            "server",
            "--port",
            "0",
        ]
    proc = subprocess.Popen(
        argv,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on" not in line:
        proc.kill()
        raise RuntimeError(f"xum server did not start: {line!r}")
    return proc, line.split("listening on ", 1)[1].strip()


async def _client(url: str, ids: list[str]) -> dict[str, float]:
    """The WebSocket client (run in its own process, so it does not share a GIL with the fake
    server): subscribe to every workspace, say READY, then time each delta's arrival until
    every turn ended."""
    import orjson
    import websockets

    headers = {"Authorization": f"Bearer {TOKEN}"}
    ws_url = url.replace("http://", "ws://") + "/api/ws"
    received: dict[str, float] = {}
    ended = 0
    async with websockets.connect(
        ws_url,
        additional_headers=headers,
        max_size=None,
        compression=None,  # type: ignore[arg-type]
    ) as ws:
        await subscribe_all(ws, ids)
        print("READY", flush=True)
        async with asyncio.timeout(120):
            while ended < len(ids):
                raw = await ws.recv()
                now = time.monotonic()
                msg = orjson.loads(raw)
                if msg.get("type") != "event":
                    continue
                event = msg["event"]
                if event["type"] == "text-delta":
                    for ws_id, idx in MARK.findall(event["text"].encode()):
                        received[(ws_id + idx).decode()] = now
                elif event["type"] == "turn-end":
                    ended += 1
    return received


async def _round(url: str, project: Path, count: int, clock: SendClock) -> dict[str, Any]:
    """Two rounds on the same workspaces: `cold` (each session opens as its first turn starts,
    while the others already stream) and `warm` (the sessions are open: steady fan-out)."""
    import httpx

    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as client:
        ids = []
        for _ in range(count):
            res = await client.post(
                "/api/workspaces",
                json={
                    "projectPath": str(project),
                    "runtime": {"type": "local"},
                    "model": "anthropic:claude-sonnet-5-5",
                },
            )
            res.raise_for_status()
            ids.append(res.json()["id"])
        cold = await _stream(client, url, ids, clock)
        warm = await _stream(client, url, ids, clock)
    return {"workspaces": count, "cold": cold, "warm": warm}


async def _stream(client: Any, url: str, ids: list[str], clock: SendClock) -> dict[str, Any]:
    clock.sent.clear()
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "bench.bench_server",
        "--client",
        url,
        ",".join(ids),
        stdout=asyncio.subprocess.PIPE,
        cwd=str(Path(__file__).resolve().parents[1]),
    )
    assert proc.stdout is not None
    ready = await proc.stdout.readline()
    if ready.strip() != b"READY":
        raise RuntimeError(f"bench client failed: {ready!r}")
    started = time.monotonic()
    await asyncio.gather(
        *(
            client.post(f"/api/workspaces/{wid}/messages", json={"text": f"bench workspace {k}"})
            for k, wid in enumerate(ids)
        )
    )
    out, _ = await proc.communicate()
    elapsed = time.monotonic() - started
    received = {k.encode(): v for k, v in json.loads(out).items()}
    latencies = [received[k] - clock.sent[k] for k in received if k in clock.sent]
    if os.environ.get("XUM_BENCH_DEBUG"):
        by_idx: dict[int, list[float]] = {}
        for k in received:
            if k in clock.sent:
                by_idx.setdefault(int(k[2:]) // 10, []).append(received[k] - clock.sent[k])
        for bucket, values in sorted(by_idx.items()):
            p50, p99 = percentile(values, 50) * 1000, percentile(values, 99) * 1000
            print(bucket, round(p50, 1), round(p99, 1), file=sys.stderr)
    return {
        "deltas": len(latencies),
        "missing_deltas": len(ids) * DELTAS - len(latencies),
        "p50_ms": round(percentile(latencies, 50) * 1000, 2),
        "p90_ms": round(percentile(latencies, 90) * 1000, 2),
        "p99_ms": round(percentile(latencies, 99) * 1000, 2),
        "max_ms": round(max(latencies) * 1000, 2) if latencies else None,
        "deltas_per_s": round(len(latencies) / elapsed, 1),
    }


def _cpu_seconds(pid: int) -> float | None:
    """User + system CPU time the server process has used (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return round((int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK"), 2)


def run() -> dict[str, Any]:
    clock = SendClock()
    clock.install()
    server = fakellm.FakeLLM().start()
    server.set_responder(_responder)
    try:
        with tempfile.TemporaryDirectory(prefix="xum-bench-server-") as tmp:
            base = Path(tmp)
            project = base / "project"
            project.mkdir()
            results = {}
            for label, count in (("baseline_1", 1), (f"fanout_{WORKSPACES}", WORKSPACES)):
                root = base / label / ".xum"
                root.parent.mkdir()
                proc, url = _start_server(root, server.url)
                try:
                    results[label] = asyncio.run(_round(url, project, count, clock))
                    results[label]["server_cpu_s"] = _cpu_seconds(proc.pid)
                finally:
                    proc.send_signal(signal.SIGTERM)
                    proc.wait(timeout=30)
    finally:
        server.stop()
        clock.uninstall()
    fan = results[f"fanout_{WORKSPACES}"]["warm"]
    base_p99 = results["baseline_1"]["warm"]["p99_ms"] or 1.0
    return {
        **results,
        "warm_p99_ratio_vs_baseline": round(fan["p99_ms"] / base_p99, 2),
        "aim": "p99 < 50 ms at 50 workspaces",
        "method": "fake server send() time vs client recv() time, same CLOCK_MONOTONIC",
    }


if __name__ == "__main__":
    if sys.argv[1:2] == ["--client"]:
        times = asyncio.run(_client(sys.argv[2], sys.argv[3].split(",")))
        print(json.dumps(times), flush=True)
    else:
        print(json.dumps(run(), indent=2))
