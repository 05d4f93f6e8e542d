"""Real git repositories for tests: one committed tree on `main`, made with the system git."""

from __future__ import annotations

import subprocess
from collections.abc import Mapping
from pathlib import Path

# A fixed identity, so commits work without a user config (HOME is private in every test).
GIT = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com"]

# What most tests start from: one small Python file.
APP_FILES: Mapping[str, str | bytes] = {"app.py": "def greet():\n    return 'hi'\n"}
# The same with a binary file beside it (`xum run`'s tests read it to see binary refused).
APP_AND_BINARY_FILES: Mapping[str, str | bytes] = {
    **APP_FILES,
    "logo.bin": b"\x89PNG\x00\x01\x02binary\x00data",
}


def make_repo(
    path: Path, files: Mapping[str, str | bytes] = APP_FILES, *, message: str = "init"
) -> Path:
    """`git init` at `path` (created if missing) and one commit of `files` (name -> text or
    bytes) with `message`; returns `path`."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
    for name, content in files.items():
        target = path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(content, bytes):
            target.write_bytes(content)
        else:
            target.write_text(content)
    subprocess.run([*GIT, "add", "."], cwd=path, check=True)
    subprocess.run([*GIT, "commit", "-qm", message], cwd=path, check=True)
    return path
