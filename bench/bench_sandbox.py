"""The command sandbox: what bubblewrap adds to each command.

Measured in the same run, interleaved (one bare, one sandboxed, and so on, so load on the
machine hits both alike):
* `bare`: `true` through the local runtime (`bash -c true`, the process group, the pipe);
* `sandboxed`: the same through the sandboxed view of that runtime, in workspace-write mode in a
  real git checkout (the layout's few stats, `bwrap` with its mount and PID namespaces);
* `sandboxed_egress_off`: the same with a network namespace too;
* `session`: the same layout through the session's one sandbox (`xum.runtime.sandboxd`: one
  long-lived bwrap whose launcher starts each command), the default for a local
  workspace-write session; `sandboxed` is the fresh bwrap per command it falls back to.
`added_ms` is the median sandboxed time minus the median bare one, `added_ms_session` the same
for the session sandbox (the aim: under 5 ms).
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.util import median_ms

REPEAT = 200
GIT = ["git", "-c", "user.name=Bench", "-c", "user.email=bench@example.com"]


def run() -> dict[str, Any]:
    from xum.runtime.sandbox import local_backend

    backend = local_backend()
    if not backend.ok:
        return {"skipped": backend.detail}
    with tempfile.TemporaryDirectory(prefix="xum-bench-sandbox-") as tmp:
        os.environ["XUM_ROOT"] = str(Path(tmp, "root"))
        repo = Path(tmp, "repo")
        repo.mkdir()
        subprocess.run(["git", "init", "-q", "-b", "main"], cwd=repo, check=True)
        (repo / "app.py").write_text("x = 1\n")
        subprocess.run([*GIT, "add", "."], cwd=repo, check=True)
        subprocess.run([*GIT, "commit", "-qm", "init"], cwd=repo, check=True)
        figures = asyncio.run(_measure(repo, Path(tmp, "root", "scratch", "bench")))
    figures["backend"] = backend.detail
    return figures


async def _measure(repo: Path, scratch: Path) -> dict[str, Any]:
    from xum.runtime.local import LocalRuntime
    from xum.runtime.sandbox import Layout, SandboxedRuntime, read_git_layout
    from xum.runtime.sandboxd import SessionSandbox

    scratch.mkdir(parents=True)
    bare = LocalRuntime(str(repo))

    def layout(egress: str) -> Layout:
        return Layout(
            workspace=str(repo),
            writable_workspace=True,
            temp_dir=str(scratch / "sandbox-tmp"),
            egress="off" if egress == "off" else "shared",
            writable=(str(scratch),),
            git=read_git_layout(str(repo)),
            hidden=(os.environ["XUM_ROOT"],),
            drop_caps=os.geteuid() == 0,
        )

    (repo / ".xum").mkdir(exist_ok=True)  # else the first command's mount point adds it
    session = SessionSandbox()
    runtimes = {
        "bare": bare,
        "sandboxed": SandboxedRuntime(bare, layout("shared")),
        "sandboxed_egress_off": SandboxedRuntime(bare, layout("off")),
        "session": SandboxedRuntime(bare, layout("shared"), session),
    }
    samples: dict[str, list[float]] = {name: [] for name in runtimes}
    for name, runtime in runtimes.items():  # warm up: page cache, the first bwrap
        result = await runtime.exec("true", env={})
        assert result.exit_code == 0, (name, result)
    for _ in range(REPEAT):
        for name, runtime in runtimes.items():
            started = time.perf_counter()
            await runtime.exec("true", env={})
            samples[name].append(time.perf_counter() - started)
    session.close()
    medians = {name: median_ms(values) for name, values in samples.items()}
    return {
        "session_sandbox": session.unavailable or "used",
        "repeat": REPEAT,
        "median_ms": medians,
        "added_ms": round(medians["sandboxed"] - medians["bare"], 3),
        "added_ms_egress_off": round(medians["sandboxed_egress_off"] - medians["bare"], 3),
        "added_ms_session": round(medians["session"] - medians["bare"], 3),
        "ratio": round(medians["sandboxed"] / medians["bare"], 2),
    }
