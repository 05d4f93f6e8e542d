"""A session whose commands run outside the sandbox starts the command helper
(`xum.runtime.reaper`) once its first request is out, while the model answers, so the first
command does not wait for a Python interpreter to start. A sandboxed session leaves it alone.

Each case runs in a fresh interpreter: the helper and the start-once flags are per process."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import orjson

from tests.gitrepo import make_repo
from xum.core.paths import xum_root

SCRIPT = """
import asyncio, json, sys, time
from pathlib import Path
from xum.llm.http import first_request_sent
from xum.runtime import reaper
from xum.runtime.local import LocalRuntime
from xum.workspaces.safety.choice import SafetyChoice
from xum.workspaces.safety.sandboxing import SandboxMiddleware

async def main() -> None:
    workspace, scratch = sys.argv[1], Path(sys.argv[2])
    middleware = SandboxMiddleware(
        LocalRuntime(workspace), workspace_id="ws1", scratch_dir=scratch, emit=lambda e: None,
        choice=SafetyChoice(),
    )
    before = reaper.helper_pid()
    first_request_sent.set()  # the first request is out
    deadline = time.monotonic() + 20
    while reaper.helper_pid() is None and time.monotonic() < deadline:
        await asyncio.sleep(0.01)
    print(json.dumps({"before": before, "after": reaper.helper_pid()}))
    await middleware.aclose()

asyncio.run(main())
"""


def _run(tmp_path: Path, mode: str, wait_for_helper: bool) -> dict[str, int | None]:
    workspace = make_repo(tmp_path / "repo")
    root = xum_root()
    scratch = root / "scratch" / "ws1"
    scratch.mkdir(parents=True)
    (root / "config.json").write_bytes(orjson.dumps({"sandbox": {"mode": mode}}))
    script = SCRIPT if wait_for_helper else SCRIPT.replace("time.monotonic() + 20", "0")
    done = subprocess.run(
        [sys.executable, "-c", script, str(workspace), str(scratch)],
        capture_output=True,
        text=True,
        timeout=60,
        env=dict(os.environ),
    )
    assert done.returncode == 0, done.stderr
    result: dict[str, int | None] = json.loads(done.stdout)
    return result


def test_an_unsandboxed_session_starts_the_helper_once_the_first_request_is_out(
    tmp_path: Path,
) -> None:
    seen = _run(tmp_path, "off", wait_for_helper=True)
    assert seen["before"] is None  # nothing before the request: start-up stays lean
    assert seen["after"] is not None


def test_a_sandboxed_session_does_not_start_the_helper(tmp_path: Path) -> None:
    # Sandboxed commands never go through the helper; nothing waits, so nothing to poll for.
    seen = _run(tmp_path, "workspace-write", wait_for_helper=False)
    assert seen == {"before": None, "after": None}
