"""Where xum keeps its global state.

`$XUM_ROOT` (default `~/.xum`) holds `config.json`, `providers.jsonc`, `secrets.json`,
`sessions/`, `src/`, `plans/` and `logs/`. Directories are created 0700 and files 0600: the root
holds API keys and whole conversations.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path

DIR_MODE = 0o700
FILE_MODE = 0o600


def xum_root() -> Path:
    env = os.environ.get("XUM_ROOT")
    if env:
        return Path(env).expanduser()
    return Path.home() / ".xum"


def config_path() -> Path:
    return xum_root() / "config.json"


def providers_path() -> Path:
    return xum_root() / "providers.jsonc"


def secrets_path() -> Path:
    return xum_root() / "secrets.json"


def server_lock_path() -> Path:
    """Where a running `xum server` says how to reach it (its URL and token; mode 0600)."""
    return xum_root() / "server.lock"


def server_token_path() -> Path:
    """Where `xum server` keeps the token it generated (`xum.server.token_store`; mode 0600)."""
    return xum_root() / "server" / "auth-token"


def sessions_dir() -> Path:
    return xum_root() / "sessions"


def session_dir(workspace_id: str) -> Path:
    return sessions_dir() / workspace_id


def src_dir() -> Path:
    return xum_root() / "src"


def plans_dir() -> Path:
    return xum_root() / "plans"


def logs_dir() -> Path:
    return xum_root() / "logs"


def ensure_private_dir(path: Path) -> Path:
    """Create `path` with mode 0700, and each missing parent 0700 too (`mkdir(parents=True)`
    would give the parents the umask's mode); tighten `path` if it already exists."""
    missing: list[Path] = []
    parent = path
    while not parent.exists() and parent != parent.parent:
        missing.append(parent)
        parent = parent.parent
    for directory in reversed(missing):
        try:
            directory.mkdir(mode=DIR_MODE)
        except FileExistsError:  # another process made it meanwhile
            continue
        os.chmod(directory, DIR_MODE)  # mkdir's mode is filtered by the umask
    mode = path.stat().st_mode
    if not stat.S_ISDIR(mode):
        raise FileExistsError(errno.EEXIST, "exists and is not a directory", str(path))
    if stat.S_IMODE(mode) != DIR_MODE:
        os.chmod(path, DIR_MODE)
    return path


def ensure_root() -> Path:
    return ensure_private_dir(xum_root())
