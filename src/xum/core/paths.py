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


_root_memo: tuple[str | None, str | None, Path] | None = None


def xum_root() -> Path:
    """`$XUM_ROOT`, else `~/.xum`. A server asks for it dozens of times per agent step (every
    config, registry and secret path starts here), so the Path is kept for as long as the two
    variables it is made from keep their values; a change of either is seen on the next call."""
    global _root_memo
    env = os.environ.get("XUM_ROOT")
    home = os.environ.get("HOME")
    memo = _root_memo
    if memo is not None and memo[0] == env and memo[1] == home:
        return memo[2]
    root = Path(env).expanduser() if env else Path.home() / ".xum"
    _root_memo = (env, home, root)
    return root


_child_memo: dict[str, tuple[Path, Path]] = {}


def _under_root(name: str) -> Path:
    """`xum_root() / name`, made once per root (Paths are immutable, so sharing one is safe)."""
    root = xum_root()
    hit = _child_memo.get(name)
    if hit is not None and hit[0] is root:
        return hit[1]
    path = root / name
    _child_memo[name] = (root, path)
    return path


def config_path() -> Path:
    return _under_root("config.json")


def providers_path() -> Path:
    return _under_root("providers.jsonc")


def secrets_path() -> Path:
    return _under_root("secrets.json")


def server_lock_path() -> Path:
    """Where a running `xum server` says how to reach it (its URL and token; mode 0600)."""
    return _under_root("server.lock")


def server_token_path() -> Path:
    """Where `xum server` keeps the token it generated (`xum.server.token_store`; mode 0600)."""
    return _under_root("server/auth-token")


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
