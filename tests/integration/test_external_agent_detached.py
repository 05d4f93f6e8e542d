"""What an external agent starts in a session of its own (as Codex runs its commands) is outside
the agent's process group, so stopping the group misses it: xum stops it too when the workspace
closes (here: when a one-shot `xum run` ends), and the scripted agent's detached `sleep` is gone
after the run."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.support.external_agents import configure, final, run_xum, write_script


def _running(marker: str) -> bool:
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:  # it ended between the listing and the read
            continue
        if marker.encode() in cmdline and state != "Z":
            return True
    return False


def test_closing_the_workspace_stops_what_the_agent_detached(repo: Path, tmp_path: Path) -> None:
    # A number no other process has in its command line: `sleep` takes fractions.
    marker = f"{300 + os.getpid() % 7}.{int.from_bytes(os.urandom(4), 'big')}"
    steps = [{"detach": ["sleep", marker]}, {"message": "left it running"}]
    configure(write_script(tmp_path / "s.json", [steps]))
    code, events, err = run_xum(repo, "--external-agent", "fake", "go")
    assert code == 0, err
    assert final(events)["reason"] == "completed"
    deadline = time.monotonic() + 10
    while _running(marker):
        assert time.monotonic() < deadline, f"sleep {marker} still runs after the workspace closed"
        time.sleep(0.05)
