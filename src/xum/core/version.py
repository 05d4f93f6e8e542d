"""The version string `xum --version` prints: `v<version> (<short git sha>)`.

The sha comes from `_build_info.py`, which the wheel build bakes in; an editable checkout has no
such file and reads the commit straight from `.git` (no subprocess, so the fast path stays fast).
"""

from __future__ import annotations

import importlib
from pathlib import Path

from xum import __version__


def _read_git_sha(start: Path) -> str | None:
    for parent in (start, *start.parents):
        git = parent / ".git"
        if git.is_file():  # a linked worktree: "gitdir: <path>"
            text = git.read_text(encoding="utf-8", errors="replace").strip()
            if not text.startswith("gitdir:"):
                return None
            git = (parent / text.split(":", 1)[1].strip()).resolve()
        if git.is_dir():
            return _resolve_head(git)
    return None


def _resolve_head(git_dir: Path) -> str | None:
    try:
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not head.startswith("ref:"):
        return head[:7] or None
    ref = head.split(":", 1)[1].strip()
    common = git_dir
    commondir = git_dir / "commondir"
    if commondir.is_file():
        common = (git_dir / commondir.read_text(encoding="utf-8").strip()).resolve()
    for base in (git_dir, common):
        ref_file = base / ref
        if ref_file.is_file():
            return ref_file.read_text(encoding="utf-8").strip()[:7] or None
    packed = common / "packed-refs"
    if packed.is_file():
        for line in packed.read_text(encoding="utf-8").splitlines():
            parts = line.split(" ", 1)
            if len(parts) == 2 and parts[1] == ref:
                return parts[0][:7]
    return None  # an unborn branch: no commit yet


def git_sha() -> str:
    try:  # absent in editable checkouts; the wheel build writes it
        return str(importlib.import_module("xum._build_info").GIT_SHA)
    except ImportError:
        pass
    return _read_git_sha(Path(__file__).resolve().parent) or "unknown"


def version_string() -> str:
    return f"v{__version__} ({git_sha()})"
