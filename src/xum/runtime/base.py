"""The Runtime protocol: every tool reaches files and processes only through it.

A runtime owns one workspace directory. Paths given to it may be absolute or relative to the
workspace; `resolve` makes them absolute in the runtime's own namespace (a remote path for SSH).
Commands run in their own process group so a timeout or an interrupt kills the whole tree.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

RuntimeKind = Literal["local", "worktree", "ssh", "docker", "devcontainer"]

# A tool's spill file (xum.tools.bounds) keeps the first 512 MiB of a stream on a runtime whose
# tools read xum's own files; one that has to be copied elsewhere keeps less (see `spill_cap`).
SPILL_CAP_BYTES = 512 * 1024 * 1024

OutputSink = Callable[[bytes], None]


class NotRegularFileError(OSError):
    """`read_bytes` met a FIFO, socket or device: it is refused without blocking on it."""


@dataclass(slots=True)
class ExecResult:
    """How a command ended (its output went to the caller's sink)."""

    exit_code: int | None  # None when the process was killed by a signal
    signal: int | None = None  # the signal that ended it, if any
    timed_out: bool = False
    interrupted: bool = False  # killed because the caller was cancelled
    duration_s: float = 0.0


@dataclass(slots=True)
class FileStat:
    """What `Runtime.stat` found at a path."""

    path: str  # the path as resolved (symlinks not followed)
    exists: bool
    is_file: bool = False
    is_dir: bool = False
    is_symlink: bool = False
    size: int = 0
    mode: int = 0  # the full st_mode (file type bits included: stat.S_ISFIFO(mode) works)
    mtime_ns: int = 0


class Runtime(Protocol):
    kind: RuntimeKind
    workspace_path: str  # absolute, in the runtime's namespace
    # The most bytes a tool's spill file keeps (xum.tools.bounds).
    spill_cap: int
    # Whether the runtime's tools read files on xum's machine where xum wrote them (local,
    # worktree); otherwise a file xum wrote for them reaches them through `publish_file`.
    sees_local_files: bool
    # An exit status that `exec` reports when the runtime's own transport failed rather than
    # the command (ssh exits with 255 when it cannot reach the host); None when there is none.
    transport_failure_exit: int | None

    @property
    def temp_dir(self) -> str:
        """A directory tools may write scratch files into."""
        ...

    def resolve(self, path: str) -> str:
        """An absolute, normalized path (`..` folded, symlinks NOT resolved)."""
        ...

    async def realpath(self, path: str) -> str:
        """`path` (relative to the workspace, or absolute) with every symlink resolved, the way
        the kernel would walk it (`..` after a symlink climbs from the link's target); the target
        need not exist."""
        ...

    async def exec(
        self,
        script: str,
        *,
        env: Mapping[str, str],
        cwd: str | None = None,
        timeout_s: float | None = None,
        on_output: OutputSink | None = None,
    ) -> ExecResult:
        """Run `script` with bash in its own process group; stdout and stderr are merged and fed
        to `on_output` as they arrive. Cancellation kills the whole group and re-raises.

        `env` is laid over the runtime's own base environment (for the local runtime, xum's own
        environment less xum's own secrets; for SSH, the remote login environment), so callers
        pass only what they add or override. `cwd` defaults to the
        workspace."""
        ...

    async def read_bytes(self, path: str, *, limit: int | None = None) -> bytes:
        """At most `limit` bytes from the start of the file. Raises FileNotFoundError,
        IsADirectoryError, PermissionError, or NotRegularFileError for FIFOs, sockets and
        devices (never blocks opening one)."""
        ...

    async def write_bytes_atomic(self, path: str, data: bytes) -> None:
        """Replace the file atomically (temp + fsync + rename), keeping its permissions if it
        exists; missing parent directories are created. The path is written as given: callers
        resolve symlinks first (a symlink at `path` itself would be replaced, not followed)."""
        ...

    async def stat(self, path: str) -> FileStat: ...

    async def publish_file(self, local: Path) -> str:
        """Where the runtime's tools read `local`, a file xum wrote on its own machine for them
        (a spill file): `local` itself when they read xum's files; otherwise a copy in the
        runtime's scratch space, and the local file is removed. Raises OSError when the copy
        fails (the local file is then kept)."""
        ...

    async def close(self) -> None: ...
