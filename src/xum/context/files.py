"""How the context layer reads files, and how it notices that they changed.

Two views share one small async interface:

* `RuntimeFiles`: files of the project, read through the workspace's `Runtime` (so an SSH
  workspace reads its instruction files, agents and skills on the remote host);
* `LocalFiles`: the user's own files under `$XUM_ROOT` and `HOME`, and xum's package data.

Discovery runs before every model request, so it must be cheap: callers compare `Sig` values
(existence, kind, size and mtime from one `stat`) and re-read a file only when its signature
moved. Directory listings are keyed on the directory's own signature (adding or removing an
entry changes a directory's mtime).

File timestamps are coarse (a kernel tick, or worse on some filesystems), so two edits in a row
can leave the same mtime. Like git's "racily clean" entries, a signature whose mtime is too
recent is never trusted: such a file is read again until its mtime is old enough. How recent
depends on what the mtime shows of its filesystem: one with a fraction of a second proves
sub-second timestamps (a kernel tick, milliseconds), so `FINE_RACY_NS` covers it; a whole
second may come from a filesystem (or a remote `stat`) that keeps only seconds, so `RACY_NS`.

Symlinks are followed, but for project files only when the target stays inside the checkout:
a repository must not be able to pull `~/.ssh/id_rsa` into a prompt with `AGENTS.md -> ...`.
"""

from __future__ import annotations

import os
import stat as stat_module
import time
from dataclasses import dataclass
from typing import Protocol

from xum.core.pathtext import is_within
from xum.runtime.base import FileStat, Runtime


@dataclass(frozen=True, slots=True)
class Sig:
    """A file's identity for caching: equal signatures mean "unchanged, as far as we can tell"."""

    exists: bool
    is_dir: bool = False
    size: int = 0
    mtime_ns: int = 0


MISSING = Sig(False)
RACY_NS = 2_000_000_000
# For mtimes with a fraction of a second; the same window as config.json's and the git layout's
# caches. (With 2 s here, a `xum run` re-ran the whole discovery before each request for its
# first two seconds: registering the workspace rewrites config.json, which moves `$XUM_ROOT`'s
# mtime, the directory that stands for the absent `$XUM_ROOT/agents`, `skills`, ...)
FINE_RACY_NS = 100_000_000
_SECOND_NS = 1_000_000_000


def racy_window(mtime_ns: int) -> int:
    """How long after `mtime_ns` a signature stays too recent to trust."""
    return FINE_RACY_NS if mtime_ns % _SECOND_NS else RACY_NS


def racy(sig: Sig) -> bool:
    """Too recent to trust: another change within the same timestamp tick would not show."""
    return sig.exists and sig.mtime_ns >= time.time_ns() - racy_window(sig.mtime_ns)


def trusted(cached: Sig | None, current: Sig) -> bool:
    """Whether something cached under signature `cached` is still good for `current`."""
    return cached == current and not racy(current)


def sig_of(st: FileStat) -> Sig:
    if not st.exists:
        return MISSING
    return Sig(True, st.is_dir, st.size, st.mtime_ns)


class FileView(Protocol):
    async def stat(self, path: str) -> FileStat:
        """lstat semantics: a symlink is reported as a symlink."""
        ...

    async def realpath(self, path: str) -> str: ...

    async def read_bytes(self, path: str, *, limit: int | None = None) -> bytes: ...

    async def list_dir(self, path: str) -> list[str] | None:
        """Entry names, sorted; [] when missing; None when this view cannot list."""
        ...


class LocalFiles:
    """Plain local filesystem access (the user's global files, package data)."""

    async def stat(self, path: str) -> FileStat:
        try:
            st = os.lstat(path)
        except (FileNotFoundError, NotADirectoryError):
            return FileStat(path=path, exists=False)
        return FileStat(
            path=path,
            exists=True,
            is_file=stat_module.S_ISREG(st.st_mode),
            is_dir=stat_module.S_ISDIR(st.st_mode),
            is_symlink=stat_module.S_ISLNK(st.st_mode),
            size=st.st_size,
            mode=st.st_mode,
            mtime_ns=st.st_mtime_ns,
        )

    async def realpath(self, path: str) -> str:
        return os.path.realpath(path)

    async def read_bytes(self, path: str, *, limit: int | None = None) -> bytes:
        # Small files, read only when their signature changed: a thread hop would cost more.
        with open(path, "rb") as handle:
            return handle.read(-1 if limit is None else limit)

    async def list_dir(self, path: str) -> list[str] | None:
        try:
            return sorted(os.listdir(path))
        except (FileNotFoundError, NotADirectoryError):
            return []


def _lstat_sig(path: str) -> Sig:
    try:
        st = os.lstat(path)
    except (FileNotFoundError, NotADirectoryError):
        return MISSING
    return Sig(True, stat_module.S_ISDIR(st.st_mode), st.st_size, st.st_mtime_ns)


