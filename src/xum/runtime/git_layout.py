"""A checkout's git dirs (`xum.runtime.sandbox.read_git_layout`), kept while the files they come
from are unchanged.

Every sandboxed command protects its checkout's `.git/hooks`, `.git/config` and `info` (and a
worktree's own config): reading where they are is a read of `.git` (a worktree's `gitdir:` file),
of `commondir`, and two `realpath`s, a dozen system calls and a visible share of a server's CPU
per step. Kept here per workspace, and used again while the same files are there: `.git` (a
directory, or a file with the same identity, size and times), the git dir and the common dir
(the same directories: device and inode, so a link along either path that now leads elsewhere
is seen), and `commondir` (present with the same identity and times, or still absent). A file
changed within the filesystem's timestamp granularity could change again with the same times,
so what was read from it is not kept until it has settled (the rule of
`xum.store.config.read_config`).
"""

from __future__ import annotations

import os
import stat
import threading
import time

from xum.runtime.sandbox import GitLayout, git_dirs

_RACY_NS = 100_000_000
_MAX_KEPT = 1024

Identity = tuple[object, ...]
# workspace -> (the git dir and common dir as named, their identity then, the layout)
_kept: dict[str, tuple[tuple[str, str] | None, Identity, GitLayout | None]] = {}
_lock = threading.Lock()


def _file_id(path: str) -> tuple[int, int, int, int, int, bool] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    if stat.S_ISDIR(st.st_mode):  # a directory's own times change with every entry: not used
        return (st.st_dev, st.st_ino, 0, 0, 0, True)
    return (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns, False)


def _dir_id(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_dev, st.st_ino)


def _identity(workspace: str, dirs: tuple[str, str] | None) -> Identity:
    dot_git = _file_id(os.path.join(workspace, ".git"))
    if dirs is None:
        return (dot_git,)
    git_dir, common = dirs
    return (
        dot_git,
        _dir_id(git_dir),
        _file_id(os.path.join(git_dir, "commondir")),
        _dir_id(common),
    )


def _settled(identity: Identity) -> bool:
    """Every file among them last changed longer ago than the racy window."""
    newest = 0
    for part in identity:
        if isinstance(part, tuple) and len(part) == 6 and not part[5]:
            newest = max(newest, part[3], part[4])
    return time.time_ns() - newest > _RACY_NS


def git_layout(workspace: str) -> GitLayout | None:
    """`read_git_layout(workspace)`, read again only when its files changed."""
    hit = _kept.get(workspace)
    if hit is not None and _identity(workspace, hit[0]) == hit[1]:
        return hit[2]
    dirs = git_dirs(workspace)
    identity = _identity(workspace, dirs)
    layout = (
        None if dirs is None else GitLayout(os.path.realpath(dirs[0]), os.path.realpath(dirs[1]))
    )
    if _settled(identity):
        with _lock:
            if len(_kept) >= _MAX_KEPT:
                _kept.clear()
            _kept[workspace] = (dirs, identity, layout)
    return layout
