"""One connection to one MCP server, through the official `mcp` SDK.

A `Connection` runs a task that holds the SDK's transport and session for as long as the
server is up: the SDK's context managers (anyio cancel scopes) must be entered and left by the
same task, so starting, waiting and stopping all go through that task, while calls are made from
the caller's task (the SDK correlates requests and answers across tasks).

stdio servers run as `bash -c <command>` in the workspace directory, in their own process group
(the SDK ends the whole group when the connection closes), with the workspace's environment:
xum's own less its provider keys and server token, the project's secrets, the `XUM_*` variables
and the entry's `env`. Their stderr goes through a pipe xum reads: every line is masked and
appended to the workspace's MCP log
(`$XUM_ROOT/logs/mcp/<workspace id>.log`), the last few KiB are kept for error messages, and the
pipe's end tells xum the server exited, so a crash is noticed even between calls. HTTP servers
(streamable HTTP) get the entry's static headers on every request.

The SDK (about a second of imports) is imported on a worker thread the first time a server
starts, so neither `xum run` without MCP nor the server's shared event loop pays for it.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
from collections.abc import AsyncIterator, Callable, Mapping
from contextlib import AbstractAsyncContextManager, AsyncExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TextIO

from xum.core.paths import FILE_MODE, ensure_private_dir
from xum.workspaces.mcp.config import ServerSpec

if TYPE_CHECKING:
    import httpx2
    from mcp.client._transport import TransportStreams
    from mcp.client.session import ClientSession, IncomingMessage
    from mcp.shared.dispatcher import ProgressFnT
    from mcp.shared.exceptions import MCPError
    from mcp_types import CallToolResult, GetPromptResult, ReadResourceResult

STDERR_TAIL_BYTES = 4096
MAX_LIST_PAGES = 50  # a server whose listing never ends cannot hang a start
MAX_ANNOTATIONS = 16
MAX_ANNOTATION_CHARS = 200
_sdk_ready: asyncio.Future[None] | None = None


class McpError(Exception):
    """Why a server could not start or answer; the message is meant for the user and model."""


async def import_sdk() -> None:
    """Import the SDK modules once per process, off the event loop."""
    global _sdk_ready
    if _sdk_ready is None:
        _sdk_ready = asyncio.get_running_loop().create_future()

        def work() -> None:
            import mcp.client.session
            import mcp.client.stdio
            import mcp.client.streamable_http  # noqa: F401

        try:
            await asyncio.to_thread(work)
        except BaseException as exc:
            _sdk_ready.set_exception(exc)
            _sdk_ready = None
            raise
        _sdk_ready.set_result(None)
        return
    await asyncio.shield(_sdk_ready)


@dataclass(frozen=True, slots=True)
class ToolDef:
    name: str
    description: str
    parameters: dict[str, Any]
    read_only: bool
    annotations: dict[str, Any] = field(default_factory=dict)  # as sent, wire names


@dataclass(frozen=True, slots=True)
class ResourceDef:
    uri: str
    name: str
    description: str = ""
    mime_type: str | None = None
    size: int | None = None


@dataclass(frozen=True, slots=True)
class PromptDef:
    name: str
    description: str
    arguments: tuple[tuple[str, str, bool], ...]  # (name, description, required)


class _StderrReader(asyncio.Protocol):
    """Reads a stdio server's stderr: masked lines to the log, a tail kept, EOF noted."""

    def __init__(self, conn: Connection) -> None:
        self.conn = conn

    def data_received(self, data: bytes) -> None:
        self.conn._note_stderr(data)

    def connection_lost(self, exc: Exception | None) -> None:
        self.conn._stderr_closed()


