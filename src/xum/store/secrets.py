"""Project secrets: `$XUM_ROOT/secrets.json`, outside every repository.

The file maps a project path (the same key as in config.json `projects`) to its variables:

    {
      "/home/me/src/app": {"GH_TOKEN": "ghp_...", "DATABASE_URL": "postgres://..."}
    }

Values are plain text: the file is only as safe as its permissions, so xum writes it 0600 and
refuses to read one that other users could read (the hint says how to fix it). Names must be
valid environment variable names. Writes are locked read-modify-write with an atomic replace,
like config.json.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path
from typing import Any

import orjson

from xum.core.errors import ConfigError
from xum.core.fsutil import atomic_write_bytes
from xum.core.jsonfile import read_json_object
from xum.core.lock import locked
from xum.core.paths import ensure_root, secrets_path

NAME_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _check_mode(path: Path) -> None:
    mode = stat.S_IMODE(path.stat().st_mode)
    if mode & 0o077:
        raise ConfigError(
            f"is readable or writable by other users (mode {mode:o})",
            path=str(path),
            hint=f"it holds secrets in plain text: run `chmod 600 {path}`",
        )


def _load(path: Path) -> dict[str, Any]:
    return read_json_object(
        path, top_level="the top level must be an object keyed by project path", check=_check_mode
    )


def load_project_secrets(project_path: str, path: Path | None = None) -> dict[str, str]:
    """The secrets of one project (empty when it has none). Entries with an invalid name or a
    value that is not a string are refused by name, never silently dropped."""
    path = path or secrets_path()
    entry = _load(path).get(project_path)
    if entry is None:
        return {}
    if not isinstance(entry, dict):
        raise ConfigError(f'"{project_path}" must map names to values', path=str(path))
    out: dict[str, str] = {}
    for name, value in entry.items():
        if not NAME_RE.fullmatch(name) or not isinstance(value, str):
            raise ConfigError(
                f'"{project_path}": secret {name!r} needs a variable name ([A-Za-z_][A-Za-z0-9_]*) '
                "and a string value",
                path=str(path),
            )
        out[name] = value
    return out


def set_project_secret(
    project_path: str, name: str, value: str | None, path: Path | None = None
) -> None:
    """Set (or, with value None, remove) one secret of a project."""
    if not NAME_RE.fullmatch(name):
        raise ValueError(f"not a valid environment variable name: {name!r}")
    path = path or secrets_path()
    ensure_root()
    with locked(path.with_name(path.name + ".lock"), purpose="secrets write"):
        data = _load(path)
        entry = data.get(project_path)
        if not isinstance(entry, dict):
            entry = {}
        if value is None:
            entry.pop(name, None)
        else:
            entry[name] = value
        if entry:
            data[project_path] = entry
        else:
            data.pop(project_path, None)
        atomic_write_bytes(path, orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
        os.chmod(path, 0o600)
