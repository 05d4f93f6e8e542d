"""`$XUM_ROOT/server.lock`: how other programs find a running server.

JSON with `url`, `token` (null with --no-auth), `pid`, `host`, `port`, `startedAt`; mode 0600
because it holds the token. Written once the socket is bound, removed on exit (only by the
process that wrote it). A lock naming a live process stops a second server on the same root.
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
from xum.core.paths import ensure_root, xum_root

LOCK_NAME = "server.lock"


def lock_path() -> Path:
    return xum_root() / LOCK_NAME


def read_lock(path: Path | None = None) -> dict[str, Any] | None:
    try:
        data = orjson.loads((path or lock_path()).read_bytes())
    except (OSError, orjson.JSONDecodeError):
        return None
    return data if isinstance(data, dict) else None


def _alive(pid: int) -> bool:
    if pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def check_no_other_server() -> None:
    existing = read_lock()
    if existing is None:
        return
    pid = existing.get("pid")
    if isinstance(pid, int) and pid != os.getpid() and _alive(pid):
        raise XumError(
            f"another xum server (pid {pid}) is running on this xum root at {existing.get('url')}",
            hint=f"stop it first, or give this one its own root with XUM_ROOT ({lock_path()})",
        )


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
