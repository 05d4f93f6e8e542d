"""A session's MCP servers: config, lazy start, idle stop, restarts, calls (the `McpHost`).

Each session has one (made by its `xum.workspaces.mcp.lazy.SessionMcp` once the workspace
has an MCP config file) and closes it with the session. Nothing runs until the first
`snapshot()`, which the context asks for before the first request of the first
message (lazy start). From then on:

* every `snapshot()` re-reads the config files whose stat signature changed (hot reload): a
  server that was removed or whose entry changed is stopped, a new one is started, and the
  request waits (each server at most `start_timeout_s`, all in parallel) for servers whose
  tools it has never listed; a server that sent `list_changed` is listed again;
* a server that fails to start is reported once (an `advisory`) and tried again on a later
  message, no sooner than `retry_after_s` after the failure;
* a server that exits on its own is reported, keeps the tools it listed (so the tool list the
  model was given stays valid), and is started again by the next call of one of its tools;
* after `idle_timeout_s` (10 minutes) without a message or a call, every server is stopped;
  the next call restarts its server. The tool list stays as it was listed.

On an SSH workspace (`ssh_host` set), stdio servers run on the host, in the workspace's remote
directory, through ssh (`xum.workspaces.mcp.remote`); the config files are the ones xum reads
(the repository's live on the host, so only the global file applies there). Docker workspaces
run no MCP servers: a server started here would run on xum's machine, outside the container.
The session says so once when servers are configured, and offers no MCP tools.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Any

from xum.core.paths import logs_dir
from xum.engine import events as E
from xum.engine.events import EventSink, null_sink
from xum.runtime.base import RuntimeKind
from xum.tools.mcp_host import (
    McpCallOutcome,
    McpPrompt,
    McpPromptArgument,
    McpPromptOutcome,
    McpResource,
    McpResourceListing,
    McpServerState,
    McpSnapshot,
    McpTool,
    ProgressSink,
    ServerStatus,
)
from xum.tools.mcp_names import public_names
from xum.workspaces.mcp.config import EMPTY_CONFIG, ConfigLoader, McpConfig, ServerSpec

if TYPE_CHECKING:  # the connection code loads with the first server that starts
    from xum.workspaces.mcp.client import Connection, PromptDef, ToolDef

IDLE_TIMEOUT_S = 600.0
IDLE_ENV = "XUM_MCP_IDLE_TIMEOUT_S"  # tests only: a short idle timeout
START_TIMEOUT_S = 30.0
RETRY_AFTER_S = 30.0


def idle_timeout_from_env() -> float:
    raw = os.environ.get(IDLE_ENV)
    try:
        value = float(raw) if raw else IDLE_TIMEOUT_S
    except ValueError:
        return IDLE_TIMEOUT_S
    return value if value > 0 else IDLE_TIMEOUT_S


@dataclass(eq=False)
class _Server:
    spec: ServerSpec
    allowed: tuple[str, ...] | None = None  # the workspace's allowlist (None: every tool)
    conn: Connection | None = None
    tools: tuple[ToolDef, ...] | None = None  # None: never listed
    prompts: tuple[PromptDef, ...] = ()
    status: ServerStatus = "starting"
    error: str | None = None
    failed_at: float | None = None
    starting: asyncio.Task[None] | None = None
    calls: int = 0  # calls in flight


@dataclass(frozen=True, slots=True)
class ManagerSettings:
    idle_timeout_s: float = IDLE_TIMEOUT_S
    start_timeout_s: float = START_TIMEOUT_S
    retry_after_s: float = RETRY_AFTER_S


@dataclass(eq=False)
class McpManager:
    """Implements `xum.tools.mcp_host.McpHost` for one session (see the module docstring)."""

    workspace_id: str
    workspace_path: str
    checkout_root: str
    runtime_kind: RuntimeKind
    env: Callable[[], Mapping[str, str]]  # the workspace's environment for stdio servers
    mask: Callable[[str], str]
    trusted: Callable[[], bool]
    emit: EventSink = null_sink
    settings: ManagerSettings = field(default_factory=ManagerSettings)
    ssh_host: str | None = None  # an SSH workspace's host: stdio servers run there

    def __post_init__(self) -> None:
        self.loader = ConfigLoader(
            checkout_root=self.checkout_root,
            workspace_path=self.workspace_path,
            trusted=self.trusted,
        )
        self._config: McpConfig = EMPTY_CONFIG
        self._servers: dict[str, _Server] = {}
        self._snapshot: McpSnapshot = McpSnapshot()
        self._snapshot_key: tuple[Any, ...] | None = None
        self._revision = 0
        self._told: set[str] = set()
        self._last_used = time.monotonic()
        self._idle_task: asyncio.Task[None] | None = None
        self._closed = False
        self.log_path = logs_dir() / "mcp" / f"{self.workspace_id}.log"

    # McpHost -------------------------------------------------------------------------------------

    async def snapshot(self) -> McpSnapshot | None:
        if self._closed:
            return None
        config = self.loader.load()
        if self.runtime_kind in ("docker", "devcontainer") or (
            self.runtime_kind == "ssh" and not self.ssh_host
        ):
            if config.servers:
                where = {"ssh": "SSH", "docker": "Docker"}.get(self.runtime_kind, "Dev Container")
                place = "on the host" if self.runtime_kind == "ssh" else "in the container"
                self._tell(
                    "mcp-unsupported-runtime",
                    f"MCP servers are not started for {where} workspaces (they would run on "
                    f"this machine, not {place}): "
                    + ", ".join(s.name for s in config.servers)
                    + " not available here; use a local or worktree workspace for them",
                )
            return None
        if config is not self._config:
            await self._apply(config)
        self._touch()
        now = time.monotonic()
        for server in self._servers.values():
            if (
                server.conn is None
                and server.starting is None
                and server.tools is None
                and (
                    server.failed_at is None
                    or now - server.failed_at >= self.settings.retry_after_s
                    or self._signed_in_since(server)
                )
            ):
                server.starting = asyncio.create_task(self._start(server))
        for server in self._servers.values():
            if server.conn is not None and server.conn.ready and server.conn.stale:
                await self._refresh(server)
        waiting = [s.starting for s in self._servers.values() if s.starting and s.tools is None]
        if waiting:
            # The start tasks are not cancelled with the request that waits for them.
            await asyncio.wait(waiting)
        return self._build_snapshot()

    def tool(self, name: str) -> McpTool | None:
        return self._snapshot.tool(name)

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        scratch_dir: str,
        progress: ProgressSink | None = None,
    ) -> McpCallOutcome:
        from xum.workspaces.mcp.client import McpError
        from xum.workspaces.mcp.content import result_text

        tool = self._snapshot.tool(name)
        server = self._servers.get(tool.server) if tool is not None else None
        if tool is None or server is None:
            return McpCallOutcome(
                f"There is no MCP tool named {name!r} any more (its server was removed from "
                "the config, disabled for this workspace, or stopped offering it).",
                is_error=True,
            )
        meta: dict[str, Any] = {"mcp_server": tool.server, "mcp_tool": tool.tool}
        if tool.annotations:
            meta["mcp_annotations"] = dict(tool.annotations)
        server.calls += 1
        self._touch()
        try:
            try:
                conn = await self._connected(server)
                result = await conn.call_tool(tool.tool, arguments, progress)
            except McpError as exc:
                return McpCallOutcome(
                    f"MCP server {tool.server!r}: {exc}", is_error=True, meta=meta
                )
            text = result_text(result, scratch_dir=scratch_dir, meta=meta)
            return McpCallOutcome(text, is_error=bool(result.is_error), meta=meta)
        finally:
            server.calls -= 1
            self._touch()

    async def get_prompt(self, name: str, arguments: Mapping[str, str]) -> McpPromptOutcome:
        from xum.workspaces.mcp.client import McpError
        from xum.workspaces.mcp.content import blocks_text

        prompt = next((p for p in self._snapshot.prompts if p.name == name), None)
        server = self._servers.get(prompt.server) if prompt is not None else None
        if prompt is None or server is None:
            return McpPromptOutcome(f"There is no MCP prompt named {name!r}.", is_error=True)
        meta: dict[str, Any] = {"mcp_server": prompt.server, "mcp_prompt": prompt.prompt}
        server.calls += 1
        self._touch()
        try:
            try:
                conn = await self._connected(server)
                result = await conn.get_prompt(prompt.prompt, arguments)
            except McpError as exc:
                return McpPromptOutcome(
                    f"MCP server {prompt.server!r}: {exc}", is_error=True, meta=meta
                )
            parts = []
            if result.description:
                parts.append(result.description)
            for message in result.messages:
                body = blocks_text([message.content], scratch_dir=self._scratch(), meta=meta)
                parts.append(f"[{message.role}]\n{body}")
            return McpPromptOutcome("\n\n".join(parts), meta=meta)
        finally:
            server.calls -= 1
            self._touch()

    async def list_resources(self, server: str | None = None) -> McpResourceListing:
        from xum.workspaces.mcp.client import McpError

        chosen = [
            s for name, s in sorted(self._servers.items()) if server is None or name == server
        ]
        if server is not None and not chosen:
            return McpResourceListing(errors=(self._unknown_server(server),))

        async def one(entry: _Server) -> tuple[McpResource, ...] | str:
            entry.calls += 1
            try:
                conn = await self._connected(entry)
                listed = await conn.list_resources()
            except McpError as exc:
                return self.mask(f"MCP server {entry.spec.name!r}: {exc}")
            finally:
                entry.calls -= 1
                self._touch()
            return tuple(
                McpResource(entry.spec.name, r.uri, r.name, r.description, r.mime_type, r.size)
                for r in listed
            )

        self._touch()
        found = await asyncio.gather(*(one(s) for s in chosen))
        resources = tuple(r for part in found if not isinstance(part, str) for r in part)
        errors = tuple(part for part in found if isinstance(part, str))
        return McpResourceListing(resources, errors)

    async def read_resource(
        self, server: str, uri: str, *, scratch_dir: str | None
    ) -> McpCallOutcome:
        from xum.workspaces.mcp.client import McpError
        from xum.workspaces.mcp.content import contents_text

        entry = self._servers.get(server)
        if entry is None:
            return McpCallOutcome(self._unknown_server(server), is_error=True)
        meta: dict[str, Any] = {"mcp_server": server, "mcp_resource": uri}
        entry.calls += 1
        self._touch()
        try:
            try:
                conn = await self._connected(entry)
                result = await conn.read_resource(uri)
            except McpError as exc:
                return McpCallOutcome(
                    self.mask(f"MCP server {server!r}: {exc}"), is_error=True, meta=meta
                )
            text = contents_text(result.contents, scratch_dir=scratch_dir, meta=meta)
            return McpCallOutcome(self.mask(text), meta=meta)
        finally:
            entry.calls -= 1
            self._touch()

    def _signed_in_since(self, server: _Server) -> bool:
        """A server that needed sign-in is tried again at once once a sign-in stored tokens."""
        if server.status != "needs-sign-in" or server.spec.url is None:
            return False
        from xum.workspaces.mcp.oauth import has_tokens

        return has_tokens(server.spec.url)

    def _unknown_server(self, name: str) -> str:
        known = ", ".join(sorted(self._servers)) or "none"
        return f"There is no MCP server named {name!r} in this workspace (servers: {known})."

    # For the UI and tests ------------------------------------------------------------------------

    def states(self) -> list[McpServerState]:
        return list(self._build_snapshot().servers)

    async def aclose(self) -> None:
        self._closed = True
        if self._idle_task is not None:
            self._idle_task.cancel()
            with contextlib.suppress(BaseException):
                await self._idle_task
        await asyncio.gather(
            *(self._stop(s) for s in self._servers.values()), return_exceptions=True
        )

    # Internals -----------------------------------------------------------------------------------

    async def _apply(self, config: McpConfig) -> None:
        """Hot reload: keep servers whose entry is unchanged, stop the rest, add new ones."""
        self._config = config
        for problem in config.problems:
            self._tell("mcp-config", problem)
        if config.withheld:
            self._tell(
                "untrusted-project",
                "this project is not trusted: the MCP servers "
                + ", ".join(config.withheld)
                + " of .xum/mcp.jsonc were not started; run `xum trust` in the project to allow "
                "them (review the file first: they run as you)",
            )
        wanted = {s.name: s for s in config.servers}
        stale = [
            s for name, s in self._servers.items() if name not in wanted or s.spec != wanted[name]
        ]
        for server in stale:
            self._servers.pop(server.spec.name, None)
        await asyncio.gather(*(self._stop(s) for s in stale), return_exceptions=True)
        for name, spec in wanted.items():
            override = config.overrides.get(name)
            allowed = override.allowed_tools if override is not None else None
            current = self._servers.get(name)
            if current is None:
                self._servers[name] = _Server(spec, allowed=allowed)
            else:
                current.allowed = allowed

    async def _start(self, server: _Server) -> None:
        from xum.workspaces.mcp.client import Connection, McpError

        spec = server.spec
        conn = Connection(
            spec,
            cwd=self.workspace_path,
            env={**self.env(), **dict(spec.env)},
            mask=self.mask,
            log_path=self.log_path,
            on_exit=self._on_exit,
            ssh_host=self.ssh_host,
        )
        server.status = "starting"
        try:
            await conn.start(self.settings.start_timeout_s)
        except McpError as exc:
            server.status, server.error = "failed", str(exc)
            server.failed_at = time.monotonic()
            if conn.needs_sign_in:
                server.status = "needs-sign-in"
                self._tell(
                    "mcp-sign-in",
                    f"MCP server {spec.name!r} needs you to sign in (OAuth): use Sign in for it "
                    "in Settings → MCP or the workspace's MCP dialog; it is tried again with "
                    "the next message after that",
                )
                return
            host = f" on {self.ssh_host}" if self.ssh_host else ""
            where = (
                f"the command runs in the workspace directory{host}; its stderr is in "
                f"{self.log_path}"
                if spec.transport == "stdio"
                else f"it is reached at {spec.url}"
            )
            self._tell(
                "mcp-server-failed",
                f"MCP server {spec.name!r} failed to start: {server.error} ({where})",
            )
            return
        finally:
            server.starting = None
        if self._closed or self._servers.get(spec.name) is not server:
            await conn.close()  # removed by a reload, or the session closed, meanwhile
            return
        server.conn, server.status, server.error, server.failed_at = conn, "ready", None, None
        server.tools, server.prompts = conn.tools, conn.prompts
        self._touch()  # a slow start is not idle time
        self._ensure_idle_watch()

    async def _refresh(self, server: _Server) -> None:
        """The server announced new tools or prompts: list them again (bounded)."""
        from xum.workspaces.mcp.client import McpError

        assert server.conn is not None
        try:
            await asyncio.wait_for(server.conn.refresh(), self.settings.start_timeout_s)
        except (McpError, TimeoutError) as exc:
            self._tell(
                "mcp-server-failed",
                f"MCP server {server.spec.name!r} changed its tools, but listing them again "
                f"failed: {exc or 'timed out'}; the old list stays",
            )
            return
        server.tools, server.prompts = server.conn.tools, server.conn.prompts

    async def _connected(self, server: _Server) -> Connection:
        """The server's live connection, starting it again when it stopped (idle, crash)."""
        if server.conn is not None and server.conn.ready:
            return server.conn
        if server.starting is None:
            server.starting = asyncio.create_task(self._start(server))
        await asyncio.shield(server.starting)
        if server.conn is None or not server.conn.ready:
            from xum.workspaces.mcp.client import McpError

            raise McpError(f"it is not running: {server.error or 'it did not start'}")
        return server.conn

    def _on_exit(self, conn: Connection) -> None:
        for server in self._servers.values():
            if server.conn is conn:
                server.conn, server.status = None, "exited"
                server.error = conn._describe_failure()
                self._tell(
                    "mcp-server-exited",
                    f"MCP server {server.spec.name!r} stopped: {server.error}; it is started "
                    "again when one of its tools is called",
                    key=f"exited:{id(conn)}",
                )

    async def _stop(self, server: _Server) -> None:
        if server.starting is not None:
            server.starting.cancel()
            with contextlib.suppress(BaseException):
                await server.starting
        conn, server.conn = server.conn, None
        if conn is not None:
            await conn.close()

    def _touch(self) -> None:
        self._last_used = time.monotonic()

    def _ensure_idle_watch(self) -> None:
        if self._idle_task is None or self._idle_task.done():
            self._idle_task = asyncio.create_task(self._idle_watch(), name="xum mcp idle stop")

    async def _idle_watch(self) -> None:
        """Stops every server once nothing used them for `idle_timeout_s`."""
        timeout = self.settings.idle_timeout_s
        while True:
            left = self._last_used + timeout - time.monotonic()
            if left > 0 or any(s.calls for s in self._servers.values()):
                await asyncio.sleep(max(left, 0.05))
                continue
            running = [s for s in self._servers.values() if s.conn is not None]
            for server in running:
                server.status = "idle"
            await asyncio.gather(*(self._stop(s) for s in running), return_exceptions=True)
            return  # the next start arms it again

    def _build_snapshot(self) -> McpSnapshot:
        config = self._config
        servers = sorted(self._servers.values(), key=lambda s: s.spec.name)
        states: list[McpServerState] = []
        listed: list[tuple[_Server, ToolDef]] = []
        prompts: list[tuple[_Server, PromptDef]] = []
        for server in servers:
            tools = [
                t for t in server.tools or () if server.allowed is None or t.name in server.allowed
            ]
            listed.extend((server, t) for t in tools)
            prompts.extend((server, p) for p in server.prompts)
            states.append(
                McpServerState(
                    server.spec.name, server.spec.scope, server.status, server.error, len(tools)
                )
            )
        states.extend(McpServerState(s.name, s.scope, "disabled") for s in config.disabled)
        states.extend(McpServerState(name, "repo", "withheld") for name in config.withheld)
        key = (
            tuple(states),
            tuple((s.spec.name, t) for s, t in listed),
            tuple((s.spec.name, p) for s, p in prompts),
            config.tool_search,
        )
        if key == self._snapshot_key:
            return self._snapshot
        tool_names = public_names((s.spec.name, t.name) for s, t in listed)
        prompt_names = public_names((s.spec.name, p.name) for s, p in prompts)
        snapshot = McpSnapshot(
            servers=tuple(sorted(states, key=lambda s: s.name)),
            tools=tuple(
                sorted(
                    (
                        McpTool(
                            tool_names[(s.spec.name, t.name)],
                            s.spec.name,
                            t.name,
                            t.description,
                            t.parameters,
                            t.read_only,
                            t.annotations,
                        )
                        for s, t in listed
                    ),
                    key=lambda t: t.name,
                )
            ),
            prompts=tuple(
                sorted(
                    (
                        McpPrompt(
                            prompt_names[(s.spec.name, p.name)],
                            s.spec.name,
                            p.name,
                            p.description,
                            tuple(McpPromptArgument(*a) for a in p.arguments),
                        )
                        for s, p in prompts
                    ),
                    key=lambda p: p.name,
                )
            ),
            tool_search=config.tool_search,
        )
        # The context caches on `revision`: it moves only when what the model sees changes,
        # not when a server merely stops for idleness or starts again.
        old = self._snapshot
        visible = (snapshot.tools, snapshot.prompts, snapshot.tool_search, snapshot.configured)
        if visible != (old.tools, old.prompts, old.tool_search, old.configured):
            self._revision += 1
        snapshot = replace(snapshot, revision=self._revision)
        self._snapshot_key, self._snapshot = key, snapshot
        return snapshot

    def _tell(self, kind: str, message: str, *, key: str | None = None) -> None:
        """An advisory, once per session for the same `key` (default: the kind and message)."""
        key = key or f"{kind}:{message}"
        if key in self._told:
            return
        self._told.add(key)
        self.emit(E.Advisory(kind=kind, message=self.mask(message)))

    def _scratch(self) -> str:
        from xum.workspaces.state import scratch_dir

        return str(scratch_dir(self.workspace_id))
