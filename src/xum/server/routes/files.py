"""Paths for the browser's pickers: a workspace's files for `@` mentions in the composer, and the
subdirectories of a folder for the Add project dialog's folder browser.

Both are bounded (a few hundred entries, names only) and, like every `/api` route, need the
server's token or a signed-in session. The folder browser shows this machine's directories to
whoever holds the token, who can already run commands on it through an agent.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

from fastapi import APIRouter, Query
from pydantic import BaseModel

from xum.runtime.ssh import SshError
from xum.server.errors import ApiError
from xum.server.hosting import workspace_or_404
from xum.workspaces import filelist
from xum.workspaces.review import workspace_runtime

router = APIRouter(prefix="/api", tags=["files"])

MAX_MATCHES = 50
MAX_DIRS = 500
MAX_PATH = 4096
# A workspace's listing is reused for this long (one listing serves a burst of keystrokes).
FRESH_S = 15.0
_CACHE_SIZE = 32
_listings: dict[str, tuple[float, list[str]]] = {}


class FileMatches(BaseModel):
    paths: list[str]


class DirListing(BaseModel):
    path: str  # absolute, `~` expanded, symlinks resolved
    parent: str | None  # null at the root
    home: str
    dirs: list[str]  # names, sorted; hidden ones only when asked for
    truncated: bool


async def _listing(workspace_id: str) -> list[str]:
    cached = _listings.get(workspace_id)
    if cached is not None and time.monotonic() - cached[0] < FRESH_S:
        return cached[1]
    record = workspace_or_404(workspace_id)
    try:
        async with workspace_runtime(record) as runtime:
            files = await filelist.list_files_in(runtime)
    except SshError as exc:
        raise ApiError(
            400,
            "ssh_error",
            f"cannot list the files on the SSH host {record.host}: {exc}",
            hint=f"check that `ssh {record.host} true` works without a prompt",
        ) from None
    if len(_listings) >= _CACHE_SIZE:
        _listings.pop(next(iter(_listings)))
    _listings[workspace_id] = (time.monotonic(), files)
    return files


@router.get("/workspaces/{workspace_id}/files", response_model=FileMatches)
async def workspace_files(
    workspace_id: str,
    q: str = Query(default="", max_length=1000),
    limit: int = Query(default=12, ge=1, le=MAX_MATCHES),
) -> FileMatches:
    """Paths in the workspace's checkout matching `q` (git's tracked and untracked files,
    ignored ones left out), best first."""
    workspace_or_404(workspace_id)
    files = await _listing(workspace_id)
    return FileMatches(paths=filelist.rank(files, q, limit))


def expand_home(path: str) -> str:
    """`~` and `~/...` name the server user's home directory; other paths are kept as given."""
    if path == "~" or path.startswith("~/"):
        return os.path.expanduser(path)
    return path


def _list_dirs(path: str, hidden: bool) -> DirListing:
    if "\0" in path:
        raise ApiError(422, "invalid_request", "path: must not contain a NUL character")
    expanded = expand_home(path or "~")
    if not os.path.isabs(expanded):
        raise ApiError(422, "invalid_request", "path: must be absolute (or start with ~/)")
    directory = Path(expanded).resolve()
    try:
        entries = sorted(os.scandir(directory), key=lambda e: e.name)
    except FileNotFoundError:
        raise ApiError(404, "not_found", f"no folder at {expanded}") from None
    except NotADirectoryError:
        raise ApiError(422, "invalid_request", f"{expanded} is not a folder") from None
    except PermissionError:
        raise ApiError(403, "forbidden", f"{expanded} cannot be read by the server") from None
    dirs: list[str] = []
    truncated = False
    for entry in entries:
        if not hidden and entry.name.startswith("."):
            continue
        try:
            if not entry.is_dir():
                continue
        except OSError:
            continue
        if len(dirs) == MAX_DIRS:
            truncated = True
            break
        dirs.append(entry.name)
    parent = directory.parent
    return DirListing(
        path=str(directory),
        parent=None if parent == directory else str(parent),
        home=os.path.expanduser("~"),
        dirs=dirs,
        truncated=truncated,
    )


@router.get("/fs/dirs", response_model=DirListing)
async def list_dirs(
    path: str = Query(default="~", max_length=MAX_PATH),
    hidden: bool = Query(default=False),
) -> DirListing:
    """The subdirectories of `path` (by default the home directory), for picking a project."""
    return await asyncio.to_thread(_list_dirs, path, hidden)
