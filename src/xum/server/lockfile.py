"""`$XUM_ROOT/server.lock`: how other programs find a running server; and the claim that makes
it the only one on its root.

`server.lock` is JSON with `url`, `token` (null with --no-auth), `pid`, `host`, `port`,
`startedAt`; mode 0600 because it holds the token. Written once the socket is bound, removed on
exit (only by the process that wrote it).

Which server owns the root is decided by `claim_root`: an exclusive `flock` on
`$XUM_ROOT/server.instance.lock`, taken before anything else and held for the server's life.
Taking it is one atomic step, so of two servers started at the same moment exactly one gets it
(checking `server.lock` and writing it later, as before, let both pass the check). The kernel
drops it when the process dies, so a server killed with SIGKILL never blocks the next one; its
stale `server.lock` is simply written over.
"""

from __future__ import annotations

import contextlib
import os
from pathlib import Path
from typing import Any

import orjson

from xum.core.clock import now_ms
from xum.core.errors import XumError
from xum.core.fsutil import atomic_write_bytes
from xum.core.lock import FileLock, LockTimeout
from xum.core.paths import ensure_root, server_lock_path, xum_root

INSTANCE_LOCK_NAME = "server.instance.lock"


def lock_path() -> Path:
    return server_lock_path()


def read_lock(path: Path | None = None) -> dict[str, Any] | None:
    try:
        data = orjson.loads((path or lock_path()).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def claim_root() -> FileLock:
    """Make this process the root's one server, or raise `XumError` naming the one that is.
    The caller holds the returned lock until it exits (`release()`; the kernel drops it on a
    crash)."""
    ensure_root()
    claim = FileLock(xum_root() / INSTANCE_LOCK_NAME, purpose="xum server")
    try:
        claim.acquire(timeout=0)
    except LockTimeout as exc:
        pid = (exc.holder or {}).get("pid")
        existing = read_lock() or {}
        where = f" at {existing['url']}" if existing.get("pid") == pid and "url" in existing else ""
        who = f" (pid {pid})" if pid else ""
        raise XumError(
            f"another xum server{who} is running on this xum root{where}",
            hint=f"stop it first, or give this one its own root with XUM_ROOT ({lock_path()})",
        ) from None
    return claim


def write_lock(url: str, token: str | None, host: str, port: int) -> Path:
    ensure_root()
    path = lock_path()
    payload = {
        "url": url,
        "token": token,
        "pid": os.getpid(),
        "host": host,
        "port": port,
        "startedAt": now_ms(),
    }
    atomic_write_bytes(path, orjson.dumps(payload, option=orjson.OPT_INDENT_2) + b"\n", mode=0o600)
    return path


def remove_lock() -> None:
    existing = read_lock()
    if existing is not None and existing.get("pid") == os.getpid():
        with contextlib.suppress(FileNotFoundError):
            lock_path().unlink()
