"""`bash_output` on a background process that printed 100 MB: memory stays bounded.

A real background `bash` (through the tool, on a local runtime) prints `TOTAL_MB` MB of lines,
then one line the read filters for. Once it ended, one `bash_output` call reads it with a
filter.

* `rss_growth_mb`: the interpreter's peak resident memory (ru_maxrss) after the process ran and
  was read, minus before it started: the ring (1 MiB, at most 1.25 MiB) and the read's copy,
  not the 100 MB.
* `ring_held_bytes`: what the process's ring held at the end; `read_missed_bytes`: what the read
  reported as no longer in memory (in the spill file).
* `read_ms`: the filtered read itself (decoding and matching what the ring holds).
* `output_chars`: the result's size (head and tail bounded).
"""

from __future__ import annotations

import asyncio
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

TOTAL_MB = 100


def run() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="xum-bench-bash-output-") as tmp:
        return asyncio.run(_measure(Path(tmp)))


def _rss_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


async def _measure(tmp: Path) -> dict[str, Any]:
    from xum.runtime.local import LocalRuntime
    from xum.tools.background import BackgroundProcesses
    from xum.tools.base import ToolContext
    from xum.tools.bash import BashInput, BashTool
    from xum.tools.bash_output import BashOutputInput, BashOutputTool

    workspace, scratch, temp = tmp / "ws", tmp / "scratch", tmp / "tmp"
    for directory in (workspace, scratch, temp):
        directory.mkdir()
    procs = BackgroundProcesses(str(scratch))
    ctx = ToolContext(
        call_id="bench",
        runtime=LocalRuntime(str(workspace), str(temp)),
        workspace_id="bench",
        workspace_name="bench",
        project_path=str(workspace),
        scratch_dir=str(scratch),
        env={},
        background=procs,
    )
    total = TOTAL_MB * 1_000_000
    script = f"yes 'a line of build output, as a chatty tool prints it' | head -c {total}; "
    script += "echo; echo 'BUILD DONE'"
    before = _rss_mb()
    started = await BashTool().run(
        BashInput(script=script, display_name="chatty", run_in_background=True), ctx
    )
    proc = procs.get(started.meta["taskId"])
    assert proc is not None and proc.task is not None
    began = time.perf_counter()
    await asyncio.wait({proc.task})
    produced_s = time.perf_counter() - began
    began = time.perf_counter()
    read = await BashOutputTool().run(
        BashOutputInput(
            process_id=proc.process_id, filter="DONE", filter_exclude=None, timeout_secs=None
        ),
        ctx,
    )
    read_ms = (time.perf_counter() - began) * 1000
    assert "BUILD DONE" in read.output, read.output
    figures = {
        "total_bytes": proc.ring.total,
        "produce_s": round(produced_s, 2),
        "read_ms": round(read_ms, 2),
        "rss_growth_mb": round(_rss_mb() - before, 1),
        "ring_held_bytes": proc.ring.held,
        "read_missed_bytes": read.meta["missed_bytes"],
        "output_chars": len(read.output),
    }
    await procs.close()
    return figures
