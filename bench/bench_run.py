"""`xum run` against the fake LLM server: a scripted 5-step and 20-step task, each step one
`bash` call running `true`. Medians over several runs of:

- cold start: process start to the first request reaching the server;
- per-step overhead: the end of one reply to the arrival of the next request (this includes
  running `true` through bash, about 1.5 ms on this machine);
- last reply to exit: the end of the last reply to the xum process having exited;
- total wall time and peak RSS of the xum process;
- whether each request's body is a byte prefix of the next (cache stability).

Issue 24, first part (cold start and the first step), measured on the shared 2-core machine with
4-step runs, the branch and its base (c4b130e) alternated run by run, medians of 14-16 pairs
(absolute figures move with the machine's load; the ratios held across runs):

| figure                                  | before   | after    |
|-----------------------------------------|----------|----------|
| modules imported by the first request   | 293 (158 of xum) | 285 (156) |
| dataclasses built before it             | 121      | 114      |
| garbage collections before it           | 62 + 5   | 2        |
| config.json parses in a 5-step run      | ~10      | 2 (one per change of the file) |
| CPU time to the first request           | 197 ms   | 180 ms (-9%) |
| first step, instant fake replies        | 137 ms (7.1x the later ones) | 51 ms (3.1x) |
| first step, replies streamed over ~0.1 s | 206 ms (5.3x) | 53 ms (1.3x) |
| later steps                             | 19 ms    | 17 ms    |

The first bash call no longer imports pydantic (plain arguments are checked against the spec in
`schemas.json`), and what it still needs (the step machinery, the risk parser and its grammar,
the sandbox, the process runner, the bwrap probe) is loaded on background threads once the
request is out; with instant replies there is no wait for that to fill, hence the 3x.
"""

from __future__ import annotations

import itertools
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.util import git_repo, median_ms, percentile
from xum.testing import fakellm

XUM = str(Path(sys.executable).with_name("xum"))
REPEAT = 5


def _prefix_stable(requests: list[Any]) -> bool:
    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "cache_control"}
        if isinstance(value, list):
            return [strip(v) for v in value]
        return value

    bodies = [strip(r.json) for r in requests]
    for before, after in itertools.pairwise(bodies):
        n = len(before["messages"])
        if (
            before["system"] != after["system"]
            or before["tools"] != after["tools"]
            or before["messages"] != after["messages"][:n]
        ):
            return False
    return True


def _one(steps: int, repo: Path, root: Path, sandbox: str | None = None) -> dict[str, Any]:
    replies = [
        # Distinct comments keep the doom-loop guard (identical calls) out of the measurement.
        fakellm.tool_call("bash", {"script": f"true # {i}", "display_name": "noop"}, chunk_size=0)
        for i in range(steps)
    ]
    with fakellm.FakeLLM(*replies, fakellm.text("done", chunk_size=0)) as server:
        env = dict(
            os.environ,
            XUM_ROOT=str(root),
            HOME=str(root.parent),
            ANTHROPIC_API_KEY="bench",
            ANTHROPIC_BASE_URL=server.url,
        )
        started = time.monotonic()
        proc = subprocess.Popen(
            [
                XUM,
                "run",
                "-q",
                *(["--sandbox", sandbox] if sandbox else []),
                "-m",
                "anthropic:claude-sonnet-5-5",
                "bench task",
            ],
            cwd=repo,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
        )
        _, status, usage = os.wait4(proc.pid, 0)
        ended = time.monotonic()
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err = proc.stderr.read().decode() if proc.stderr else ""
            raise RuntimeError(f"xum run failed ({proc.returncode}): {err[-2000:]} {server.errors}")
        reqs = list(server.requests)
    gaps = [
        reqs[i + 1].arrived - reqs[i].finished
        for i in range(len(reqs) - 1)
        if reqs[i].finished is not None
    ]
    last_end = reqs[-1].finished
    return {
        "cold_start_s": reqs[0].arrived - started,
        "exit_after_reply_s": (ended - last_end) if last_end is not None else None,
        "step_gaps_s": gaps,
        "wall_s": ended - started,
        "peak_rss_mb": usage.ru_maxrss / 1024,
        "prefix_stable": _prefix_stable(reqs),
        "requests": len(reqs),
    }


def run() -> dict[str, object]:
    out: dict[str, object] = {"repeat": REPEAT}
    with tempfile.TemporaryDirectory(prefix="xum-bench-run-") as tmp:
        repo = git_repo(Path(tmp))
        _one(1, repo, Path(tmp) / "warm-up" / ".xum")  # page cache and bytecode
        # The default sandbox at 5 and 20 steps, then 20 steps with `--sandbox off` (issue 24's
        # per-step aims name both).
        for steps, sandbox in ((5, None), (20, None), (20, "off")):
            samples = [
                _one(steps, repo, Path(tmp) / f"root-{steps}-{sandbox}-{i}" / ".xum", sandbox)
                for i in range(REPEAT)
            ]
            gaps = [g for s in samples for g in s["step_gaps_s"]]
            out[f"steps_{steps}" + (f"_sandbox_{sandbox}" if sandbox else "")] = {
                "cold_start_ms": median_ms([s["cold_start_s"] for s in samples]),
                "per_step_overhead_ms": median_ms(gaps),
                # The first step imports what only tool calls need (what the prewarm thread has
                # not loaded yet: a fake reply leaves it no time); issue 24 aims at 2x the others.
                "first_step_ms": median_ms([s["step_gaps_s"][0] for s in samples]),
                "later_steps_ms": median_ms([g for s in samples for g in s["step_gaps_s"][1:]]),
                "per_step_overhead_p90_ms": round(percentile(gaps, 90) * 1000, 3),
                "last_reply_to_exit_ms": median_ms(
                    [s["exit_after_reply_s"] for s in samples if s["exit_after_reply_s"]]
                ),
                "wall_ms": median_ms([s["wall_s"] for s in samples]),
                "peak_rss_mb": round(statistics.median(s["peak_rss_mb"] for s in samples), 1),
                "prefix_stable": all(s["prefix_stable"] for s in samples),
                "requests_per_run": samples[0]["requests"],
            }
    true_cost = [
        _time(lambda: subprocess.run(["bash", "-c", "true"], check=True)) for _ in range(20)
    ]
    out["bash_true_baseline_ms"] = median_ms(true_cost)
    return out


def _time(fn: Any) -> float:
    t = time.perf_counter()
    fn()
    return time.perf_counter() - t
