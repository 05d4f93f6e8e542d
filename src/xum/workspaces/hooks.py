"""Finding and running hook scripts, always through the workspace's runtime.

Hooks are looked up by name:

* project hooks: `.xum/<name>` in the workspace checkout (the project directory for a local
  workspace, the worktree for a worktree workspace, the remote checkout for SSH: see
  `Checkout.hook_roots`). They are repo-controlled, so they run only in trusted projects (see
  `safety/trust.py`). A worktree workspace whose checkout lacks the file (an uncommitted hook, say)
  falls back to the project root's copy.
* user hooks (`tool_pre`, `tool_post`, `tool_env` only): `$XUM_ROOT/<name>`, the user's own,
  used when the project has none (or is not trusted). On an SSH workspace the script is copied
  to a private directory on the remote and runs there, like every other hook.

A hook must be executable, except `tool_env`, which is sourced. It runs with bash semantics in
the workspace directory, in its own process group, and is killed with its children at its
timeout.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shlex
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import orjson

from xum.core.clock import now_ms
from xum.core.paths import ensure_private_dir, logs_dir, xum_root
from xum.runtime.base import Runtime

HookName = Literal["init", "archive", "delete", "tool_pre", "tool_post", "tool_env"]
PROJECT_DIR = ".xum"
USER_HOOKS: frozenset[str] = frozenset({"tool_pre", "tool_post", "tool_env"})
MAX_HOOK_OUTPUT = 32 * 1024  # bytes of hook output kept (head and tail)


@dataclass(frozen=True, slots=True)
class HookScript:
    """A hook found by name."""

    name: str
    path: str  # in the runtime's namespace: what to run or source
    origin: Literal["project", "user"]

    @property
    def display(self) -> str:
        return f"{PROJECT_DIR}/{self.name}" if self.origin == "project" else f"~/.xum/{self.name}"


@dataclass(slots=True)
class HookResult:
    """How a hook run ended, with its (bounded) output."""

    hook: HookScript
    exit_code: int | None
    output: str
    timed_out: bool
    duration_s: float

    @property
    def ok(self) -> bool:
        return self.exit_code == 0 and not self.timed_out

    def outcome(self) -> str:
        """How it ended, without the hook's name: `exited with 1`, `timed out and was killed`."""
        if self.timed_out:
            return "timed out and was killed"
        if self.exit_code is None:
            return "was killed by a signal"
        return f"exited with {self.exit_code}"

    def describe(self) -> str:
        return f"{self.hook.display} {self.outcome()}"


async def _usable(runtime: Runtime, path: str, *, executable: bool) -> bool:
    st = await runtime.stat(path)
    if st.exists and st.is_symlink:
        try:
            st = await runtime.stat(await runtime.realpath(path))
        except OSError:
            return False
    if not st.exists or not st.is_file:
        return False
    return not executable or bool(st.mode & 0o111)


async def find_project_hook(
    runtime: Runtime, checkout: str, name: str, *, fallback_root: str | None = None
) -> HookScript | None:
    executable = name != "tool_env"
    for root in (checkout, fallback_root):
        if root is None:
            continue
        path = runtime.resolve(f"{root.rstrip('/')}/{PROJECT_DIR}/{name}")
        if await _usable(runtime, path, executable=executable):
            return HookScript(name, path, "project")
    return None


def find_user_hook(name: str) -> Path | None:
    if name not in USER_HOOKS:
        return None
    path = xum_root() / name
    try:
        st = path.stat()
    except OSError:
        return None
    if not path.is_file():
        return None
    if name != "tool_env" and not st.st_mode & 0o111:
        return None
    return path


