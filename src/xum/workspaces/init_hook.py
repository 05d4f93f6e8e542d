"""`.xum/init`: run once when a workspace is created, in the background.

The workspace is usable at once; the hook's output streams line by line to whoever subscribes
(the server forwards it; `xum run` shows it as it comes), and its outcome is kept on the
workspace record (`init_status`, `init_exit_code`) and its full output in
`$XUM_ROOT/logs/init/<workspace-id>.log`. A failure is logged and reported, never fatal. The
tool-call middleware makes the agent's first tool call wait for the hook (see `middleware.py`),
so a one-shot run never races its own setup.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Mapping
from pathlib import Path

from xum.core.fsutil import atomic_write_bytes
from xum.core.paths import ensure_private_dir, logs_dir
from xum.runtime.base import Runtime
from xum.store import registry
from xum.store.registry import WorkspaceRecord
from xum.workspaces import hooks
from xum.workspaces.checkouts.factory import checkout_for
from xum.workspaces.env import lifecycle_env
from xum.workspaces.safety.masking import SecretMasker
from xum.workspaces.safety.trust import project_automation_allowed

INIT_TIMEOUT_S = 30 * 60.0  # dependency installs can be slow; a hung hook still ends
MAX_LINES_KEPT = 2000  # lines replayed to a late subscriber
LineSink = Callable[[str], None]


class InitHookRun:
    """One run of a workspace's init hook. Create with `start_init_hook`."""

    def __init__(
        self,
        record: WorkspaceRecord,
        runtime: Runtime,
        hook: hooks.HookScript,
        env: dict[str, str],
        *,
        masker: SecretMasker,
        timeout_s: float,
    ) -> None:
        self.workspace_id = record.id
        self.cwd = record.path
        self.runtime = runtime
        self.hook = hook
        self.env = env
        self.masker = masker
        self.timeout_s = timeout_s
        self.lines: list[str] = []
        self.status = "running"
        self.exit_code: int | None = None
        self.result: hooks.HookResult | None = None
        self._partial = b""
        self._subscribers: list[LineSink] = []
        self._task: asyncio.Task[None] | None = None

    # Public API ------------------------------------------------------------------------------

    @property
    def done(self) -> bool:
        return self.status != "running"

    @property
    def ok(self) -> bool:
        return self.status == "succeeded"

    def subscribe(self, sink: LineSink) -> Callable[[], None]:
        """Feed `sink` every output line: those so far at once, then each as it arrives. Returns
        a function that unsubscribes."""
        for line in self.lines:
            sink(line)
        self._subscribers.append(sink)
        return lambda: self._subscribers.remove(sink) if sink in self._subscribers else None

    async def stream(self) -> AsyncIterator[str]:
        """The output lines as an async iterator, ending when the hook ends."""
        queue: asyncio.Queue[str | None] = asyncio.Queue()
        unsubscribe = self.subscribe(queue.put_nowait)
        try:
            if self._task is None or self._task.done():
                queue.put_nowait(None)
            else:
                self._task.add_done_callback(lambda _t: queue.put_nowait(None))
            while (line := await queue.get()) is not None:
                yield line
        finally:
            unsubscribe()

    async def wait(self) -> str:
        """Wait for the hook to end and return its final status. Cancelling the waiter does not
        stop the hook."""
        if self._task is not None and not self._task.done():
            await asyncio.wait([self._task])
        return self.status

    def cancel(self) -> None:
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def describe(self) -> str:
        if self.result is None:
            return f"{self.hook.display} was cancelled"
        return self.result.describe()

    # Internals -------------------------------------------------------------------------------

    def start(self) -> InitHookRun:
        self._task = asyncio.get_running_loop().create_task(self._run())
        return self

    def _emit(self, raw: bytes) -> None:
        line = self.masker.mask(raw.decode(errors="replace"))
        self.lines.append(line)
        if len(self.lines) > MAX_LINES_KEPT:
            del self.lines[: len(self.lines) - MAX_LINES_KEPT]
        for sink in list(self._subscribers):
            with contextlib.suppress(Exception):  # a broken subscriber must not kill the hook
                sink(line)

    def _feed(self, chunk: bytes) -> None:
        data = self._partial + chunk
        *complete, self._partial = data.split(b"\n")
        for raw in complete:
            self._emit(raw)

    async def _run(self) -> None:
        try:
            await asyncio.to_thread(
                registry.update_workspace, self.workspace_id, init_status="running"
            )
            self.result = await hooks.run_hook(
                self.runtime,
                self.hook,
                env=self.env,
                cwd=self.cwd,
                timeout_s=self.timeout_s,
                on_output=self._feed,
            )
        except asyncio.CancelledError:
            self.status = "cancelled"
            raise
        except Exception as exc:  # the runtime failed (ssh down): reported, never fatal
            self._emit(f"xum: could not run {self.hook.display}: {exc}".encode())
            self.status = "failed"
        else:
            if self._partial:
                self._emit(self._partial)
                self._partial = b""
            self.exit_code = self.result.exit_code
            self.status = (
                "succeeded"
                if self.result.ok
                else "timed_out"
                if self.result.timed_out
                else "failed"
            )
        finally:
            await self._record()

    async def _record(self) -> None:
        with contextlib.suppress(Exception):
            await asyncio.shield(
                asyncio.to_thread(
                    registry.update_workspace,
                    self.workspace_id,
                    init_status=self.status,
                    init_exit_code=self.exit_code,
                )
            )
        with contextlib.suppress(OSError):
            directory = ensure_private_dir(logs_dir() / "init")
            text = "\n".join(self.lines) + ("\n" if self.lines else "")
            # 0600 like everything under $XUM_ROOT: the output may name paths and settings.
            atomic_write_bytes(
                directory / f"{self.workspace_id}.log", text.encode("utf-8"), durable=False
            )
        if self.result is not None and not self.result.ok:
            with contextlib.suppress(OSError):
                hooks.log_hook(self.workspace_id, self.result, mask=self.masker.mask)


async def start_init_hook(
    record: WorkspaceRecord,
    runtime: Runtime,
    *,
    secrets: Mapping[str, str],
    on_line: LineSink | None = None,
    timeout_s: float = INIT_TIMEOUT_S,
    trust_root: Path | None = None,
) -> InitHookRun | None:
    """Start the workspace's `.xum/init` in the background, if the project is trusted and has
    one. Returns the run (subscribe to it, or `await run.wait()`), or None. `trust_root`: the
    project's (`xum.workspaces.safety.trust.trust_root`), when the caller knows it."""
    if not project_automation_allowed(record.project_path, root=trust_root):
        return None
    roots = checkout_for(record).hook_roots()
    hook = await hooks.find_project_hook(
        runtime, roots.checkout, "init", fallback_root=roots.fallback
    )
    if hook is None:
        return None
    run = InitHookRun(
        record,
        runtime,
        hook,
        lifecycle_env(record, secrets, init=True),
        masker=SecretMasker.for_project(secrets),
        timeout_s=timeout_s,
    )
    if on_line is not None:
        run.subscribe(on_line)
    return run.start()
