"""Whether a directory may hold an entry of a given name, from a listing kept while the directory
stays the same.

Some files are looked for on every tool call and are nearly always absent (the project's
`.xum/tool_env`, `tool_pre`, `tool_post`, the user's hooks in `$XUM_ROOT`): a server ran those
lookups for every step of every session. Adding, removing or renaming an entry changes its
directory's modification and change times, so while the directory's identity (device, inode,
both times) is the one a listing was made at, the listing still says which names exist: one
`stat` of the directory answers for all of them. A directory changed within the filesystem's
timestamp granularity could change again with the same times, so its listing is not kept until it
has settled (the rule `xum.store.config.read_config` follows).

Only absence is answered here: a name that is listed is looked at as before (its mode, its
type, where a link points can change without touching the directory).
"""

from __future__ import annotations

import errno
import os
import stat
import threading
import time

_RACY_NS = 100_000_000
_MAX_KEPT = 256

# directory -> (its identity when listed, the names in it then)
_kept: dict[str, tuple[tuple[int, int, int, int], frozenset[str]]] = {}
_lock = threading.Lock()


def may_exist(path: str) -> bool:
    """False when `path` certainly does not exist: its directory is missing, or has no entry of
    its name. True otherwise (it may exist; look at it)."""
    directory, name = os.path.split(path)
    try:
        st = os.stat(directory or ".")
    except OSError as exc:
        return exc.errno not in (errno.ENOENT, errno.ENOTDIR)
    if not stat.S_ISDIR(st.st_mode):
        return False
    identity = (st.st_dev, st.st_ino, st.st_mtime_ns, st.st_ctime_ns)
    hit = _kept.get(directory)
    if hit is not None and hit[0] == identity:
        return name in hit[1]
    try:
        names = frozenset(os.listdir(directory or "."))
    except OSError:
        return True  # unreadable: let the caller's own look decide
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > _RACY_NS:
        with _lock:
            if len(_kept) >= _MAX_KEPT:
                _kept.clear()
            _kept[directory] = (identity, names)
    return name in names
