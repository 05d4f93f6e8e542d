"""A runtime that hands every call to another one.

The per-call views (the sandbox's, the editor's under ACP) change one or two calls of the
session's runtime and keep the rest; they subclass this and override what they change. A view
owns nothing: `close` leaves the runtime underneath to the session that opened it.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from xum.runtime.base import ExecResult, FileStat, OutputSink, Runtime, RuntimeKind


class ForwardingRuntime:
    def __init__(self, inner: Runtime) -> None:
        self.inner = inner
        self.kind: RuntimeKind = inner.kind
        self.workspace_path = inner.workspace_path
        self.spill_cap = inner.spill_cap
        self.sees_local_files = inner.sees_local_files
        self.transport_failure_exit = inner.transport_failure_exit

    @property
    def temp_dir(self) -> str:
        return self.inner.temp_dir

    def resolve(self, path: str) -> str:
        return self.inner.resolve(path)

    async def realpath(self, path: str) -> str:
        return await self.inner.realpath(path)

    async def exec(
        self,
        script: str,
        *,
        env: Mapping[str, str],
        cwd: str | None = None,
        timeout_s: float | None = None,
        on_output: OutputSink | None = None,
    ) -> ExecResult:
        return await self.inner.exec(
            script, env=env, cwd=cwd, timeout_s=timeout_s, on_output=on_output
        )

    async def read_bytes(self, path: str, *, limit: int | None = None) -> bytes:
        return await self.inner.read_bytes(path, limit=limit)

    async def write_bytes_atomic(self, path: str, data: bytes) -> None:
        await self.inner.write_bytes_atomic(path, data)

    async def stat(self, path: str) -> FileStat:
        return await self.inner.stat(path)

    async def publish_file(self, local: Path) -> str:
        return await self.inner.publish_file(local)

    async def close(self) -> None:
        return None  # a view owns nothing; the session closes its runtime
