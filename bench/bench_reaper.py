"""The command helper (`xum.runtime.reaper`): what starting unsandboxed commands through it costs.

* `start_ms`: the helper's one-time start (a `python -I -S` interpreter, `prctl`, the ready
  handshake), the median of START_REPEAT fresh helpers; xum pays it once, at its first
  unsandboxed command.
* `median_ms`: `true` run through `run_script` (`bash -c true`, the process group, the output
  pipe), `direct` (xum forks the command itself, as before the helper) and `helper`, interleaved
  (one of each, and so on, so load on the machine hits both alike). `added_ms` is the median
  helper time minus the median direct one.
* `loop_busy_ms`: how long each way keeps the event loop's thread busy per command (CPU time of
  that thread): with the helper, the fork happens in the helper, not in xum.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from typing import Any

from bench.util import median_ms

REPEAT = 200
START_REPEAT = 10


def run() -> dict[str, Any]:
    if not sys.platform.startswith("linux"):
        return {"skipped": "the command helper is Linux only"}
    from xum.runtime import reaper

    starts: list[float] = []
    for _ in range(START_REPEAT):
        began = time.perf_counter()
        conn = reaper._Connection()  # a helper of its own each time: the start alone
        starts.append(time.perf_counter() - began)
        conn.close()
    with tempfile.TemporaryDirectory(prefix="xum-bench-reaper-") as tmp:
        figures = asyncio.run(_measure(tmp))
    figures["start_ms"] = median_ms(starts)
    return figures


async def _measure(cwd: str) -> dict[str, Any]:
    from xum.runtime import reaper
    from xum.runtime.process import run_script

    env = dict(os.environ)
    ways = {"direct": False, "helper": True}
    samples: dict[str, list[float]] = {name: [] for name in ways}
    busy: dict[str, list[float]] = {name: [] for name in ways}
    for via_helper in ways.values():  # warm up: page cache, the helper's start
        result = await run_script(
            "true", env=env, cwd=cwd, timeout_s=30, on_output=None, via_helper=via_helper
        )
        assert result.exit_code == 0, result
    if reaper.helper_pid() is None:
        return {"skipped": f"the helper did not start: {reaper.unavailable_reason()}"}
    for _ in range(REPEAT):
        for name, via_helper in ways.items():
            began = time.perf_counter()
            cpu = time.thread_time()
            await run_script(
                "true", env=env, cwd=cwd, timeout_s=30, on_output=None, via_helper=via_helper
            )
            busy[name].append(time.thread_time() - cpu)
            samples[name].append(time.perf_counter() - began)
    medians = {name: median_ms(values) for name, values in samples.items()}
    return {
        "repeat": REPEAT,
        "median_ms": medians,
        "added_ms": round(medians["helper"] - medians["direct"], 3),
        "loop_busy_ms": {name: median_ms(values) for name, values in busy.items()},
    }
