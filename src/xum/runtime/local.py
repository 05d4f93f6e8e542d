"""The local runtime: commands and files on this machine, in one workspace directory."""

from __future__ import annotations

import asyncio
import contextlib
import errno
import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path

from xum.core.fsutil import current_umask
from xum.core.ownsecrets import without_own_secrets
from xum.runtime.base import (
    SPILL_CAP_BYTES,
    ExecResult,
    FileStat,
    NotRegularFileError,
    OutputSink,
    RuntimeKind,
)

# Laid over xum's own environment (less xum's own secrets, see `xum.core.ownsecrets`) for every
# command: nothing may wait for a terminal that is not there (pagers, credential prompts).
NON_INTERACTIVE_ENV: dict[str, str] = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
}

_READ_CHUNK = 1024 * 1024


class LocalRuntime:
    kind: RuntimeKind = "local"
    spill_cap: int = SPILL_CAP_BYTES
    sees_local_files: bool = True
    transport_failure_exit: int | None = None

    def __init__(self, workspace_path: str, temp_dir: str | None = None) -> None:
        """`temp_dir`: default the system's (`tempfile.gettempdir()`), looked up on first use:
        tools need it, opening a workspace does not."""
        self.workspace_path = os.path.abspath(workspace_path)
        self._temp_dir = None if temp_dir is None else os.path.abspath(temp_dir)

    @property
    def temp_dir(self) -> str:
        if self._temp_dir is None:
            import tempfile

            self._temp_dir = os.path.abspath(tempfile.gettempdir())
        return self._temp_dir

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.workspace_path!r})"

    # -- paths -------------------------------------------------------------------------------

    def resolve(self, path: str) -> str:
        return os.path.normpath(os.path.join(self.workspace_path, os.path.expanduser(path)))

    async def realpath(self, path: str) -> str:
        # Not normalized first: `link/..` must climb from the link's target, as the kernel does.
        # A few lstat calls on a local disk: cheaper inline than a thread hop.
        return os.path.realpath(os.path.join(self.workspace_path, os.path.expanduser(path)))

    # -- processes ---------------------------------------------------------------------------

    def base_env(self) -> dict[str, str]:
        """xum's environment without its provider keys and server token: a command or hook
        never inherits them (a project secret of the same name is passed in `env`)."""
        env = without_own_secrets(os.environ)
        env.update(NON_INTERACTIVE_ENV)
        return env

    async def exec(
        self,
        script: str,
        *,
        env: Mapping[str, str],
        cwd: str | None = None,
        timeout_s: float | None = None,
        on_output: OutputSink | None = None,
        argv_prefix: Sequence[str] = (),
    ) -> ExecResult:
        """`argv_prefix`: a command that runs bash (`bwrap ... --`, the sandbox)."""
        full_env = self.base_env()
        full_env.update(env)
        from xum.runtime.process import run_script  # with the first command, not at start-up

        return await run_script(
            script,
            env=full_env,
            cwd=self.resolve(cwd) if cwd else self.workspace_path,
            timeout_s=timeout_s,
            on_output=on_output,
            argv_prefix=argv_prefix,
        )

    # -- files -------------------------------------------------------------------------------

    async def read_bytes(self, path: str, *, limit: int | None = None) -> bytes:
        return await asyncio.to_thread(_read_regular_file, self.resolve(path), limit)

    async def write_bytes_atomic(self, path: str, data: bytes) -> None:
        await asyncio.to_thread(_write_atomic, self.resolve(path), data)

    async def stat(self, path: str) -> FileStat:
        resolved = self.resolve(path)
        try:
            st = os.lstat(resolved)
        except (FileNotFoundError, NotADirectoryError):
            return FileStat(path=resolved, exists=False)
        return FileStat(
            path=resolved,
            exists=True,
            is_file=stat.S_ISREG(st.st_mode),
            is_dir=stat.S_ISDIR(st.st_mode),
            is_symlink=stat.S_ISLNK(st.st_mode),
            size=st.st_size,
            mode=st.st_mode,
            mtime_ns=st.st_mtime_ns,
        )

    async def publish_file(self, local: Path) -> str:
        """The tools read this machine's files: `local` as it is."""
        return str(local)

    async def close(self) -> None:
        return None


def _read_regular_file(path: str, limit: int | None) -> bytes:
    # O_NONBLOCK: opening a FIFO for reading would otherwise wait for a writer forever. The
    # type is checked on the open descriptor, so a file swapped for a FIFO is refused too.
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", path)
        if not stat.S_ISREG(mode):
            raise NotRegularFileError(errno.EINVAL, "not a regular file", path)
        os.set_blocking(fd, True)
        parts: list[bytes] = []
        remaining = limit
        while remaining is None or remaining > 0:
            want = _READ_CHUNK if remaining is None else min(_READ_CHUNK, remaining)
            chunk = os.read(fd, want)
            if not chunk:
                break
            parts.append(chunk)
            if remaining is not None:
                remaining -= len(chunk)
        return b"".join(parts)
    finally:
        os.close(fd)


def _write_atomic(path: str, data: bytes) -> None:
    """Temp file beside the target (random name, O_EXCL), fsync, rename, fsync the directory.

    The random name keeps two concurrent writers in one process (two agents, one server) from
    sharing a temp file. The old file's permission bits are kept; a new file gets the umask
    default.
    """
    directory = os.path.dirname(path)
    os.makedirs(directory, exist_ok=True)
    try:
        mode = stat.S_IMODE(os.stat(path).st_mode)
    except FileNotFoundError:
        mode = 0o666 & ~current_umask()
    tmp = os.path.join(directory, f".{os.path.basename(path)}.{os.urandom(4).hex()}.xum-tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o600)
    try:
        os.fchmod(fd, mode)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
        os.fsync(fd)
    except BaseException:
        os.close(fd)
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    os.close(fd)
    try:
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(tmp)
        raise
    dir_fd = os.open(directory, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
