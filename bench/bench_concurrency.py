"""Many agent sessions in one process: N `AgentSession`s in one event loop, each in its own temp
workspace, against the fake LLM server running in another process (so its CPU does not count).
Each session's turn is 5 steps of `bash true` (distinct comments) and a final text reply.

For N = 10, 50 and 100:

- throughput: model steps (requests) per second of wall time, all sessions together;
- per-step overhead p50 / p99: the end of one reply to the arrival of the session's next
  request, from the server's own timestamps (this includes running `true` through bash and
  the durable log writes of the step);
- RSS per idle session: (RSS after creating N idle sessions - RSS before) / N;
- peak RSS of the process;
- CPU time of this process per step, and the time per step spent in durable log appends.

Every session steps the moment its previous step ends (the fake server answers at once), so at
N sessions the event loop's cost per step is paid N times between two steps of one session:
the step overhead grows with N by design, and throughput is the figure that shows the engine's
own cost. Real models take seconds per reply, which leaves the loop mostly idle: the `paced`
round runs the 100 sessions against replies that wait 0.5-1.5 s before their first byte.

The sessions share one LLM client (one connection pool), as a server's sessions on one provider
do.
"""

from __future__ import annotations

import asyncio
import contextlib
import gc
import itertools
import os
import resource
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

import orjson

from bench.util import FakeServerProcess, percentile

STEPS = 5
SIZES = (10, 50, 100)
PACED_THINK_S = 1.0
TOOLS = ["bash", "file_read", "todo_write", "todo_read"]
# One LLM client per session (each with its own keep-alive connection), as `xum run` does. A
# single client shared by all sessions is slower here: httpcore checks every pooled connection
# on each request, so its cost per request grows with the number of concurrent streams.
SHARED_CLIENT = os.environ.get("XUM_BENCH_SHARED_CLIENT") == "1"


def _rss_kb() -> int:
    with open("/proc/self/status", encoding="ascii") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def _timed_log_class() -> Any:
    """A SessionLog that adds up the time its durable appends take."""
    from xum.store.frames import Frame
    from xum.store.sessionlog import SessionLog

    class TimedLog(SessionLog):
        spent = 0.0

        def append_many(self, events: Any) -> list[Frame]:
            began = time.perf_counter()
            try:
                return super().append_many(events)
            finally:
                TimedLog.spent += time.perf_counter() - began

    return TimedLog


async def _round(n: int, server: FakeServerProcess, root: Path, label: str) -> dict[str, Any]:
    from xum.engine.agent import AgentSession, SessionSettings, WorkspaceInfo
    from xum.engine.route import resolve_route
    from xum.llm.client import open_client
    from xum.runtime.local import LocalRuntime

    SessionLog = _timed_log_class()

    env = {"ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": server.url}
    route = resolve_route("anthropic:claude-sonnet-5-5", env=env, config={})
    shared = open_client(route.endpoint) if SHARED_CLIENT else None
    clients = []
    prefix = f"{label}-{n}"
    dirs = []
    for i in range(n):
        workdir = root / prefix / f"ws{i}"
        workdir.mkdir(parents=True)
        dirs.append(workdir)

    gc.collect()
    before_kb = _rss_kb()
    sessions = []
    for i, workdir in enumerate(dirs):
        ws_id = f"{prefix}-{i}"
        client = shared or open_client(route.endpoint)
        clients.append(client)
        sessions.append(
            AgentSession(
                workspace=WorkspaceInfo(ws_id, ws_id, str(workdir), str(workdir), "local"),
                log=SessionLog.open(ws_id),
                runtime=LocalRuntime(str(workdir), str(workdir)),
                route=route,
                client=client,
                settings=SessionSettings(system_prompt="You are a benchmark.", tools=TOOLS),
                scratch_dir=workdir / ".scratch",
            )
        )
    gc.collect()
    idle_kb = _rss_kb() - before_kb

    started = time.monotonic()
    cpu_started = time.process_time()
    SessionLog.spent = 0.0
    results = await asyncio.gather(
        *(s.run_turn(f"{prefix} session {i}: go") for i, s in enumerate(sessions))
    )
    wall = time.monotonic() - started
    cpu = time.process_time() - cpu_started
    log_s = SessionLog.spent
    bad = [r.reason for r in results if r.reason != "completed"]
    for session in sessions:
        await session.aclose()
        session.log.close()
    for client in set(clients):
        await client.aclose()
    if bad:
        raise RuntimeError(f"{len(bad)} sessions did not complete: {bad[:3]}")

    rows = [r for r in server.dump(root / f"{prefix}.json") if r["key"].startswith(prefix + " ")]
    by_session: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_session[row["key"]].append(row)
    gaps = []
    for requests in by_session.values():
        requests.sort(key=lambda r: r["arrived"])
        for prev, nxt in itertools.pairwise(requests):
            if prev["finished"] is not None:
                gaps.append(nxt["arrived"] - prev["finished"])
    expected = n * (STEPS + 1)
    return {
        "sessions": n,
        "requests": len(rows),
        "expected_requests": expected,
        "wall_s": round(wall, 3),
        "steps_per_s": round(len(rows) / wall, 1),
        # CPU time of this process per model step: steadier than wall time on a busy machine.
        "cpu_ms_per_step": round(cpu / max(1, len(rows)) * 1000, 2),
        # Time per step spent in durable log appends (write, fdatasync, manifest), summed over
        # the engine's log threads: it delays only the session that writes, not the loop.
        "log_append_ms_per_step": round(log_s / max(1, len(rows)) * 1000, 2),
        "step_overhead_p50_ms": round(percentile(gaps, 50) * 1000, 2),
        "step_overhead_p99_ms": round(percentile(gaps, 99) * 1000, 2),
        "step_overhead_max_ms": round(max(gaps) * 1000, 2) if gaps else None,
        # Within this process memory freed by earlier rounds is reused, so this undercounts;
        # "idle" below is measured in a fresh process.
        "idle_rss_per_session_kb": round(idle_kb / n, 1),
        "rss_after_round_mb": round(_rss_kb() / 1024, 1),
    }


