"""The SSH (and container) command bootstrap gives a command's left-over processes a grace period
before stopping them, but a zombie is not a left-over: on a host or in a container whose init
never reaps, orphans stay zombies, and every command used to wait out the whole grace for them.

The bootstrap runs here under a small Python parent that is a child subreaper and never reaps
(an init like that), with `sleep` on PATH replaced by a logger: the grace is its `sleep 0.25`."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from xum.runtime.ssh import _BOOTSTRAP

# The parent: adopts orphans (PR_SET_CHILD_SUBREAPER) and never reaps them; runs the bootstrap
# with the payload on stdin (NUL-terminated, the stream kept open as the lifeline).
_PARENT = textwrap.dedent(
    """
    import ctypes, subprocess, sys
    ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0)
    bootstrap, payload = sys.argv[1], sys.argv[2]
    proc = subprocess.Popen(["bash", "-c", bootstrap], stdin=subprocess.PIPE)
    proc.stdin.write(payload.encode() + b"\\0")
    proc.stdin.flush()
    sys.exit(proc.wait(timeout=60))
    """
)


def run_bootstrap(tmp_path: Path, payload: str) -> list[str]:
    """Run `payload` through the bootstrap; the `sleep` calls the bootstrap itself made."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    calls = tmp_path / "sleep-calls"
    fake = bin_dir / "sleep"
    fake.write_text(f'#!/bin/sh\necho "$@" >> {calls}\nexec /bin/sleep "$@"\n')
    fake.chmod(0o755)
    env = {**os.environ, "PATH": f"{bin_dir}:{os.environ['PATH']}"}
    done = subprocess.run(
        [sys.executable, "-c", _PARENT, _BOOTSTRAP, payload], env=env, timeout=90, check=False
    )
    assert done.returncode == 0
    return calls.read_text().split() if calls.exists() else []


def test_an_orphan_left_as_a_zombie_gets_no_grace(tmp_path: Path) -> None:
    pid_file = tmp_path / "orphan"
    # A background child of a shell that exits at once: orphaned, adopted by the parent above,
    # and a zombie once it ends. The payload waits until it is one (bounded by the test timeout).
    payload = f"""
    sh -c 'true & echo $! > {pid_file}'
    p=$(cat {pid_file})
    while read -r l < /proc/$p/stat; do set -- ${{l##*) }}; [ "$1" = Z ] && break; done
    """
    assert run_bootstrap(tmp_path, payload) == []


def test_a_live_left_over_still_gets_the_grace_and_is_stopped(tmp_path: Path) -> None:
    pid_file = tmp_path / "left"
    payload = f"sh -c '/bin/sleep 300 & echo $! > {pid_file}'"
    assert run_bootstrap(tmp_path, payload)[:1] == ["0.25"]
    pid = int(pid_file.read_text())
    stat = Path(f"/proc/{pid}/stat")
    try:
        state = stat.read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        state = "gone"
    assert state in ("Z", "gone")  # stopped (a zombie of the non-reaping parent, now gone too)
