"""`python -m xum.testing.subreaper CMD`: orphans of the command become the wrapper's children and
are reaped at once (the test sshd runs under it), the command's status is the wrapper's, and a
SIGTERM to the wrapper reaches the command."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(sys.platform != "linux", reason="a child subreaper is Linux's")

WRAPPER = [sys.executable, "-m", "xum.testing.subreaper"]


def _stat(pid: int) -> tuple[str, int] | None:
    """(state, parent pid) of `pid`, or None once it is gone (reaped)."""
    try:
        text = Path(f"/proc/{pid}/stat").read_text()
    except OSError:  # gone between the listing and the read, or long ago
        return None
    state, ppid = text[text.rindex(")") + 2 :].split()[:2]
    return state, int(ppid)


def _wait_for(check: Callable[[], bool], timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, "timed out"
        time.sleep(0.02)


def test_an_orphan_becomes_the_wrappers_child_and_is_reaped(tmp_path: Path) -> None:
    go, pid_file = tmp_path / "go", tmp_path / "orphan.pid"
    # The subshell forks the orphan and exits at once: the orphan's parent is gone.
    script = (
        f"( sh -c 'echo $$ > {pid_file}.tmp; mv {pid_file}.tmp {pid_file};"
        f" while [ ! -e {go} ]; do sleep 0.02; done' & ); "
        f"while [ -e {pid_file} ] || [ ! -e {go} ]; do sleep 0.02; done"
    )
    wrapper = subprocess.Popen([*WRAPPER, "sh", "-c", script])
    try:
        _wait_for(pid_file.exists)
        orphan = int(pid_file.read_text())
        _wait_for(lambda: (s := _stat(orphan)) is not None and s[1] == wrapper.pid)
        go.touch()
        # Reaped, not left a zombie: a PID 1 that never reaps would keep it (state Z) for good.
        _wait_for(lambda: _stat(orphan) is None)
        pid_file.unlink()
        assert wrapper.wait(timeout=20) == 0
    finally:
        wrapper.kill()
        wrapper.wait()


def test_the_commands_status_is_the_wrappers() -> None:
    assert subprocess.run([*WRAPPER, "sh", "-c", "exit 7"], timeout=20).returncode == 7


def test_sigterm_reaches_the_command(tmp_path: Path) -> None:
    ready = tmp_path / "ready"
    wrapper = subprocess.Popen(
        [*WRAPPER, "sh", "-c", f"trap 'exit 5' TERM; touch {ready}; while :; do sleep 0.02; done"]
    )
    try:
        _wait_for(ready.exists)
        wrapper.terminate()
        assert wrapper.wait(timeout=20) == 5
    finally:
        wrapper.kill()
        wrapper.wait()
