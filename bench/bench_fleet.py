"""One real `xum server` holding many paced sessions: step overhead and server CPU per step.

Setup: a real `xum server` subprocess (its own `$XUM_ROOT`), the fake LLM in a process of its own
(`bench.fake_server`, so its CPU is not the server's), N workspaces whose agents each run `STEPS`
tool steps (`bash true # k`) and a final text reply. Every reply waits 0.5-1.5 x `THINK_S` before
its first byte, like a model thinking, so the steady state is about N / THINK_S steps per second
and the server's loop is mostly idle: what is left is what the server adds per step.
Optionally (`XUM_BENCH_FLEET_WS=1`, on by default) one WebSocket client, a process of its own,
subscribes to every workspace and drains what it is sent, as a browser showing the fleet does.

Figures per size:
- step overhead p50 / p99 / max: from the end of one reply (the fake's own timestamp) to the
  arrival of the session's next request at the fake; it covers parsing the reply, the durable
  log writes, running `true` through bash, the fan-out to the client and the next request;
- server CPU per step: the server process's utime + stime (/proc/<pid>/stat) over the turns,
  divided by the number of model requests (tool children's CPU is not counted: it is theirs).

Sizes: `XUM_BENCH_FLEET_SIZES` (default "50,100"; "200,500" when the machine can: most of the
time goes into creating the worktrees), or argv (`python -m bench.bench_fleet 50 100 200`). A
default run takes about two minutes on an idle machine.

The `steady_*` figures count only the steps taken while every session of the fleet was running
(sessions open one after another as their first messages arrive, and finish at different times).
The server CPU per step includes opening each session once (spread over its 13 steps).

Before / after (2026-12-04, 2 cores shared with other jobs, load average 8-12; A = main, B = this
branch, interleaved A B A B in one sitting; p50 / p99 step overhead in ms, server CPU ms/step):

    worktree, 50:   A 327 / 1049, 8.5   B 212 / 1160, 9.0   A 176 / 1195, 9.2   B 101 / 1169, 8.9
    worktree, 100:  A 599 / 2393, 8.0   B 460 / 1958, 8.7   A 371 / 1170, 8.0   B 456 / 1823, 8.1
    local, 50:      A  67 /  613, 8.6   B  72 / 1027, 8.7   A  55 /  424, 8.6   B 294 /  888, 8.9
    local, 100:     A 389 / 1390, 8.9   B 369 / 1846, 8.7   A 588 / 2010, 8.2   B 406 / 2539, 9.1
    local, 200:     A 163 /  539, 8.8   B 175 /  602, 8.4
    local, 300:     A 177 /  948, 9.1   B 177 / 1137, 9.2
    (8 steps per session there; these runs sent the first messages one by one, so at 200 and 300
    not every session ran at once; B of the first four rows was before the inbox index)
    local, 100, steady window, 12 steps:  A 117 / 588, 7.4   B 96 / 744, 7.2
                                          A 195 / 1092, 7.0  B 347 / 1442, 6.3
    worktree, 100, steady window, 12 steps: A 170 / 1622, 5.5  B 86 / 2159, 6.1
                                            A 70 / 1614, 6.1   B 76 / 1919, 6.1

Server per step (2026-12-04, branch serverspeed, A = its base 69eb212, B = the branch, A B
interleaved in one sitting, worktree workspaces, WebSocket client on, 13 requests per session;
server CPU ms/step, p99 step overhead ms, first tool step p50, later steps p99):

    50, 3 rounds:  A 6.83 / 564 / 437 / 499   B 6.18 / 519 / 396 / 53
                   A 7.28 / 570 / 424 / 293   B 6.75 / 392 / 276 / 76
                   A 8.43 / 724 / 574 / 476   B 6.32 / 467 / 322 / 61
                   medians A 7.28 -> B 6.32 ms/step (B/A 0.905); later steps' p99 476 -> 61 ms
    100, 2 rounds: A 6.47 / 2924 / 1691 / 2875  B 5.95 / 1286 / 1053 / 812
                   A 7.13 / 2154 /  997 / 1940  B 5.78 / 1853 / 1508 / 675

What it changed: the hub took the frames of each step's gap (`step_start`, `request_header`)
from the live session's log in memory instead of reading the log file again; the masker's
server-token files are checked by a stat; the fleet's spending is written at most every half
second instead of once per step; `xum_root` and each request URL are parsed once; and a new
workspace's session sandbox no longer restarts at its second command (bwrap had made the held
`.xum` mount point on the host at the first one: the key changed). The restart was the whole
p99 of the later steps. What is left of the p99 is the first tool step of each session, which
starts its sandbox: 64 ms at 5 sessions, 300-450 ms when 50 start in the same second (the bench
starts them together). The server's CPU per step is spread thin (a `py-spy --gil` profile of 50
sessions: the tool path 37%, of it the sandbox plan and git layout 7%, hooks lookup 4%, the
command-risk parse 3%; the model request and its stream 24%; log appends and their thread hops
11%; the hub and the WebSocket writers 7%), and about a third of it is the kernel's (fsyncs,
thread wake-ups, pipes).

Issue 24's next cuts (2026-12-04, branch s24; worktree workspaces, WebSocket client on, 13
requests per session, 2 cores shared with 4 other jobs, load average 5-12; each row a same-run A/B,
A = the commit before the cut, medians of 3 interleaved rounds; server CPU ms/step, p99 step
overhead ms, first tool step p50 ms):

    sandbox started with the turn, 50:  A 6.22 / 1068 / 904   B 6.14 / 566 / 112   (B/A 0.99)
    own-secret filters kept, 50:        A 6.34 / 1073 / 228   B 6.60 / 618 / 140   (noise;
                                        by process CPU the filters went 54.7 -> 1.0 us a step)
    local streaming scan shared, local workspaces, 100:
                                        A 6.81 / 1321 / 381   B 6.18 /  981 / 549  (B/A 0.91,
                                        every B below every A)
    the git dirs kept (by process CPU): 48 -> 6 us a command; below the fleet's noise
    one run each, base (16b95c9) against the branch:
      100:  A 6.03 / 1609 / 1428   B 5.87 / 442 / 282
      200:  A 5.23 / 1642 / 1159   B 5.43 / 1359 / 690

Starting the session sandbox while the model answers the first request took the first tool step
out of the tail: at 100 sessions the p99 fell from 1.6 s to 0.44 s. The per-step CPU barely
moved: a `thread_time` profile (`XUM_BENCH_PROFILE_CPU`) of the loop thread still shows no
function above a few percent, and a third of the server's CPU is the kernel's
(`server_system_cpu_ms_per_step`: 1.5-2.2 of 5.2-6.9 ms). cProfile's per-call overhead inflates
small Python helpers several times (the environment filters, hook lookups, an env encoding it put
at 0.3 ms measured 14 us): cuts made on its word alone measured nothing (a kept listing of `.xum/`
for hook lookups, an encoding memo: both dropped again). The local-workspace scan is the one
cost that grew with the fleet: a fresh scan costs 1.9 ms at 100 local workspaces and 9-10 ms at
500, and every local session made one every 5 s (about 0.9 of a core at 500); now one per second
serves them all.

Before this branch, no size differed beyond the noise of the machine: the cuts of that branch
remove work that grows with the fleet (the registry built whole on every local tool step, the inbox
walked whole on every status change, a lock file truncated on the loop at each turn end), not the
constant per-step cost. What stands in the way of 500 sessions: the server spends 6-9 ms of CPU per
step, spread thin (a cProfile of 50 sessions shows no function above a few percent: the tool path's
sandbox layout, denylist, hook and secret-file checks; building and streaming the request; the log
appends and the hub's gap fill that re-reads the log for bookkeeping frames; the fan-out), and the
loop thread holds the GIL for all of it. At 1 step per second per session that is 0.5 core per 60
sessions; on 2 shared cores one server tops out near 60-70 steps per second, and the overhead grows
past that. The aim (under 2 ms per step) needs that constant cost cut about four times, or the
sessions spread over more than one process.
"""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.util import FakeServerProcess, git_repo, percentile, subscribe_all

