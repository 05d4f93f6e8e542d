"""File paths of a workspace's checkout, for `@` mentions (the terminal UI's composer and the
browser's `GET /api/workspaces/{id}/files`).

`git ls-files` lists tracked and untracked files with ignored ones left out; outside git a walk
that skips hidden directories stands in. Either way at most `MAX_FILES` paths: completion is for
finding a file quickly, not for listing a monorepo. `rank` orders the matches of what was typed:
paths that start with it, then file names that do, then paths that contain it.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from xum.runtime import git
from xum.runtime.base import Runtime
from xum.workspaces import gitinfo

MAX_FILES = 20_000
# Enough for MAX_FILES paths of a usual length; the rest of a larger listing is cut.
MAX_LISTING_BYTES = 4 * 1024 * 1024
_LS_FILES = ["ls-files", "-z", "--cached", "--others", "--exclude-standard"]
# Outside git: regular files, hidden directories skipped, NUL-separated.
_WALK = "find . -mindepth 1 -type d -name '.*' -prune -o -type f -print0 2>/dev/null"


def list_files(root: Path) -> list[str]:
    """Relative paths under the local directory `root`, sorted (blocking: call it on a worker
    thread)."""
    try:
        done = subprocess.run(
            ["git", *_LS_FILES],
            cwd=root,
            capture_output=True,
            timeout=10,
            check=False,
            # xum's own secrets stay out of git (and of the repository's hooks it may run).
            env=git.git_env(GIT_OPTIONAL_LOCKS="0"),
        )
    except (OSError, subprocess.TimeoutExpired):
        done = None
    if done is not None and done.returncode == 0:
        return _names(done.stdout)
    found: list[str] = []
    for here, dirs, files in os.walk(root):
        dirs[:] = sorted(d for d in dirs if not d.startswith("."))
        rel = os.path.relpath(here, root)
        for name in sorted(files):
            found.append(name if rel == "." else f"{rel}/{name}")
            if len(found) >= MAX_FILES:
                return found
    return found


async def list_files_in(runtime: Runtime) -> list[str]:
    """The same list, through a workspace's runtime (a local checkout or an SSH host's)."""
    done = await gitinfo.git_bounded(runtime, _LS_FILES, MAX_LISTING_BYTES)
    if done.code != 0:
        done = await gitinfo.run_bounded(runtime, _WALK, MAX_LISTING_BYTES)
    return _names(done.out, cut=done.truncated)


def _names(raw: bytes, cut: bool = False) -> list[str]:
    parts = raw.split(b"\0")
    if cut and parts:
        parts = parts[:-1]  # the last name may be cut short
    names = {p.decode("utf-8", "replace").removeprefix("./") for p in parts if p}
    return sorted(names)[:MAX_FILES]


def rank(files: list[str], typed: str, limit: int) -> list[str]:
    """Up to `limit` of `files` matching `typed` (case-insensitive), best first."""
    lowered = typed.lower()
    chosen = [f for f in files if f.lower().startswith(lowered)][:limit]
    if len(chosen) < limit:
        taken = set(chosen)
        by_name = [
            f for f in files if f not in taken and f.rsplit("/", 1)[-1].lower().startswith(lowered)
        ]
        chosen.extend(by_name[: limit - len(chosen)])
    if len(chosen) < limit and lowered:
        taken = set(chosen)
        inside = [f for f in files if f not in taken and lowered in f.lower()]
        chosen.extend(inside[: limit - len(chosen)])
    return chosen
