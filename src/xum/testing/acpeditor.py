"""A scriptable editor on the client side of ACP, for tests and benchmarks of `xum acp`.

It is the SDK's client half (`acp.spawn_agent_process`) with an editor's behaviour: it records
every `session/update` (waiters wake on the one they wait for, never on a timer), answers
permission requests with a chosen option, serves `fs/read_text_file` from "unsaved buffers"
(falling back to the disk), saves `fs/write_text_file` to disk, and runs `terminal/*` commands
as real subprocesses. Which of these it advertises is the test's choice (`EditorCapabilities`).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

from acp import PROTOCOL_VERSION, spawn_agent_process
from acp.core import ClientSideConnection
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    CreateTerminalResponse,
    DeniedOutcome,
    EnvVariable,
    FileSystemCapabilities,
    Implementation,
    KillTerminalResponse,
    PermissionOption,
    ReadTextFileResponse,
    ReleaseTerminalResponse,
    RequestPermissionResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    ToolCallUpdate,
    WaitForTerminalExitResponse,
    WriteTextFileResponse,
)

if TYPE_CHECKING:
    from acp.interfaces import Client

# (options offered, the tool call) -> the option id to pick, or None to cancel the request.
PermissionPolicy = Callable[[list[PermissionOption], ToolCallUpdate], str | None]


@dataclass
class EditorCapabilities:
    read: bool = False
    write: bool = False
    terminal: bool = False

    def to_acp(self) -> ClientCapabilities:
        return ClientCapabilities(
            fs=FileSystemCapabilities(read_text_file=self.read, write_text_file=self.write),
            terminal=self.terminal,
        )


@dataclass
class Received:
    """One `session/update`, with when it arrived (time.monotonic)."""

    session_id: str
    update: Any
    at: float

    @property
    def kind(self) -> str:
        return str(self.update.session_update)


@dataclass
class Terminal:
    process: asyncio.subprocess.Process
    output: bytearray = field(default_factory=bytearray)
    reader: asyncio.Task[None] | None = None
    command: list[str] = field(default_factory=list)
    env: dict[str, str] = field(default_factory=dict)
    cwd: str | None = None


class TestEditor:
    """The `Client` side: what `xum acp` calls on the editor."""

    __test__ = False  # not a pytest test class

    def __init__(
        self,
        buffers: dict[str, str] | None = None,
        permission: PermissionPolicy | None = None,
    ) -> None:
        self.buffers = dict(buffers or {})
        self.permission = permission
        self.received: list[Received] = []
        self.permission_requests: list[tuple[list[PermissionOption], ToolCallUpdate]] = []
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.terminals: dict[str, Terminal] = {}
        # When set, `terminal/create` starts the command but answers only once this is set: a
        # test can cancel a prompt while the bridge still waits for the terminal's id.
        self.terminal_gate: asyncio.Event | None = None
        self._changed = asyncio.Condition()

    # Waiting -------------------------------------------------------------------------------

    async def wait_for(
        self, match: Callable[[Received], bool], timeout: float = 30.0, after: int = 0
    ) -> Received:
        """The first update from index `after` on that `match`es; fails with what did arrive."""
        async with self._changed:
            try:
                async with asyncio.timeout(timeout):
                    while True:
                        for item in self.received[after:]:
                            if match(item):
                                return item
                        await self._changed.wait()
            except TimeoutError:
                kinds = [r.kind for r in self.received[after:]]
                raise AssertionError(
                    f"no matching session/update within {timeout}s; got {kinds}"
                ) from None

    async def _notify(self) -> None:
        async with self._changed:
            self._changed.notify_all()

    def of_kind(self, kind: str, after: int = 0) -> list[Any]:
        return [r.update for r in self.received[after:] if r.kind == kind]

    def message_text(self, after: int = 0) -> str:
        return "".join(u.content.text for u in self.of_kind("agent_message_chunk", after))

    def thought_text(self, after: int = 0) -> str:
        return "".join(u.content.text for u in self.of_kind("agent_thought_chunk", after))

    # Client protocol -----------------------------------------------------------------------

    def on_connect(self, conn: Any) -> None:
        return None

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.received.append(Received(session_id, update, time.monotonic()))
        await self._notify()

    async def request_permission(
        self, session_id: str, tool_call: ToolCallUpdate, options: list[PermissionOption], **kw: Any
    ) -> RequestPermissionResponse:
        self.permission_requests.append((options, tool_call))
        await self._notify()
        picked = self.permission(options, tool_call) if self.permission else None
        if picked is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(
            outcome=AllowedOutcome(outcome="selected", option_id=picked)
        )

    async def read_text_file(
        self,
        session_id: str,
        path: str,
        line: int | None = None,
        limit: int | None = None,
        **kwargs: Any,
    ) -> ReadTextFileResponse:
        self.reads.append(path)
        text = self.buffers.get(path)
        if text is None:
            text = Path(path).read_text(encoding="utf-8")
        return ReadTextFileResponse(content=text)

    async def write_text_file(
        self, session_id: str, path: str, content: str, **kwargs: Any
    ) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        Path(path).write_text(content, encoding="utf-8")  # the editor saves the buffer
        return WriteTextFileResponse()

    async def create_terminal(
        self,
        session_id: str,
        command: str,
        args: list[str] | None = None,
        env: list[EnvVariable] | None = None,
        cwd: str | None = None,
        output_byte_limit: int | None = None,
        **kwargs: Any,
    ) -> CreateTerminalResponse:
        variables = {v.name: v.value for v in env or []}
        argv = [command, *(args or [])]
        process = await asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            cwd=cwd,
            env={**os.environ, **variables},
            start_new_session=True,
        )
        terminal = Terminal(process, command=argv, env=variables, cwd=cwd)

        async def pump() -> None:
            assert process.stdout is not None
            while chunk := await process.stdout.read(65536):
                terminal.output.extend(chunk)

        terminal.reader = asyncio.create_task(pump())
        terminal_id = f"term-{len(self.terminals) + 1}"
        self.terminals[terminal_id] = terminal
        await self._notify()
        if self.terminal_gate is not None:
            await self.terminal_gate.wait()
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def terminal_output(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> TerminalOutputResponse:
        terminal = self.terminals[terminal_id]
        code = terminal.process.returncode
        status = None if code is None else _exit_status(code)
        return TerminalOutputResponse(
            output=terminal.output.decode("utf-8", "replace"), truncated=False, exit_status=status
        )

    async def wait_for_terminal_exit(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> WaitForTerminalExitResponse:
        terminal = self.terminals[terminal_id]
        code = await terminal.process.wait()
        if terminal.reader is not None:
            await terminal.reader
        status = _exit_status(code)
        return WaitForTerminalExitResponse(exit_code=status.exit_code, signal=status.signal)

    async def kill_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> KillTerminalResponse:
        terminal = self.terminals[terminal_id]
        with contextlib.suppress(ProcessLookupError):
            os.killpg(terminal.process.pid, 9)
        return KillTerminalResponse()

    async def release_terminal(
        self, session_id: str, terminal_id: str, **kwargs: Any
    ) -> ReleaseTerminalResponse:
        terminal = self.terminals[terminal_id]
        if terminal.process.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(terminal.process.pid, 9)
        return ReleaseTerminalResponse()


def _exit_status(code: int) -> TerminalExitStatus:
    if code < 0:
        import signal

        return TerminalExitStatus(exit_code=None, signal=signal.Signals(-code).name)
    return TerminalExitStatus(exit_code=code, signal=None)


@contextlib.asynccontextmanager
async def connect(
    editor: TestEditor,
    argv: list[str],
    *,
    env: dict[str, str],
    cwd: Path,
    capabilities: EditorCapabilities | None = None,
    stderr: Path | None = None,
) -> AsyncIterator[tuple[ClientSideConnection, asyncio.subprocess.Process, Any]]:
    """Start `argv` (the `xum acp` command) with `env` laid over this process's environment,
    initialize it, and yield (connection, process, the initialize response). Its stderr goes to
    the file `stderr` (else nowhere: a pipe nobody reads would fill up and block it). Leaving
    closes stdin, which ends the bridge."""
    caps = (capabilities or EditorCapabilities()).to_acp()
    err = open(stderr, "ab") if stderr is not None else open(os.devnull, "wb")  # noqa: SIM115
    full_env = {**os.environ, **env}
    # The editor implements the client methods the bridge calls, not the whole protocol
    # (elicitation, extensions): the SDK answers "method not found" for the others.
    spawned = spawn_agent_process(
        cast("Client", editor),
        argv[0],
        *argv[1:],
        env=full_env,
        cwd=cwd,
        transport_kwargs={"stderr": err},
    )
    async with contextlib.AsyncExitStack() as stack:
        stack.callback(err.close)
        conn, proc = await stack.enter_async_context(spawned)
        init = await conn.initialize(
            protocol_version=PROTOCOL_VERSION,
            client_capabilities=caps,
            client_info=Implementation(name="xum-test-editor", version="1"),
        )
        yield conn, proc, init