def _measure_idle(n: int, root: Path) -> dict[str, float]:
    """In a fresh process: RSS growth from creating `n` idle sessions (each with its own log,
    runtime, client and background-process table), after the engine's imports."""
    from xum.engine.agent import AgentSession, SessionSettings, WorkspaceInfo
    from xum.engine.route import resolve_route
    from xum.llm.client import open_client
    from xum.runtime.local import LocalRuntime
    from xum.store.sessionlog import SessionLog

    os.environ["XUM_ROOT"] = str(root / ".xum")
    env = {"ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9"}
    route = resolve_route("anthropic:claude-sonnet-5-5", env=env, config={})

    def make(i: int) -> AgentSession:
        workdir = root / f"idle{i}"
        workdir.mkdir(exist_ok=True)
        ws_id = f"idle-{i}"
        return AgentSession(
            workspace=WorkspaceInfo(ws_id, ws_id, str(workdir), str(workdir), "local"),
            log=SessionLog.open(ws_id),
            runtime=LocalRuntime(str(workdir), str(workdir)),
            route=route,
            client=open_client(route.endpoint),
            settings=SessionSettings(system_prompt="You are a benchmark.", tools=TOOLS),
            scratch_dir=workdir / ".scratch",
        )

    warm = [make(i) for i in range(3)]  # first-use caches (schemas, ...) are not per session
    gc.collect()
    before = _rss_kb()
    sessions = [make(i) for i in range(3, n + 3)]
    gc.collect()
    after = _rss_kb()
    del warm, sessions
    return {"sessions": n, "rss_kb_per_idle_session": round((after - before) / n, 1)}


def _idle_in_subprocess(n: int, root: Path) -> dict[str, float]:
    repo = Path(__file__).resolve().parents[1]
    code = (
        "import json, sys; from pathlib import Path; "
        "from bench.bench_concurrency import _measure_idle; "
        f"print(json.dumps(_measure_idle({n}, Path({str(root)!r}))))"
    )
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=repo, capture_output=True, text=True, check=True
    )
    result: dict[str, float] = orjson.loads(done.stdout.strip().splitlines()[-1])
    return result


def run() -> dict[str, object]:
    out: dict[str, object] = {"steps_per_session": STEPS + 1}
    saved = {k: os.environ.get(k) for k in ("XUM_ROOT",)}
    server = FakeServerProcess(STEPS)
    try:
        with tempfile.TemporaryDirectory(prefix="xum-bench-conc-") as tmp:
            root = Path(tmp)
            os.environ["XUM_ROOT"] = str(root / ".xum")
            # First imports (tool modules, pydantic models) and the first connections are a
            # one-time cost; a small warm-up round keeps them out of the figures.
            asyncio.run(_round(4, server, root, "warmup"))
            for n in SIZES:
                out[f"n_{n}"] = asyncio.run(_round(n, server, root, "round"))
            idle_root = root / "idle"
            idle_root.mkdir()
            out["idle"] = _idle_in_subprocess(max(SIZES), idle_root)
            # The same 100 sessions against replies that take 1 s (0.5-1.5 s) to start, as a
            # model's would: what one process adds per step when the sessions are not all
            # stepping in the same millisecond.
            paced = FakeServerProcess(STEPS, PACED_THINK_S)
            try:
                out[f"paced_n_{max(SIZES)}"] = {
                    "think_s": PACED_THINK_S,
                    **asyncio.run(_round(max(SIZES), paced, root, "paced")),
                }
            finally:
                paced.close()
    finally:
        server.close()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
    out["peak_rss_mb"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    return out


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        print(orjson.dumps(run(), option=orjson.OPT_INDENT_2).decode())