class RuntimeFiles:
    """Project files through the workspace runtime.

    The Runtime protocol has no directory listing; a runtime that offers `list_dir(path)` (the
    SSH runtime) is used as is, one whose files are on this machine (`Runtime.sees_local_files`:
    local and worktree runtimes) is listed here, and any other runtime reports that it cannot
    list (its project agents and skills are then not found, while instruction files, which need
    no listing, still work).
    """

    def __init__(self, runtime: Runtime) -> None:
        self.runtime = runtime
        self._local = runtime.sees_local_files
        self._direct = LocalFiles()

    async def stat(self, path: str) -> FileStat:
        if self._local and path.startswith("/"):
            return await self._direct.stat(path)  # the same file, without a path round trip
        return await self.runtime.stat(path)

    async def realpath(self, path: str) -> str:
        return await self.runtime.realpath(path)

    async def read_bytes(self, path: str, *, limit: int | None = None) -> bytes:
        return await self.runtime.read_bytes(path, limit=limit)

    async def list_dir(self, path: str) -> list[str] | None:
        lister = getattr(self.runtime, "list_dir", None)
        if lister is not None:
            names = await lister(path)
            return sorted(names) if names is not None else None
        if self._local:
            try:
                return sorted(os.listdir(self.runtime.resolve(path)))
            except (FileNotFoundError, NotADirectoryError):
                return []
        return None


@dataclass(frozen=True, slots=True)
class Found:
    """A regular file that may be read: where it really is, and its signature."""

    path: str  # the path to read (the symlink target when it was a link)
    sig: Sig


async def find_file(view: FileView, path: str, fence: str | None) -> Found | str | None:
    """The file at `path` when it is a regular file (following a symlink that stays inside
    `fence`, when one is given); None when there is none; a reason string when it is refused."""
    st = await view.stat(path)
    if not st.exists:
        return None
    if st.is_symlink:
        target = await view.realpath(path)
        if fence is not None and not is_within(target, await view.realpath(fence)):
            return f"{path} is a symlink to {target}, outside the project; not read"
        st = await view.stat(target)
        if not st.exists:
            return None
        path = target
    if st.is_dir:
        return None
    if not st.is_file:
        return f"{path} is not a regular file; not read"
    return Found(path, sig_of(st))


async def dir_sig(view: FileView, path: str) -> Sig:
    """The signature of a directory (MISSING when absent or not a directory)."""
    st = await view.stat(path)
    if st.is_symlink:
        st = await view.stat(await view.realpath(path))
    return sig_of(st) if st.exists and st.is_dir else MISSING


def decode(data: bytes) -> str:
    text = data.decode("utf-8", errors="replace")
    return text[1:] if text.startswith("\ufeff") else text


class RecordingView:
    """A view that notes the signature of every path it stats while `recording` holds a list.

    A full discovery runs through such views; the paths it looked at, with what it saw, are a
    `QuickCheck` for the next request: if none of them moved, nothing discovery depends on did
    (a new file shows in its directory's mtime, an edit in the file's own)."""

    def __init__(self, view: FileView) -> None:
        self.view = view
        self.recording: list[tuple[RecordingView, str, Sig]] | None = None
        self.local = isinstance(view, LocalFiles) or (
            isinstance(view, RuntimeFiles) and view.runtime.sees_local_files
        )

    async def stat(self, path: str) -> FileStat:
        st = await self.view.stat(path)
        if self.recording is not None:
            self.recording.append((self, path, sig_of(st)))
        return st

    async def realpath(self, path: str) -> str:
        return await self.view.realpath(path)

    async def read_bytes(self, path: str, *, limit: int | None = None) -> bytes:
        return await self.view.read_bytes(path, limit=limit)

    async def list_dir(self, path: str) -> list[str] | None:
        return await self.view.list_dir(path)


class QuickCheck:
    """Re-stat a recorded set of paths; `unchanged()` when every signature is as recorded.

    A path that did not exist is watched through its nearest existing parent directory instead
    (creating an entry changes the directory's mtime), which folds the many "is there an
    AGENTS.local.md here?" probes into a few directory checks. A false alarm only costs one
    full discovery."""

    def __init__(self, seen: list[tuple[RecordingView, str, Sig]]) -> None:
        unique: dict[tuple[int, str], tuple[RecordingView, str, Sig]] = {}
        for entry in seen:
            unique.setdefault((id(entry[0]), entry[1]), entry)
        local: dict[str, tuple[int, int] | None] = {}
        self.remote: list[tuple[RecordingView, str, Sig]] = []
        self.valid = True
        now = time.time_ns()
        for view, path, sig in unique.values():
            if sig.exists and sig.mtime_ns >= now - racy_window(sig.mtime_ns):
                self.valid = False  # too recent to vouch for; the next request looks again
            if not (view.local and path.startswith("/")):
                self.remote.append((view, path, sig))
            elif sig.exists:
                local[path] = (sig.mtime_ns, sig.size)
            else:
                parent, state = _existing_parent(path)
                if (state is not None and state[0] >= now - racy_window(state[0])) or (
                    os.path.lexists(path)
                ):
                    self.valid = False  # created since discovery looked, or racy parent
                local.setdefault(parent, state)
        self.local = list(local.items())

    async def unchanged(self) -> bool:
        if not self.valid:
            return False
        lstat = os.lstat
        for path, expected in self.local:  # plain lstat: the hot path for local workspaces
            try:
                st = lstat(path)
            except (FileNotFoundError, NotADirectoryError):
                if expected is not None:
                    return False
                continue
            if expected is None or (st.st_mtime_ns, st.st_size) != expected:
                return False
        for view, path, sig in self.remote:
            if sig_of(await view.view.stat(path)) != sig:
                return False
        return True


def _existing_parent(path: str) -> tuple[str, tuple[int, int] | None]:
    """The nearest directory above `path` that exists, with its (mtime, size) now."""
    current = os.path.dirname(path)
    while True:
        try:
            st = os.lstat(current)
        except (FileNotFoundError, NotADirectoryError):
            if current in ("/", ""):
                return current, None
            current = os.path.dirname(current)
            continue
        return current, (st.st_mtime_ns, st.st_size)
