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

Wake-up latency, through the workspace host (`Hosts`, as the server runs it) against the fake
LLM in this process: a turn starts a monitored background process that blocks reading a FIFO;
once the turn ended (the workspace idle), writing to the FIFO ends the process.

* `wake_ms`: median, over `WAKE_ROUNDS` rounds, from that write to the arrival at the fake LLM of
  the wake turn's first request (`wake_max_ms`: the slowest round).
"""

from __future__ import annotations

import asyncio
import os
import resource
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.util import git_repo, median_ms, scratch_home

TOTAL_MB = 100
WAKE_ROUNDS = 7
MODEL = "anthropic:claude-sonnet-5-5"


def run() -> dict[str, Any]:
    with tempfile.TemporaryDirectory(prefix="xum-bench-bash-output-") as tmp:
        figures = asyncio.run(_measure(Path(tmp)))
    with scratch_home("xum-bench-wake-") as home:
        figures.update(asyncio.run(_wake_latency(home)))
    return figures


async def _wake_latency(home: Path) -> dict[str, Any]:
    from xum.host.hosts import Hosts
    from xum.host.listener import NullListener
    from xum.testing import fakellm

    repo = git_repo(home)
    samples: list[float] = []
    with fakellm.FakeLLM() as llm:
        os.environ["ANTHROPIC_API_KEY"] = "bench-key"
        os.environ["ANTHROPIC_BASE_URL"] = llm.url
        hosts = Hosts(NullListener())
        try:
            record = await hosts.create(repo, "local", name_hint="wake", model=MODEL)
            for round_ in range(WAKE_ROUNDS):
                fifo = home / f"fifo-{round_}"
                os.mkfifo(fifo)
                arguments = {
                    "script": f"read line < {fifo}; exit 3",
                    "display_name": "blocked",
                    "run_in_background": True,
                    "monitor": {},
                }
                llm.script(
                    fakellm.tool_call("bash", arguments),
                    fakellm.reply("started"),
                    fakellm.reply("noted"),
                )
                before = len(llm.requests)
                await hosts.send(record, f"round {round_}")
                await _drive_done(hosts, record.id)
                assert len(llm.requests) == before + 2
                began = time.monotonic()
                # Opening the FIFO for writing blocks until the process opens it to read.
                await asyncio.to_thread(fifo.write_text, "go\n")
                wake = (await llm.wait_for_requests_async(before + 3, timeout=30))[before + 2]
                samples.append(max(0.0, wake.arrived - began))
                await _drive_done(hosts, record.id)
        finally:
            await hosts.shutdown()
    return {"wake_ms": median_ms(samples), "wake_max_ms": round(max(samples) * 1000, 2)}


async def _drive_done(hosts: Any, workspace_id: str) -> None:
    host = hosts.get(workspace_id)
    assert host is not None and host.task is not None
    await asyncio.wait_for(asyncio.shield(host.task), 60)


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