STEPS = int(os.environ.get("XUM_BENCH_FLEET_STEPS", "12"))
THINK_S = float(os.environ.get("XUM_BENCH_FLEET_THINK_S", "1.0"))
SIZES = tuple(int(s) for s in os.environ.get("XUM_BENCH_FLEET_SIZES", "50,100").split(","))
# Worktree workspaces by default: a fleet of agents on one project each needs its own files (local
# ones share the project directory, and each warns about every sibling that streams).
RUNTIME = os.environ.get("XUM_BENCH_FLEET_RUNTIME", "worktree")
WITH_WS = os.environ.get("XUM_BENCH_FLEET_WS", "1") == "1"
CREATE_AT_ONCE = 8
TOKEN = "bench-token-0123456789abcdef"
REPO = Path(__file__).resolve().parents[1]


def _start_server(root: Path, fake_url: str) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ)
    env.update(
        XUM_ROOT=str(root),
        HOME=str(root.parent),
        XUM_SERVER_AUTH_TOKEN=TOKEN,
        ANTHROPIC_API_KEY="bench-key",
        ANTHROPIC_BASE_URL=fake_url,
    )
    argv = [sys.executable, "-m", "xum", "server", "--port", "0"]
    profile = os.environ.get("XUM_BENCH_PROFILE")
    if profile:  # a cProfile dump of the server, for digging
        argv = [sys.executable, "-m", "cProfile", "-o", profile, *argv[1:]]
    cpu_profile = os.environ.get("XUM_BENCH_PROFILE_CPU")
    if cpu_profile:  # the same, timed by the loop thread's CPU clock (bench/cpuprofile.py)
        argv = [sys.executable, "-m", "bench.cpuprofile", cpu_profile, *argv[3:]]
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, cwd=REPO
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on" not in line:
        proc.kill()
        raise RuntimeError(f"xum server did not start: {line!r}")
    return proc, line.split("listening on ", 1)[1].strip()


