"""Helpers for the workspace lifecycle tests: a project's files, git, a turn in another process."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

# A README and a .gitignore that ignores what the tests of copying ignored files create.
PROJECT_FILES = {
    "README.md": "hello\n",
    ".gitignore": ".env\n.env.local\nconfig/*.secret\nbuild/\n",
}

GIT_ID = ["-c", "user.name=Test", "-c", "user.email=test@example.com"]


def sh_git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *GIT_ID, *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


@contextmanager
def turn_in_other_process(workspace_id: str) -> Iterator[None]:
    """Another xum process holding the workspace's session writer lock (a running turn)."""
    code = textwrap.dedent(
        f"""
        import sys, time
        from xum.store.sessionlog import SessionLog
        log = SessionLog.open({workspace_id!r}, purpose="turn in another process")
        log.begin_write()
        print("ready", flush=True)
        sys.stdin.read()
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "ready"
        yield
    finally:
        proc.kill()
        proc.wait()
