"""How many container workspaces one host holds running sleep-paced agents (part of
`bench_container`; not a `bench_*` module of its own).

At each level N (1, 2, 4, ... up to `XUM_BENCH_CONTAINER_MAX`, default 32) N Docker workspaces
each run one agent turn at once: a real `AgentSession` on the workspace's `ContainerRuntime`
against the benchmarks' fake LLM server in its own process (`bench.fake_server`), whose replies
wait 0.5-1.5 s before their first byte (a model thinking) and each call `bash true`. The step
overhead is bench_concurrency's: the end of one reply to the arrival of the session's next
request (the bash call through `exec` in the container, and the step's log writes).

Small levels run several rounds of fresh sessions (at least `MIN_STEPS` steps per level), so a
p99 has samples behind it. Two readings per level: `step_overhead_p99_ms` itself, and
`added_p99_ms`, that p99 less the p99 of a single workspace measured in the same run (the
transport's own cost: each command is one `<cli> exec`, a few hundred ms with podman on a small
machine, so the absolute p99 can pass 100 ms with one workspace; what density adds is the
difference). The ramp stops at the first level whose added p99 passes 100 ms; `held_absolute`
and `held_added` are the largest levels whose p99 stayed within 100 ms by each reading (0: not
even one).
"""

from __future__ import annotations

import itertools
import math
import os
import statistics
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

from bench.bench_concurrency import STEPS, TOOLS, _Server
from bench.util import percentile

LIMIT_MS = 100.0
THINK_S = 1.0
MIN_STEPS = 40


def levels() -> list[int]:
    top = int(os.environ.get("XUM_BENCH_CONTAINER_MAX", "32"))
    out, n = [], 1
    while n <= top:
        out.append(n)
        n *= 2
    return out


async def density(repo: Path, image: str, root: Path) -> dict[str, Any]:
    from xum.workspaces import lifecycle

    server = _Server(think_s=THINK_S)
    created: list[Any] = []
    rounds: dict[str, Any] = {}
    single_p99: float | None = None
    single_median = 0.0
    held_absolute = held_added = 0
    try:
        for n in levels():
            while len(created) < n:  # the containers of earlier levels are kept
                created.append(
                    await lifecycle.create_workspace(
                        repo, f"docker {image}", name_hint=f"dense{len(created)}", run_init=False
                    )
                )
            gaps: list[float] = []
            for k in range(math.ceil(MIN_STEPS / (STEPS * n))):
                gaps += await _round(created[:n], server, root, f"n{n}r{k}")
            p99 = percentile(gaps, 99) * 1000
            if single_p99 is None:
                single_p99 = p99
                single_median = statistics.median(gaps) * 1000
            added = p99 - single_p99
            rounds[f"n_{n}"] = {
                "step_overhead_p50_ms": round(percentile(gaps, 50) * 1000, 1),
                "step_overhead_p99_ms": round(p99, 1),
                "added_p99_ms": round(added, 1),
                "steps": len(gaps),
            }
            if p99 <= LIMIT_MS:
                held_absolute = n
            if added > LIMIT_MS:
                break
            held_added = n
    finally:
        server.close()
        for workspace in created:
            await lifecycle.delete_workspace(workspace.record.id, force=True)
    return {
        "think_s": THINK_S,
        "single_step_overhead_median_ms": round(single_median, 1),
        "single_step_overhead_p99_ms": round(single_p99 or 0.0, 1),
        "held_absolute": held_absolute,
        "held_added": held_added,
        "levels_tried": levels(),
        **rounds,
    }


async def _round(created: list[Any], server: _Server, root: Path, label: str) -> list[float]:
    """Every workspace runs one turn at once; the step gaps from the server's timestamps."""
    import asyncio

    from xum.engine.agent import AgentSession, SessionSettings, WorkspaceInfo
    from xum.engine.route import resolve_route
    from xum.llm.client import open_client
    from xum.store.sessionlog import SessionLog

    env = {"ANTHROPIC_API_KEY": "bench", "ANTHROPIC_BASE_URL": server.url}
    route = resolve_route("anthropic:claude-sonnet-5-5", env=env, config={})
    sessions, clients = [], []
    for i, workspace in enumerate(created):
        record = workspace.record
        session_id = f"{label}-{i}"
        scratch = root / "scratch" / session_id
        scratch.mkdir(parents=True)
        clients.append(open_client(route.endpoint))
        sessions.append(
            AgentSession(
                workspace=WorkspaceInfo(
                    session_id, record.name, record.project_path, record.path, "docker"
                ),
                log=SessionLog.open(session_id),
                runtime=workspace.runtime,
                route=route,
                client=clients[-1],
                settings=SessionSettings(system_prompt="You are a benchmark.", tools=TOOLS),
                scratch_dir=scratch,
            )
        )
    started = time.monotonic()
    results = await asyncio.gather(
        *(s.run_turn(f"{label} session {i}: go") for i, s in enumerate(sessions))
    )
    for session in sessions:
        await session.aclose()
        session.log.close()
    for client in clients:
        await client.aclose()
    bad = [r.reason for r in results if r.reason != "completed"]
    if bad:
        raise RuntimeError(f"{len(bad)} sessions did not complete: {bad[:3]}")
    rows = [r for r in server.dump(root / f"{label}.json") if r["key"].startswith(f"{label} ")]
    by_session: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        by_session[row["key"]].append(row)
    gaps = []
    for requests in by_session.values():
        requests.sort(key=lambda r: r["arrived"])
        for prev, nxt in itertools.pairwise(requests):
            if prev["finished"] is not None:
                gaps.append(nxt["arrived"] - prev["finished"])
    if not gaps:
        raise RuntimeError(f"no steps recorded in {time.monotonic() - started:.1f} s")
    return gaps