def _cpu_s(pid: int) -> float | None:
    """User + system CPU time the process has used so far (Linux /proc)."""
    split = _cpu_split_s(pid)
    return None if split is None else split[0] + split[1]


def _cpu_split_s(pid: int) -> tuple[float, float] | None:
    """(user, system) CPU time the process has used so far (Linux /proc)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:  # the process may be gone
        return None
    tick = os.sysconf("SC_CLK_TCK")
    return int(fields[11]) / tick, int(fields[12]) / tick


async def _client(url: str, ids: list[str]) -> None:
    """The WebSocket client (its own process): subscribe to every workspace, say READY, then
    drain everything until stdin closes."""
    import websockets

    ws_url = url.replace("http://", "ws://") + "/api/ws"
    async with websockets.connect(
        ws_url,
        additional_headers={"Authorization": f"Bearer {TOKEN}"},
        max_size=None,
        compression=None,  # type: ignore[arg-type]
    ) as ws:
        await subscribe_all(ws, ids)
        print("READY", flush=True)
        loop = asyncio.get_running_loop()
        stop = loop.run_in_executor(None, sys.stdin.read)
        count = 0
        while not stop.done():
            with __import__("contextlib").suppress(TimeoutError):
                async with asyncio.timeout(0.5):
                    await ws.recv()
                    count += 1
        print(count, flush=True)


async def _create(http: Any, project: Path, n: int) -> list[str]:
    """N workspaces, a few at a time (each is a `git worktree add`: slow one by one)."""
    gate = asyncio.Semaphore(CREATE_AT_ONCE)

    async def one() -> str:
        async with gate:
            res = await http.post(
                "/api/workspaces",
                json={
                    "projectPath": str(project),
                    "runtime": {"type": RUNTIME},
                    "model": "anthropic:claude-sonnet-5-5",
                },
            )
            res.raise_for_status()
            return str(res.json()["id"])

    return list(await asyncio.gather(*(one() for _ in range(n))))


async def _send_all(http: Any, ids: list[str], prefix: str) -> None:
    """The first message to every workspace, a few at a time (each opens a session)."""
    gate = asyncio.Semaphore(CREATE_AT_ONCE)

    async def one(k: int, wid: str) -> None:
        async with gate:
            res = await http.post(f"/api/workspaces/{wid}/messages", json={"text": f"{prefix}{k}"})
            res.raise_for_status()

    await asyncio.gather(*(one(k, wid) for k, wid in enumerate(ids)))


def _steady_window(by_session: dict[str, list[dict[str, Any]]]) -> tuple[float, float]:
    """From the moment the last session made its first request to the moment the first session
    got its last reply: every session of the fleet is running then."""
    starts = [min(r["arrived"] for r in rows) for rows in by_session.values() if rows]
    ends = [max(r["finished"] or 0.0 for r in rows) for rows in by_session.values() if rows]
    return (max(starts), min(ends)) if starts else (0.0, 0.0)


async def _size(n: int, fake: FakeServerProcess, base: Path, project: Path) -> dict[str, Any]:
    import httpx

    root = base / f"n{n}" / ".xum"
    root.mkdir(parents=True)
    # The governor caps requests in flight per provider (8 by default): a fleet of N agents on
    # one account raises it, or the cap, not the server, sets the pace.
    (root / "config.json").write_text(json.dumps({"governor": {"maxConcurrent": 4 * n}}))
    server, url = _start_server(root, fake.url)
    client_proc: subprocess.Popen[str] | None = None
    try:
        headers = {"Authorization": f"Bearer {TOKEN}"}
        async with httpx.AsyncClient(base_url=url, headers=headers, timeout=120) as http:
            ids = await _create(http, project, n)
            if WITH_WS:
                client_proc = subprocess.Popen(
                    [sys.executable, "-m", "bench.bench_fleet", "--client", url, ",".join(ids)],
                    cwd=REPO,
                    stdin=subprocess.PIPE,
                    stdout=subprocess.PIPE,
                    text=True,
                )
                assert client_proc.stdout is not None
                ready = client_proc.stdout.readline()
                if ready.strip() != "READY":
                    raise RuntimeError(f"bench client failed: {ready!r}")
            prefix = f"fleet {n} "
            cpu0 = _cpu_s(server.pid)
            split0 = _cpu_split_s(server.pid)
            if os.environ.get("XUM_BENCH_PROFILE_CPU"):
                server.send_signal(signal.SIGUSR1)  # bench/cpuprofile.py: profile from here
            began = time.monotonic()
            await _send_all(http, ids, prefix)
            sent_s = time.monotonic() - began
            expected = n * (STEPS + 1)
            deadline = began + 60 + (STEPS + 1) * THINK_S * 4 + n * 0.5
            rows: list[dict[str, Any]] = []
            while time.monotonic() < deadline:
                await asyncio.sleep(1.0)
                rows = [r for r in fake.dump(base / f"n{n}.json") if r["key"].startswith(prefix)]
                if len(rows) >= expected and all(r["finished"] is not None for r in rows):
                    break
            wall = time.monotonic() - began
            await asyncio.sleep(0.5)  # the final text reply's writes
            cpu1 = _cpu_s(server.pid)
            split1 = _cpu_split_s(server.pid)
            if os.environ.get("XUM_BENCH_PROFILE_CPU"):
                server.send_signal(signal.SIGUSR2)
    finally:
        drained = None
        if client_proc is not None:
            out, _ = client_proc.communicate("", timeout=30)
            drained = int(out.strip() or 0)
        server.send_signal(signal.SIGTERM)
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
            server.wait()
    by_session: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_session[row["key"]].append(row)
    gaps, steady, first_gaps, later_gaps = [], [], [], []
    first, last = _steady_window(by_session)
    for requests in by_session.values():
        requests.sort(key=lambda r: r["arrived"])
        for index, (prev, nxt) in enumerate(itertools.pairwise(requests)):
            if prev["finished"] is not None:
                gaps.append(nxt["arrived"] - prev["finished"])
                (first_gaps if index == 0 else later_gaps).append(gaps[-1])
                if first <= prev["finished"] and nxt["arrived"] <= last:
                    steady.append(nxt["arrived"] - prev["finished"])
    cpu = (cpu1 - cpu0) if cpu0 is not None and cpu1 is not None else float("nan")
    return {
        "sessions": n,
        "requests": len(rows),
        "expected_requests": n * (STEPS + 1),
        "wall_s": round(wall, 1),
        "steps_per_s": round(len(rows) / wall, 1),
        "step_overhead_p50_ms": round(percentile(gaps, 50) * 1000, 1),
        "step_overhead_p99_ms": round(percentile(gaps, 99) * 1000, 1),
        "step_overhead_max_ms": round(max(gaps) * 1000, 1) if gaps else None,
        # Only the steps taken while every session of the fleet was running (the others ran
        # while sessions were still being opened, or had already finished).
        "steady_window_s": round(max(0.0, last - first), 1),
        "steady_steps": len(steady),
        "steady_overhead_p50_ms": round(percentile(steady, 50) * 1000, 1),
        "steady_overhead_p99_ms": round(percentile(steady, 99) * 1000, 1),
        # The first tool step of a session starts its sandbox (one in 13 steps here, so it
        # alone sets the p99 above); the later ones are the steady per-step overhead.
        "first_step_overhead_p50_ms": round(percentile(first_gaps, 50) * 1000, 1),
        "later_steps_overhead_p99_ms": round(percentile(later_gaps, 99) * 1000, 1),
        "messages_sent_in_s": round(sent_s, 1),
        "server_cpu_ms_per_step": round(cpu / max(1, len(rows)) * 1000, 2),
        # Of it, the kernel's (system calls: syncs, sends, thread wake-ups, pipes).
        "server_system_cpu_ms_per_step": (
            round((split1[1] - split0[1]) / max(1, len(rows)) * 1000, 2)
            if split0 is not None and split1 is not None
            else None
        ),
        "ws_messages": drained,
    }


def run(sizes: tuple[int, ...] = SIZES) -> dict[str, Any]:
    out: dict[str, Any] = {
        "steps_per_session": STEPS + 1,
        "think_s": THINK_S,
        "websocket_client": WITH_WS,
        "runtime": RUNTIME,
        "aim": "500 sessions, p99 step overhead < 100 ms, server CPU < 2 ms per step",
    }
    fake = FakeServerProcess(STEPS, THINK_S)
    try:
        with tempfile.TemporaryDirectory(prefix="xum-bench-fleet-") as tmp:
            base = Path(tmp)
            project = git_repo(base)
            for n in sizes:
                out[f"n_{n}"] = asyncio.run(_size(n, fake, base, project))
    finally:
        fake.close()
    return out


if __name__ == "__main__":
    if sys.argv[1:2] == ["--client"]:
        asyncio.run(_client(sys.argv[2], sys.argv[3].split(",")))
    else:
        chosen = tuple(int(a) for a in sys.argv[1:]) or SIZES
        print(json.dumps(run(chosen), indent=2))
