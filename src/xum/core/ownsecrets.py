"""xum's own secrets: the credentials xum itself holds, which no agent command or hook may see.

xum reads provider keys from its environment (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`, ...) and
from `providers.jsonc`, and the server holds an auth token. A command the agent runs inherits
xum's environment, so without a filter `echo $ANTHROPIC_API_KEY` would put the key in the tool
result, the session log, every browser watching and the next request to the model.

The rule, by name: a variable whose name ends in `_API_KEY` or `_AUTH_TOKEN` (which covers every
built-in provider's key variable and `XUM_SERVER_AUTH_TOKEN`) is xum's, and is left out of the
environment commands and hooks inherit. A name rule rather than a list, because xum cannot know
every provider a user points it at, and a key that slips through is worse than a variable a
command has to be given on purpose: a project secret of the same name (docs/secrets-and-trust.md)
is still passed, since the user set it for that project.

Values xum holds that are not in its environment (the server's generated token) are registered
here with `remember`, so the secret masker hides them in output too (`known_values`). A process
that never held the server's token (`xum run` beside a running `xum server` on the same root)
still masks it: `server_tokens_on_disk` reads the tokens a server left in `$XUM_ROOT`.
"""

from __future__ import annotations

import contextlib
import os
import time
from collections.abc import Mapping

from xum.core.paths import server_lock_path, server_token_path

OWN_SECRET_SUFFIXES = ("_API_KEY", "_AUTH_TOKEN")
# The names the masker shows for the tokens found on disk (`[secret:NAME]`).
STORED_TOKEN_SECRET = "xum-server-stored-token"
LOCK_TOKEN_SECRET = "xum-server-lock-token"
_MAX_TOKEN_FILE = 64 * 1024  # both files are tiny; a huge one is not xum's

_remembered: dict[str, str] = {}


def is_own_secret_name(name: str) -> bool:
    """True for an environment variable that holds one of xum's own credentials."""
    return name.upper().endswith(OWN_SECRET_SUFFIXES)


def without_own_secrets(env: Mapping[str, str]) -> dict[str, str]:
    """`env` less every variable `is_own_secret_name` claims (a new dict, the caller's)."""
    if env is os.environ:
        return dict(_filtered_environ()[0])
    return _without(env)


def _without(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if not is_own_secret_name(k)}


def _own(env: Mapping[str, str]) -> dict[str, str]:
    # Stripped, as the provider clients use them: a key exported with a trailing newline is
    # printed without it.
    return {k: v.strip() for k, v in env.items() if v.strip() and is_own_secret_name(k)}


# The process environment as last filtered: `os.environ`'s own mapping of bytes then, and what
# `_without` and `_own` made of it. Every command and every tool call's masker filter the
# environment (a hundred variables, each decoded through `os.environ`'s mapping layer): a share
# of a server's CPU per step that showed in profiles. Comparing the raw mapping with the copy
# kept is one C-level dict comparison, and any change of the environment (`os.environ[...] =`,
# `del`, `update`) changes that mapping, so a change is seen on the next call.
_environ_memo: tuple[dict[bytes, bytes], dict[str, str], dict[str, str]] | None = None


def _filtered_environ() -> tuple[dict[str, str], dict[str, str]]:
    """(the environment less own secrets, the own secrets in it), not to be changed."""
    global _environ_memo
    raw = getattr(os.environ, "_data", None)  # CPython's store behind os.environ
    memo = _environ_memo
    if memo is not None and raw is not None and memo[0] == raw:
        return memo[1], memo[2]
    snapshot = dict(raw) if isinstance(raw, dict) else None
    without, own = _without(os.environ), _own(os.environ)
    if snapshot is not None:
        _environ_memo = (snapshot, without, own)
    return without, own


def remember(name: str, value: str | None) -> None:
    """Register a secret xum holds outside its environment (masked in output from now on).
    `name` is what the masker shows (`[secret:NAME]`); pick one no environment variable has
    (`xum-server-token`), so both are masked when they differ."""
    if value:
        _remembered[name] = value


def known_values(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """Name -> value of every own secret xum knows of: those in `environ` (default: the process
    environment) and those registered with `remember`. Empty values are left out."""
    found = dict(_filtered_environ()[1]) if environ is None else _own(environ)
    for name, value in _remembered.items():
        found.setdefault(name, value)
    return found


def forget(name: str) -> None:
    """Drop a value registered with `remember` (a server that stopped)."""
    _remembered.pop(name, None)


def server_tokens_on_disk() -> dict[str, str]:
    """Name -> value of the server tokens kept under `$XUM_ROOT`: the generated token
    (`server/auth-token`) and the token of a running server (`server.lock`, JSON with `token`).
    A file that is missing, unreadable or not in the expected shape contributes nothing: this
    only feeds the masker, which must not fail a tool call."""
    import orjson  # only here: core stays import-light

    found: dict[str, str] = {}
    stored = _read_small(server_token_path())
    if stored is not None:
        token = stored.decode("utf-8", errors="replace").strip()
        if token:
            found[STORED_TOKEN_SECRET] = token
    raw = _read_small(server_lock_path())
    if raw is not None:
        with contextlib.suppress(orjson.JSONDecodeError):
            data = orjson.loads(raw)
            held = data.get("token") if isinstance(data, dict) else None
            if isinstance(held, str) and held.strip():
                found[LOCK_TOKEN_SECRET] = held.strip()
    return found


# path -> (the file's identity when read, its bytes). The masker asks before every tool call;
# a stat tells whether the file is still the one read (the way `xum.store.config.read_config`
# does), which costs one system call instead of an open, a read and a close per file.
_seen: dict[str, tuple[tuple[int, int, int, int], bytes]] = {}
_SEEN_MAX = 64
# A file changed this recently could change again within the filesystem's timestamp
# granularity with the same size and times: it is read again until it has settled.
_RACY_NS = 100_000_000


def _read_small(path: os.PathLike[str] | str) -> bytes | None:
    key = os.fspath(path)
    try:
        st = os.stat(key)
    except OSError:
        _seen.pop(key, None)
        return None
    identity = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    hit = _seen.get(key)
    if hit is not None and hit[0] == identity:
        return hit[1]
    try:
        with open(key, "rb") as file:
            data = file.read(_MAX_TOKEN_FILE)
    except OSError:
        _seen.pop(key, None)
        return None
    if time.time_ns() - max(st.st_mtime_ns, st.st_ctime_ns) > _RACY_NS:
        if len(_seen) >= _SEEN_MAX:
            _seen.clear()
        _seen[key] = (identity, data)
    else:
        _seen.pop(key, None)
    return data
