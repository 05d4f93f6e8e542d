"""What the MCP tools, the context and the engine need from a session's MCP servers.

The servers themselves are run by the workspaces layer (`xum.workspaces.mcp.manager`, one
manager per session); everything below it sees them through the `McpHost` protocol and the
plain records here, which hold no SDK types (the `mcp` SDK is imported only by the manager,
once a workspace really has servers to start). A session without MCP servers never imports this
module: its records cost a few milliseconds of class creation, and the names and the tool family
that every request needs are in `xum.tools.mcp_names`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

from xum.llm.types import ToolSpec

ServerScope = Literal["global", "repo"]
ServerStatus = Literal[
    "starting", "ready", "idle", "failed", "needs-sign-in", "exited", "disabled", "withheld"
]


@dataclass(frozen=True, slots=True)
class McpTool:
    """One tool a server offers, as the model will see it."""

    name: str  # the public name, `mcp__<server>__<tool>`
    server: str
    tool: str  # the server's own name for it
    description: str
    parameters: dict[str, Any]
    read_only: bool = False  # the server's `readOnlyHint`
    # The server's annotations as it sent them (wire names: `readOnlyHint`, `destructiveHint`,
    # `title`, ...). Hints from the server, never trusted for anything but `read_only` above,
    # which the permission modes read (docs/security.md).
    annotations: Mapping[str, Any] = field(default_factory=dict)

    def spec(self) -> ToolSpec:
        return ToolSpec(self.name, self.description, self.parameters)


@dataclass(frozen=True, slots=True)
class McpPromptArgument:
    name: str
    description: str
    required: bool


@dataclass(frozen=True, slots=True)
class McpPrompt:
    name: str  # the public name, `mcp__<server>__<prompt>`
    server: str
    prompt: str  # the server's own name for it
    description: str
    arguments: tuple[McpPromptArgument, ...] = ()


@dataclass(frozen=True, slots=True)
class McpResource:
    """One resource a server lists (`resources/list`)."""

    server: str
    uri: str
    name: str
    description: str = ""
    mime_type: str | None = None
    size: int | None = None  # bytes, when the server says

    @property
    def mention(self) -> str:
        """How a message names it: `server:uri` (typed after an `@`)."""
        return f"{self.server}:{self.uri}"


@dataclass(frozen=True, slots=True)
class McpResourceListing:
    """The resources of a session's servers, and why some server could not list them."""

    resources: tuple[McpResource, ...] = ()
    errors: tuple[str, ...] = ()  # one line per server that failed (masked)


@dataclass(frozen=True, slots=True)
class McpServerState:
    """A configured server as the UI and the tools report it."""

    name: str
    scope: ServerScope
    status: ServerStatus
    error: str | None = None  # why it is not running (masked)
    tools: int = 0  # how many tools it offers (the last time it was asked)


@dataclass(frozen=True, slots=True)
class McpSnapshot:
    """What a session's servers offer right now. `revision` moves whenever the tools, prompts,
    tool-search setting or the set of usable servers change (not for a status alone), so a
    caller may cache what it built from a snapshot on it."""

    revision: int = 0
    servers: tuple[McpServerState, ...] = ()
    tools: tuple[McpTool, ...] = ()
    prompts: tuple[McpPrompt, ...] = ()
    tool_search: bool = True  # MCP tools stay out of the tool list until a search loads them

    @property
    def configured(self) -> bool:
        """Whether any server could serve this session (the MCP tool family is offered then)."""
        return any(s.status not in ("disabled", "withheld") for s in self.servers)

    def tool(self, name: str) -> McpTool | None:
        return next((t for t in self.tools if t.name == name), None)


@dataclass(slots=True)
class McpCallOutcome:
    """A finished tool call, its content flattened to text (images saved as files)."""

    text: str
    is_error: bool = False
    meta: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class McpPromptOutcome:
    """A prompt read from its server: its messages as text, or why it could not be read."""

    text: str
    is_error: bool = False
    meta: dict[str, Any] = field(default_factory=dict)


# progress(progress, total, message): a server's `notifications/progress` for a running call.
ProgressSink = Callable[[float, float | None, str | None], None]


class McpHost(Protocol):
    """A session's MCP servers (implemented by `xum.workspaces.mcp.manager.McpManager`).

    None of these raise for the server's failures (not running, crashed, timed out, answered
    with an error): the outcome says what happened, so a tool call gets an error result and
    the turn goes on. Cancellation (an interrupt) goes through and cancels the server's call.
    """

    async def snapshot(self) -> McpSnapshot | None:
        """The servers and what they offer; None when no server is configured (the cheap,
        usual case). The first call starts the configured servers; each call picks up config
        changes (hot reload)."""
        ...

    async def call_tool(
        self,
        name: str,
        arguments: Mapping[str, Any],
        *,
        scratch_dir: str,
        progress: ProgressSink | None = None,
    ) -> McpCallOutcome:
        """Call the tool with public name `name`; images in the result are written under
        `scratch_dir`. With `progress`, the call carries a progress token and each progress
        notification the server sends for it is handed to `progress` while the call runs."""
        ...

    def tool(self, name: str) -> McpTool | None:
        """The tool with public name `name` as its server last listed it (None: no such tool
        now). Cheap: no server is asked."""
        ...

    async def get_prompt(self, name: str, arguments: Mapping[str, str]) -> McpPromptOutcome: ...

    async def list_resources(self, server: str | None = None) -> McpResourceListing:
        """The resources every running server (or only `server`) lists, asked now; servers
        not started yet are started first."""
        ...

    async def read_resource(
        self, server: str, uri: str, *, scratch_dir: str | None
    ) -> McpCallOutcome:
        """The resource's contents as text (`resources/read`). Binary contents are saved under
        `scratch_dir` and named; with None they are only described."""
        ...


@dataclass(frozen=True, slots=True)
class McpAccess:
    """What one tool call may use of MCP (`ToolContext.mcp`)."""

    host: McpHost
    catalog: tuple[ToolSpec, ...]  # the MCP tools this agent may use, loaded or not
    offered: frozenset[str]  # the tools in the current request's tool list
    prompts: tuple[McpPrompt, ...] = ()
