"""`$XUM_ROOT/config.json`: global settings and the project/workspace registry.

Reads never write. Writes are read-modify-write under a cross-process lock and replace the file
atomically, so several xum processes can share one `$XUM_ROOT`. A file that cannot be parsed is
never overwritten: every write refuses until the user fixes it (`xum doctor` says where).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, TypeVar

import orjson

from xum.core.fsutil import atomic_write_bytes
from xum.core.jsonfile import parse_json_object, read_json_object
from xum.core.lock import locked
from xum.core.paths import config_path, ensure_root

T = TypeVar("T")


# How many times this process parsed config.json (tests and benchmarks hold it to one parse
# per change of the file).
_parses = 0


def load_config(path: Path | None = None) -> dict[str, Any]:
    """A fresh copy of the config, the caller's to change."""
    global _parses
    _parses += 1
    return read_json_object(path or config_path())


def parse_count() -> int:
    """config.json parses so far in this process."""
    return _parses


class _Snapshot:
    """What `read_config` parsed last: the file's identity then, its bytes and their content.
    `settled`: the file had not changed for `_RACY_NS` when it was read. (A plain class: this
    module loads on every start, and a dataclass costs more to make than it saves here.)"""

    __slots__ = ("data", "identity", "path", "raw", "settled")

    def __init__(
        self,
        path: Path,
        identity: tuple[int, int, int, int],
        raw: bytes,
        data: dict[str, Any],
        settled: bool,
    ) -> None:
        self.path = path
        self.identity = identity
        self.raw = raw
        self.data = data
        self.settled = settled


_RACY_NS = 100_000_000
_snapshot: _Snapshot | None = None


def read_config() -> Mapping[str, Any]:
    """The config as it is on disk now, parsed only when the file changed since the last call
    (a write replaces the file, so its inode moves; a hand edit moves its size or times). For
    the questions asked on every tool call (is this project trusted?), where parsing the whole
    registry each time was a visible share of a step. Do not change what it returns."""
    global _snapshot, _parses
    path = config_path()
    try:
        st = os.stat(path)
    except FileNotFoundError:
        return {}
    except OSError:
        return load_config(path)  # the read says what is wrong
    identity = (st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)
    cached = _snapshot if _snapshot is not None and _snapshot.path == path else None
    if cached is not None and cached.settled and cached.identity == identity:
        return cached.data
    # A file changed within the filesystem's timestamp granularity could change again with the
    # same size and times (and a reused inode): such a "racily clean" file is read again each
    # time, the way git treats its index, and parsed only when its bytes differ.
    try:
        raw = path.read_bytes()
    except FileNotFoundError:
        return {}
    except OSError:
        return load_config(path)
    if cached is not None and cached.raw == raw:
        data = cached.data
    else:
        _parses += 1
        data = parse_json_object(raw, path)
    settled = time.time_ns() - st.st_mtime_ns > _RACY_NS
    _snapshot = _Snapshot(path, identity, raw, data, settled)
    return data


def update_config(mutate: Callable[[dict[str, Any]], T], path: Path | None = None) -> T:
    """Apply `mutate` to the current config under the lock and publish the result atomically.

    `mutate` edits the dict in place and returns whatever the caller needs back (a new id, say).
    """
    path = path or config_path()
    ensure_root()
    with locked(path.with_name(path.name + ".lock"), purpose="config write"):
        data = load_config(path)
        result = mutate(data)
        atomic_write_bytes(path, orjson.dumps(data, option=orjson.OPT_INDENT_2) + b"\n")
    return result