class RemoteStaging:
    """A private directory on the workspace's runtime for hook input/result files and, on SSH,
    copies of the user's own hooks. Local runtimes use a local private directory."""

    def __init__(self, runtime: Runtime, local_dir: Path, workspace_id: str) -> None:
        self.runtime = runtime
        self.local_dir = local_dir
        self.workspace_id = workspace_id
        self._dir: str | None = None
        self._staged: dict[tuple[str, str], str] = {}

    @property
    def remote(self) -> bool:
        return not self.runtime.sees_local_files

    async def directory(self) -> str:
        if self._dir is not None:
            return self._dir
        if not self.remote:
            self._dir = str(ensure_private_dir(self.local_dir))
            return self._dir
        path = f"{self.runtime.temp_dir.rstrip('/')}/xum-hooks-{self.workspace_id}"
        quoted = shlex.quote(path)
        result = await self.runtime.exec(
            f"umask 077; mkdir -p -- {quoted} && chmod 700 -- {quoted}",
            env={},
            timeout_s=30,
        )
        if result.exit_code != 0:
            raise OSError(f"cannot create {path} on the remote")
        self._dir = path
        return path

    async def write(self, stem: str, data: bytes) -> str:
        directory = await self.directory()
        path = f"{directory}/{stem}-{os.urandom(4).hex()}.json"
        await self.runtime.write_bytes_atomic(path, data)
        return path

    def forget(self, paths: Sequence[str]) -> None:
        """Remove local staging files now (remote ones are removed by the hook command)."""
        if self.remote:
            return
        for path in paths:
            with contextlib.suppress(OSError):
                os.unlink(path)

    async def user_hook(self, local: Path) -> HookScript:
        """The user's hook as a path the runtime can run."""
        name = local.name
        if not self.remote:
            return HookScript(name, str(local), "user")
        data = local.read_bytes()
        key = (name, hashlib.sha256(data).hexdigest()[:16])
        staged = self._staged.get(key)
        if staged is None:
            staged = f"{await self.directory()}/user-{key[1]}-{name}"
            await self.runtime.write_bytes_atomic(staged, data)
            await self.runtime.exec(f"chmod 700 -- {shlex.quote(staged)}", env={}, timeout_s=30)
            self._staged[key] = staged
        return HookScript(name, staged, "user")


class _Bounded:
    def __init__(self, on_output: Callable[[bytes], None] | None) -> None:
        self.head = bytearray()
        self.tail = bytearray()
        self.dropped = 0
        self.on_output = on_output

    def __call__(self, chunk: bytes) -> None:
        if self.on_output is not None:
            self.on_output(chunk)
        half = MAX_HOOK_OUTPUT // 2
        room = half - len(self.head)
        if room > 0:
            self.head += chunk[:room]
            chunk = chunk[room:]
        if chunk:
            self.tail += chunk
            if len(self.tail) > half:
                cut = len(self.tail) - half
                self.dropped += cut
                del self.tail[:cut]

    def text(self) -> str:
        middle = (
            f"\n[... {self.dropped} bytes of hook output omitted ...]\n" if self.dropped else ""
        )
        return (bytes(self.head).decode(errors="replace") + middle
                + bytes(self.tail).decode(errors="replace"))  # fmt: skip


async def run_hook(
    runtime: Runtime,
    hook: HookScript,
    *,
    env: dict[str, str],
    cwd: str | None,
    timeout_s: float,
    stderr_only: bool = False,
    cleanup: Sequence[str] = (),
    on_output: Callable[[bytes], None] | None = None,
) -> HookResult:
    """Run one hook to completion (or its timeout). `stderr_only` keeps just its stderr (what a
    blocking `tool_pre` says to the model); otherwise stdout and stderr are merged. `cleanup`
    names staging files the command removes when it ends."""
    command = shlex.quote(hook.path)
    if stderr_only:
        command += " 2>&1 >/dev/null"
    if cleanup:
        files = " ".join(shlex.quote(p) for p in cleanup)
        command = f"{command}\nxum_rc=$?\nrm -f -- {files}\nexit $xum_rc"
    sink = _Bounded(on_output)
    started = time.monotonic()
    result = await runtime.exec(command, env=env, cwd=cwd, timeout_s=timeout_s, on_output=sink)
    return HookResult(
        hook=hook,
        exit_code=result.exit_code,
        output=sink.text(),
        timed_out=result.timed_out,
        duration_s=time.monotonic() - started,
    )


def log_hook(
    workspace_id: str, result: HookResult, *, mask: Callable[[str], str] = lambda s: s
) -> None:
    """Append a hook's outcome to `$XUM_ROOT/logs/hooks.log` (one JSON object per line)."""
    record = {
        "ts": now_ms(),
        "workspaceId": workspace_id,
        "hook": result.hook.display,
        "exitCode": result.exit_code,
        "timedOut": result.timed_out,
        "durationS": round(result.duration_s, 3),
        "output": mask(result.output[-4000:]),
    }
    append_hooks_log(record)


def append_hooks_log(entry: dict[str, object]) -> None:
    """One JSON line in `$XUM_ROOT/logs/hooks.log` (the file is created 0600; callers mask
    secret values first)."""
    path = ensure_private_dir(logs_dir()) / "hooks.log"
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_CLOEXEC, 0o600)
    try:
        os.write(fd, orjson.dumps(entry) + b"\n")
    finally:
        os.close(fd)
