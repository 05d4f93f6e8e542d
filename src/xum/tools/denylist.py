"""The read denylist: files the model may not read, opt-in, from the user's own config.

    "readDenylist": {"sensitive": true, "paths": ["~/work/credentials", "/etc/app/secret.conf"]}

`sensitive` adds a built-in set: files named `.env` (and `.env.<anything>`), `*.pem`, `*.key`,
`*.p12`, `*.pfx`, `.netrc`, `.git-credentials` anywhere, and the directories `~/.ssh`, `~/.aws`
and `~/.gnupg`. `paths` are files or directory trees (absolute or `~/...`).

The file tools check it after resolving a path (symlinks followed), so a link to a denied file
is denied too. Shell commands meet it through the sandbox (`xum.workspaces.safety.sandboxing`), which
shows denied directories and files empty; name patterns (`*.pem`) cannot be mounted over and
hold only in the file tools, except a `.env` at the top of the checkout.

It lives in `$XUM_ROOT/config.json`, out of the model's reach (the sandbox hides that directory,
and the file tools never write there).
"""

from __future__ import annotations

import fnmatch
import posixpath
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any

from xum.core.pathtext import is_within

SENSITIVE_PATTERNS = (".env", ".env.*", "*.pem", "*.key", "*.p12", "*.pfx", ".netrc",
                      ".git-credentials")  # fmt: skip
SENSITIVE_DIRS = ("~/.ssh", "~/.aws", "~/.gnupg")


@dataclass(frozen=True, slots=True)
class ReadDenylist:
    """Files the tools may not read: the built-in sensitive set and the user's own paths."""

    sensitive: bool = False
    paths: tuple[str, ...] = ()  # as configured: absolute or ~/...

    @property
    def active(self) -> bool:
        return self.sensitive or bool(self.paths)

    def roots(self, expand: Callable[[str], str]) -> list[str]:
        """The denied files and directory trees, with `~` expanded by `expand` (the runtime's
        own: on SSH, the remote home)."""
        entries = [*self.paths, *(SENSITIVE_DIRS if self.sensitive else ())]
        return [posixpath.normpath(expand(entry)) for entry in entries]

    def rule_for(self, path: str, expand: Callable[[str], str]) -> str | None:
        """The rule that denies reading `path` (canonical), or None."""
        for root in self.roots(expand):
            if is_within(path, root):
                return root
        if self.sensitive:
            name = posixpath.basename(path)
            for pattern in SENSITIVE_PATTERNS:
                if fnmatch.fnmatchcase(name, pattern):
                    return pattern
        return None


def parse_denylist(raw: object) -> ReadDenylist:
    """config.json's `readDenylist`; ValueError saying what is wrong with it."""
    if raw is None:
        return ReadDenylist()
    if not isinstance(raw, Mapping):
        raise ValueError('"readDenylist" must be an object such as {"sensitive": true}')
    unknown = sorted(set(raw) - {"sensitive", "paths"})
    if unknown:
        raise ValueError(f'"readDenylist" has unknown keys: {", ".join(unknown)}')
    sensitive = raw.get("sensitive", False)
    if not isinstance(sensitive, bool):
        raise ValueError('"readDenylist.sensitive" must be true or false')
    paths = raw.get("paths", [])
    if not isinstance(paths, list) or not all(isinstance(p, str) and p for p in paths):
        raise ValueError('"readDenylist.paths" must be a list of paths')
    for path in paths:
        if not (path.startswith(("/", "~/")) or path == "~"):
            raise ValueError(f'"readDenylist.paths": {path!r} is not absolute (or ~/...)')
    return ReadDenylist(sensitive=sensitive, paths=tuple(paths))


def current_denylist(config: Mapping[str, Any] | None = None) -> ReadDenylist:
    """The denylist in `$XUM_ROOT/config.json` now (ValueError when malformed)."""
    if config is None:
        from xum.store.config import read_config

        config = read_config()
    return parse_denylist(config.get("readDenylist"))
