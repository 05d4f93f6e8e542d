"""The generated server token, kept across restarts of the same `$XUM_ROOT`.

Without a token of the user's own (`--auth-token`, `XUM_SERVER_AUTH_TOKEN`), `xum server`
generates one. A token that died with the process would sign every browser out at each restart
(browser sessions are bound to the token, see `auth.BrowserSessions`), so the generated token is
kept in `$XUM_ROOT/server/auth-token`: a 0600 file in a 0700 directory, owned by the user. It is
read back on the next start and made again when it is missing, unreadable, not a plain file of
the user's, readable by anyone else, or not a token this module wrote. Deleting the file gives
the next start a new token, which ends every browser session. The token never goes to a log.
"""

from __future__ import annotations

import contextlib
import os
import re
import secrets
import stat
from pathlib import Path

from xum.core.fsutil import atomic_write_bytes
from xum.core.paths import ensure_private_dir, server_token_path

# What `secrets.token_urlsafe(32)` produces (43 characters); a little room either way.
_TOKEN_SHAPE = re.compile(r"[A-Za-z0-9_-]{32,128}")
_MAX_READ = 4096


def token_path() -> Path:
    return server_token_path()


def stored_token() -> str:
    """The kept generated token, made (and kept) first when there is no usable one."""
    path = token_path()
    ensure_private_dir(path.parent)
    found = _read(path)
    if found is not None:
        return found
    token = secrets.token_urlsafe(32)
    atomic_write_bytes(path, token.encode() + b"\n", mode=0o600)
    return token


def _read(path: Path) -> str | None:
    """The token in `path`, or None when the file cannot be trusted to hold one."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None  # missing, a symlink, unreadable: make a new one
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_uid != os.getuid():
            return None
        if stat.S_IMODE(info.st_mode) & 0o077:
            return None  # others could read it: it is no secret any more
        raw = os.read(fd, _MAX_READ)
    except OSError:
        return None
    finally:
        with contextlib.suppress(OSError):
            os.close(fd)
    try:
        text = raw.decode("ascii").strip()
    except UnicodeDecodeError:
        return None
    return text if _TOKEN_SHAPE.fullmatch(text) else None
