"""Tool calls whose files and commands go through the editor.

When the editor advertises `fs.readTextFile`, `fs.writeTextFile` or `terminal` and the
workspace runs on the local runtime, each tool call gets a runtime (`EditorRuntime`) that sends
what the editor can do to the editor: reads return the editor's buffer (unsaved changes
included), writes go into the buffer and are saved by the editor, and commands run in an editor
terminal that the tool call shows. Everything else (paths, stat, symlinks, spill files) stays
with the local runtime underneath, which also takes over whatever the editor cannot or should not
do: files outside the workspace (the plan file, scratch and temp files are xum's, not the
project's), binary or non-UTF-8 files, very large files, background commands (their output has
to stream into xum while they run). A command sent to the editor keeps the call's sandbox and
leaves xum's own secrets out of the editor's environment (`xum.acp.terminal_command`).

It is wired as tool-call middleware: the bridge's one host (`xum.host`) gets `EditorDelegations`,
which hands each call to the `EditorDelegation` of the session it belongs to (sessions opened
without one, sub-agents included, run every call locally): only tool calls see the editor. Instruction files, skills and hooks are read and run
locally, as in every other front-end.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import errno
import logging
import os
import signal
import time
from collections.abc import Callable, Coroutine, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
from acp.schema import ClientCapabilities, CreateTerminalResponse, EnvVariable

from xum.acp.terminal_command import editor_argv, without_own_secrets_argv
from xum.runtime.base import ExecResult, OutputSink, Runtime
from xum.runtime.forwarding import ForwardingRuntime
from xum.runtime.local import NON_INTERACTIVE_ENV

if TYPE_CHECKING:
    from acp.interfaces import Client

    from xum.engine.extensions import ToolCall
    from xum.tools.base import ToolContext, ToolResult

log = logging.getLogger("xum.acp")

# Files above this size are read from disk: a whole buffer travels as one JSON string.
EDITOR_READ_MAX_BYTES = 8 * 1024 * 1024
# How much of a delegated command's output the editor keeps for us (the rest of xum's bounds,
# head and tail for the model and a spill file, apply to what comes back).
TERMINAL_OUTPUT_LIMIT = 8 * 1024 * 1024
# After a kill, how long to wait for the editor to report the exit.
KILL_WAIT_S = 5.0

TerminalListener = Callable[[str, str], None]  # (tool call id, terminal id)


@dataclass(frozen=True, slots=True)
class EditorAbilities:
    """What the editor said it can do for the agent (`initialize`'s client capabilities)."""

    read: bool = False
    write: bool = False
    terminal: bool = False

    @classmethod
    def from_capabilities(cls, caps: ClientCapabilities | None) -> EditorAbilities:
        if caps is None:
            return cls()
        fs = caps.fs
        return cls(
            read=bool(fs and fs.read_text_file),
            write=bool(fs and fs.write_text_file),
            terminal=bool(caps.terminal),
        )

    @property
    def any(self) -> bool:
        return self.read or self.write or self.terminal


class EditorDelegation:
    """Tool-call middleware: each call runs on an `EditorRuntime` over the session's runtime."""

    def __init__(
        self,
        client: Client,
        session_id: str,
        abilities: EditorAbilities,
        on_terminal: TerminalListener,
    ) -> None:
        self.client = client
        self.session_id = session_id
        self.abilities = abilities
        self.on_terminal = on_terminal

    async def before_tool(self, call: ToolCall, ctx: ToolContext) -> ToolContext | None:
        abilities = self.abilities
        if call.name == "bash" and _in_background(call.arguments):
            # A background command's output streams into xum while it runs (task_await reads
            # it); an editor terminal gives it only at the end. It runs locally.
            abilities = dataclasses.replace(abilities, terminal=False)
        if not abilities.any:
            return None
        runtime = EditorRuntime(ctx.runtime, self, call.id, abilities)
        return dataclasses.replace(ctx, runtime=runtime)

    async def after_tool(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> ToolResult:
        return result


class EditorDelegations:
    """Tool-call middleware of the bridge's host: each call goes to the delegation of its
    workspace's editor session, if it has one."""

    def __init__(self) -> None:
        self.by_workspace: dict[str, EditorDelegation] = {}

    async def before_tool(self, call: ToolCall, ctx: ToolContext) -> ToolContext | None:
        delegation = self.by_workspace.get(ctx.workspace_id)
        if delegation is None:
            return None
        return await delegation.before_tool(call, ctx)

    async def after_tool(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> ToolResult:
        return result


def _in_background(arguments: str) -> bool:
    try:
        parsed = orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return False
    return isinstance(parsed, dict) and parsed.get("run_in_background") is True


def _editor_text(data: bytes) -> str | None:
    """`data` as text the editor can hold in a buffer, or None (binary, not UTF-8)."""
    if b"\x00" in data:
        return None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return None


def _signal_number(name: str | None) -> int | None:
    if not name:
        return None
    text = name.strip().upper()
    if text.isdigit():
        return int(text)
    with contextlib.suppress(KeyError):
        return int(signal.Signals[text if text.startswith("SIG") else f"SIG{text}"])
    log.warning("the editor reported an unknown signal %r; taken as SIGKILL", name)
    return int(signal.SIGKILL)


class EditorRuntime(ForwardingRuntime):
    """One tool call's runtime: the editor for what it offers, `inner` for the rest."""

    def __init__(
        self,
        inner: Runtime,
        owner: EditorDelegation,
        call_id: str,
        abilities: EditorAbilities,
    ) -> None:
        super().__init__(inner)
        self.owner = owner
        self.call_id = call_id
        self.abilities = abilities

    def __repr__(self) -> str:
        return f"EditorRuntime({self.workspace_path!r}, {self.abilities})"

    def _editor_path(self, path: str) -> str | None:
        """`path` resolved, when it is one of the workspace's files (the editor's buffers are
        the project's); None for xum's own files elsewhere (the plan file, scratch, temp)."""
        resolved = self.inner.resolve(path)
        root = self.workspace_path.rstrip(os.sep) + os.sep
        return resolved if resolved.startswith(root) else None

    # Files -------------------------------------------------------------------------------

    async def read_bytes(self, path: str, *, limit: int | None = None) -> bytes:
        """The editor's buffer of a text file; the disk for anything else. The disk is read
        first either way: it says whether the file exists and is a regular file (the editor
        would open a FIFO or a directory differently), and whether it is text."""
        resolved = self._editor_path(path) if self.abilities.read else None
        if resolved is None:
            return await self.inner.read_bytes(path, limit=limit)
        st = await self.inner.stat(resolved)
        if st.exists and st.size > EDITOR_READ_MAX_BYTES:
            return await self.inner.read_bytes(resolved, limit=limit)
        on_disk = await self.inner.read_bytes(resolved)
        if _editor_text(on_disk) is None:
            return on_disk[:limit] if limit is not None else on_disk
        try:
            reply = await self.owner.client.read_text_file(
                session_id=self.owner.session_id, path=resolved
            )
        except Exception as exc:  # the editor could not: the file on disk is the answer
            log.warning("the editor did not read %s (%s); read from disk", resolved, exc)
            return on_disk[:limit] if limit is not None else on_disk
        data = reply.content.encode("utf-8")
        return data[:limit] if limit is not None else data

    async def write_bytes_atomic(self, path: str, data: bytes) -> None:
        resolved = self._editor_path(path) if self.abilities.write else None
        text = _editor_text(data) if resolved is not None else None
        if resolved is None or text is None:
            await self.inner.write_bytes_atomic(path, data)
            return
        # The editor writes the file; a new one may need its directory first, as locally.
        await asyncio.to_thread(os.makedirs, os.path.dirname(resolved), exist_ok=True)
        try:
            await self.owner.client.write_text_file(
                session_id=self.owner.session_id, path=resolved, content=text
            )
        except Exception as exc:
            raise OSError(errno.EIO, f"the editor did not write the file: {exc}", resolved) from exc

    # Commands ----------------------------------------------------------------------------

    async def exec(
        self,
        script: str,
        *,
        env: Mapping[str, str],
        cwd: str | None = None,
        timeout_s: float | None = None,
        on_output: OutputSink | None = None,
    ) -> ExecResult:
        if not self.abilities.terminal:
            return await self.inner.exec(
                script, env=env, cwd=cwd, timeout_s=timeout_s, on_output=on_output
            )
        return await self._exec_in_editor(script, env, cwd, timeout_s, on_output)

    async def _exec_in_editor(
        self,
        script: str,
        env: Mapping[str, str],
        cwd: str | None,
        timeout_s: float | None,
        on_output: OutputSink | None,
    ) -> ExecResult:
        client, session_id = self.owner.client, self.owner.session_id
        started = time.monotonic()
        where = self.inner.resolve(cwd) if cwd else self.workspace_path
        # The sandbox xum would run it in, or nothing: a command that cannot keep its sandbox in
        # the editor's terminal runs (or is refused) here instead.
        argv = editor_argv(self.inner, script, where)
        if argv is None:
            return await self.inner.exec(
                script, env=env, cwd=cwd, timeout_s=timeout_s, on_output=on_output
            )
        variables = {**NON_INTERACTIVE_ENV, **env}
        command, *args = without_own_secrets_argv(argv, variables)
        creating = asyncio.ensure_future(
            client.create_terminal(
                session_id=session_id,
                command=command,
                args=args,
                env=[EnvVariable(name=k, value=v) for k, v in variables.items()],
                cwd=where,
                output_byte_limit=TERMINAL_OUTPUT_LIMIT,
            )
        )
        try:
            created = await asyncio.shield(creating)
        except asyncio.CancelledError:
            # Cancelled while the editor was starting the command: it may already run, so
            # whatever it started is stopped once the editor says which terminal it is.
            _later(self._stop_when_created(creating))
            raise
        terminal_id = created.terminal_id
        self.owner.on_terminal(self.call_id, terminal_id)
        timed_out = False
        try:
            try:
                async with asyncio.timeout(timeout_s):
                    status = await client.wait_for_terminal_exit(
                        session_id=session_id, terminal_id=terminal_id
                    )
            except TimeoutError:
                timed_out = True
                await client.kill_terminal(session_id=session_id, terminal_id=terminal_id)
                async with asyncio.timeout(KILL_WAIT_S):
                    status = await client.wait_for_terminal_exit(
                        session_id=session_id, terminal_id=terminal_id
                    )
            output = await client.terminal_output(session_id=session_id, terminal_id=terminal_id)
        except asyncio.CancelledError:
            await _quietly(client.kill_terminal(session_id=session_id, terminal_id=terminal_id))
            raise
        finally:
            await _quietly(client.release_terminal(session_id=session_id, terminal_id=terminal_id))
        if on_output is not None:
            text = output.output
            if output.truncated:
                text = "[... the editor's terminal kept only the end of the output ...]\n" + text
            if text:
                on_output(text.encode("utf-8"))
        sig = _signal_number(status.signal)
        return ExecResult(
            exit_code=None if sig is not None else status.exit_code,
            signal=sig,
            timed_out=timed_out,
            duration_s=time.monotonic() - started,
        )

    async def _stop_when_created(self, creating: asyncio.Future[CreateTerminalResponse]) -> None:
        client, session_id = self.owner.client, self.owner.session_id
        with contextlib.suppress(Exception):
            terminal_id = (await creating).terminal_id
            await _quietly(client.kill_terminal(session_id=session_id, terminal_id=terminal_id))
            await _quietly(client.release_terminal(session_id=session_id, terminal_id=terminal_id))


# Clean-ups that outlive the call that started them (kept referenced until they end).
_pending: set[asyncio.Task[None]] = set()


def _later(coro: Coroutine[Any, Any, None]) -> None:
    task = asyncio.ensure_future(coro)
    _pending.add(task)
    task.add_done_callback(_pending.discard)


async def _quietly(request: object) -> None:
    """A clean-up request to the editor that must not fail the call, nor hang it, even while
    the call is being cancelled."""
    assert asyncio.iscoroutine(request)
    task = asyncio.ensure_future(request)
    with contextlib.suppress(Exception, asyncio.CancelledError):
        await asyncio.wait_for(asyncio.shield(task), KILL_WAIT_S)