class Connection:
    def __init__(
        self,
        spec: ServerSpec,
        *,
        cwd: str,
        env: Mapping[str, str],
        mask: Callable[[str], str],
        log_path: Path,
        on_exit: Callable[[Connection], None] | None = None,
        ssh_host: str | None = None,
        auth: httpx2.Auth | None = None,
    ) -> None:
        """`ssh_host`: run a stdio server on that host (an SSH workspace), `cwd` and `env`
        being the remote directory and environment (`xum.workspaces.mcp.remote`). `auth`: the
        OAuth of an HTTP server's sign-in (`xum.workspaces.mcp.oauth`); by default a server
        without a static Authorization header gets the session's, which never waits for a
        person."""
        self.spec = spec
        self.ssh_host = ssh_host
        self.auth = auth
        self.needs_sign_in = False  # the server wants OAuth and no usable token is stored
        self.cwd = cwd
        self.env = dict(env)
        self.mask = mask
        self.log_path = log_path
        self.on_exit = on_exit
        self.session: ClientSession | None = None
        self.tools: tuple[ToolDef, ...] = ()
        self.prompts: tuple[PromptDef, ...] = ()
        self.error: str | None = None
        self.exited = False  # the server went away (crash, or the stop below)
        # The server said its tools or prompts changed (`notifications/*/list_changed`).
        self.stale = False
        self._has_prompts = False
        self.has_resources = False  # the server declared the `resources` capability
        self._stopping = False
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._stop = asyncio.Event()
        self._dead = asyncio.Event()
        self._tail = bytearray()
        self._log_buffer = b""
        self._transport: asyncio.ReadTransport | None = None
        self._http_status: str | None = None  # the last HTTP error status (HTTP servers)

    # Life cycle ----------------------------------------------------------------------------------

    @property
    def ready(self) -> bool:
        return self.session is not None and not self.exited

    async def start(self, timeout_s: float) -> None:
        """Start the server and list what it offers. Raises McpError saying why it could not."""
        await import_sdk()
        self._task = asyncio.create_task(self._run(), name=f"xum mcp server {self.spec.name}")
        ready = asyncio.ensure_future(self._ready.wait())
        try:
            done, _ = await asyncio.wait(
                {ready, self._task}, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED
            )
        finally:
            ready.cancel()
        if self._ready.is_set() and not self.exited:
            return
        if not done:
            self.error = f"did not finish starting within {timeout_s:g} s"
        await self.close()
        raise McpError(self._describe_failure())

    async def close(self) -> None:
        """Stop the server (the SDK closes stdin, then ends the process group)."""
        self._stopping = True
        self._stop.set()
        task = self._task
        if task is not None and not task.done():
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(task), 15)
            if not task.done():
                task.cancel()
                with contextlib.suppress(BaseException):
                    await task
        self._close_stderr()
        self.session = None

    async def _run(self) -> None:
        try:
            async with AsyncExitStack() as stack:
                read, write = await stack.enter_async_context(self._transport_cm(stack))
                from mcp.client.session import ClientSession
                from mcp_types import Implementation

                from xum import __version__

                session = await stack.enter_async_context(
                    ClientSession(
                        read,
                        write,
                        client_info=Implementation(name="xum", version=__version__),
                        message_handler=self._on_message,
                    )
                )
                result = await session.initialize()
                self.tools = await self._list_tools(session)
                self._has_prompts = result.capabilities.prompts is not None
                self.has_resources = result.capabilities.resources is not None
                if self._has_prompts:
                    self.prompts = await self._list_prompts(session)
                self.session = session
                self._ready.set()
                stop = asyncio.ensure_future(self._stop.wait())
                dead = asyncio.ensure_future(self._dead.wait())
                try:
                    await asyncio.wait({stop, dead}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    stop.cancel()
                    dead.cancel()
        except asyncio.CancelledError:
            raise
        except BaseException as exc:  # the SDK raises exception groups from its task groups
            if not self._stopping and self.error is None and self.needs_sign_in:
                self.error = "needs you to sign in (OAuth)"
            if not self._stopping and self.error is None:
                text = _exception_text(exc)
                if not self._ready.is_set() and text == "Connection closed":
                    text = "exited before it answered the MCP handshake"
                self.error = text
        finally:
            self.session = None
            self.exited = True
            if not self._stopping and self.on_exit is not None:
                self.on_exit(self)

    def _transport_cm(self, stack: AsyncExitStack) -> AbstractAsyncContextManager[TransportStreams]:
        spec = self.spec
        if spec.url is not None:
            from mcp.client.streamable_http import streamable_http_client
            from mcp.shared._httpx_utils import create_mcp_http_client

            client = create_mcp_http_client(headers=dict(spec.headers), auth=self._http_auth())

            async def note_status(response: httpx2.Response) -> None:
                if response.status_code >= 400:
                    self._http_status = f"HTTP {response.status_code} from {spec.url}"

            client.event_hooks["response"].append(note_status)
            stack.push_async_callback(client.aclose)
            return streamable_http_client(spec.url, http_client=client)
        from mcp.client.stdio import StdioServerParameters, stdio_client

        errlog = self._stderr_pipe()
        if self.ssh_host is not None:
            from xum.workspaces.mcp.remote import remote_server_process

            command, args, env = remote_server_process(
                self.ssh_host, spec.command or "", env=self.env, cwd=self.cwd
            )
            params = StdioServerParameters(command=command, args=args, env=env)
        else:
            params = StdioServerParameters(
                command="bash", args=["-c", spec.command or ""], env=self.env, cwd=self.cwd
            )
        return _closing_after_spawn(stdio_client(params, errlog=errlog), errlog)

    def _http_auth(self) -> httpx2.Auth | None:
        if self.auth is not None:
            return self.auth
        if any(name.lower() == "authorization" for name, _ in self.spec.headers):
            return None  # the user's own token: no OAuth on top of it
        from xum.workspaces.mcp.oauth import session_auth

        def sign_in_needed() -> None:
            self.needs_sign_in = True

        return session_auth(self.spec.url or "", sign_in_needed)

    async def _on_message(self, message: IncomingMessage) -> None:
        method = getattr(message, "method", None)
        if method in ("notifications/tools/list_changed", "notifications/prompts/list_changed"):
            self.stale = True

    async def refresh(self) -> None:
        """List the tools and prompts again (after a `list_changed` notification)."""
        session = self._session_or_raise()
        self.stale = False
        from mcp.shared.exceptions import MCPError

        try:
            tools = await self._list_tools(session)
            prompts = await self._list_prompts(session) if self._has_prompts else ()
        except MCPError as exc:
            raise McpError(self._call_failure(exc)) from None
        self.tools, self.prompts = tools, prompts

    # Listing -------------------------------------------------------------------------------------

    async def _list_tools(self, session: ClientSession) -> tuple[ToolDef, ...]:
        tools: list[ToolDef] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            from mcp_types import PaginatedRequestParams

            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_tools(params=params)
            for tool in page.tools:
                hints = tool.annotations
                tools.append(
                    ToolDef(
                        name=tool.name,
                        description=tool.description or "",
                        parameters=dict(tool.input_schema or {"type": "object"}),
                        read_only=bool(hints is not None and hints.read_only_hint),
                        annotations=_annotations(
                            hints.model_dump(mode="json", by_alias=True, exclude_none=True)
                            if hints is not None
                            else {}
                        ),
                    )
                )
            cursor = page.next_cursor
            if not cursor:
                break
        return tuple(tools)

    async def _list_prompts(self, session: ClientSession) -> tuple[PromptDef, ...]:
        prompts: list[PromptDef] = []
        cursor: str | None = None
        for _ in range(MAX_LIST_PAGES):
            from mcp_types import PaginatedRequestParams

            params = PaginatedRequestParams(cursor=cursor) if cursor else None
            page = await session.list_prompts(params=params)
            for prompt in page.prompts:
                args = tuple(
                    (a.name, a.description or "", bool(a.required))
                    for a in (prompt.arguments or [])
                )
                prompts.append(PromptDef(prompt.name, prompt.description or "", args))
            cursor = page.next_cursor
            if not cursor:
                break
        return tuple(prompts)

    # Calls ---------------------------------------------------------------------------------------

    async def call_tool(
        self,
        tool: str,
        arguments: Mapping[str, Any],
        progress: Callable[[float, float | None, str | None], None] | None = None,
    ) -> CallToolResult:
        """The SDK's CallToolResult. Raises McpError (timeout, connection lost, protocol error);
        cancellation goes through (the SDK tells the server the call was cancelled). With
        `progress`, the request carries a progress token (the SDK adds one when given a
        callback) and the server's progress notifications for it reach `progress`."""
        session = self._session_or_raise()
        from mcp.shared.exceptions import MCPError

        callback = _progress_callback(progress) if progress is not None else None
        try:
            return await session.call_tool(
                tool,
                dict(arguments),
                read_timeout_seconds=self.spec.timeout_s,
                progress_callback=callback,
            )
        except MCPError as exc:
            raise McpError(self._call_failure(exc)) from None

    async def get_prompt(self, prompt: str, arguments: Mapping[str, str]) -> GetPromptResult:
        session = self._session_or_raise()
        from mcp.shared.exceptions import MCPError

        try:
            return await session.get_prompt(prompt, dict(arguments))
        except MCPError as exc:
            raise McpError(self._call_failure(exc)) from None

    async def list_resources(self) -> tuple[ResourceDef, ...]:
        """The server's resources (every page, up to MAX_LIST_PAGES); () when it offers none.
        Listed on demand, not at start: a server may have many, and most sessions read none."""
        session = self._session_or_raise()
        if not self.has_resources:
            return ()
        from mcp.shared.exceptions import MCPError
        from mcp_types import PaginatedRequestParams

        found: list[ResourceDef] = []
        cursor: str | None = None
        try:
            for _ in range(MAX_LIST_PAGES):
                params = PaginatedRequestParams(cursor=cursor) if cursor else None
                page = await session.list_resources(params=params)
                for res in page.resources:
                    found.append(
                        ResourceDef(
                            uri=str(res.uri),
                            name=res.name,
                            description=res.description or "",
                            mime_type=res.mime_type,
                            size=res.size,
                        )
                    )
                cursor = page.next_cursor
                if not cursor:
                    break
        except MCPError as exc:
            raise McpError(self._call_failure(exc)) from None
        return tuple(found)

    async def read_resource(self, uri: str) -> ReadResourceResult:
        session = self._session_or_raise()
        if not self.has_resources:
            raise McpError("it offers no resources")
        from mcp.shared.exceptions import MCPError

        try:
            return await session.read_resource(uri)
        except MCPError as exc:
            raise McpError(self._call_failure(exc)) from None

    def _session_or_raise(self) -> ClientSession:
        session = self.session
        if session is None or self.exited:
            raise McpError(self._describe_failure())
        return session

    def _call_failure(self, exc: MCPError) -> str:
        from mcp_types import CONNECTION_CLOSED, REQUEST_TIMEOUT

        if exc.code == REQUEST_TIMEOUT:
            return (
                f"the call timed out after {self.spec.timeout_s:g} s and was cancelled "
                f'(raise "timeoutSecs" for server {self.spec.name!r} if it needs longer)'
            )
        if exc.code == CONNECTION_CLOSED or self.exited:
            self.exited = True
            return f"the server stopped during the call{self._stderr_note()}"
        return f"the server answered with an error: {self.mask(exc.message)}"

    # stderr --------------------------------------------------------------------------------------

    def _stderr_pipe(self) -> TextIO:
        read_fd, write_fd = os.pipe()
        loop = asyncio.get_running_loop()
        reader = os.fdopen(read_fd, "rb", buffering=0)
        transport_ready = loop.connect_read_pipe(lambda: _StderrReader(self), reader)

        async def attach() -> None:
            self._transport, _ = await transport_ready

        self._attach = asyncio.ensure_future(attach())
        return os.fdopen(write_fd, "w")

    def _note_stderr(self, data: bytes) -> None:
        self._tail += data
        del self._tail[:-STDERR_TAIL_BYTES]
        self._log_buffer += data
        if b"\n" in self._log_buffer:
            lines, _, self._log_buffer = self._log_buffer.rpartition(b"\n")
            self._log(lines.decode("utf-8", "replace"))

    def _stderr_closed(self) -> None:
        if self._log_buffer:
            self._log(self._log_buffer.decode("utf-8", "replace"))
            self._log_buffer = b""
        self._dead.set()

    def _close_stderr(self) -> None:
        if self._transport is not None:
            self._transport.close()
            self._transport = None

    def _log(self, text: str) -> None:
        try:
            ensure_private_dir(self.log_path.parent)
            fd = os.open(self.log_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, FILE_MODE)
            with os.fdopen(fd, "a", encoding="utf-8") as out:
                for line in self.mask(text).splitlines():
                    out.write(f"[{self.spec.name}] {line}\n")
        except OSError:
            pass  # the log is a help for the user, never a reason to fail the server

    def stderr_tail(self) -> str:
        text = self._tail.decode("utf-8", "replace").strip()
        return self.mask(text[-1500:])

    def _stderr_note(self) -> str:
        tail = self.stderr_tail()
        return f"; its last output on stderr:\n{tail}" if tail else ""

    def _describe_failure(self) -> str:
        what = self.error or (
            "exited" if self.spec.transport == "stdio" else "closed the connection"
        )
        if self._http_status is not None:
            what = f"{what} ({self._http_status})"
        return f"{what}{self._stderr_note()}"


def _annotations(sent: Mapping[str, Any]) -> dict[str, Any]:
    """A tool's annotations as xum keeps them: the hints (booleans) and short strings (the
    `title`), at most MAX_ANNOTATIONS of them. They travel with every result of the tool, so a
    server cannot make them large."""
    kept: dict[str, Any] = {}
    for key, value in sent.items():
        if len(kept) >= MAX_ANNOTATIONS:
            break
        if len(key) > MAX_ANNOTATION_CHARS:
            continue
        if isinstance(value, bool):
            kept[key] = value
        elif isinstance(value, str):
            kept[key] = value[:MAX_ANNOTATION_CHARS]
    return kept


def _progress_callback(
    sink: Callable[[float, float | None, str | None], None],
) -> ProgressFnT:
    """The SDK's async progress callback over xum's plain one (the SDK's `ProgressFnT` names its
    parameters, so the names below are part of the type)."""

    async def callback(progress: float, total: float | None, message: str | None) -> None:
        sink(progress, total, message)

    return callback


@contextlib.asynccontextmanager
async def _closing_after_spawn(
    cm: AbstractAsyncContextManager[TransportStreams], errlog: TextIO
) -> AsyncIterator[TransportStreams]:
    """The SDK's stdio transport, with xum's copy of the stderr pipe's write end closed once
    the server holds its own: only then does the pipe end when the server exits."""
    try:
        async with cm as streams:
            errlog.close()
            yield streams
    finally:
        errlog.close()


def _exception_text(exc: BaseException) -> str:
    """The innermost useful message of what the SDK raised (often an exception group)."""
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    if isinstance(exc, FileNotFoundError | PermissionError):
        return f"could not be started ({exc.strerror}: {exc.filename})"
    text = str(exc).strip() or type(exc).__name__
    if type(exc).__name__ in ("ConnectError", "ConnectTimeout"):
        return f"could not connect: {text}"
    return text
