"""What every tool is and what it receives.

A tool declares its input as a pydantic model (optional fields are nullable so OpenAI strict
mode accepts the schema), whether it only reads (read-only tools in one step may run
concurrently), and an async `run`. Tools never raise for expected failures: they return a
`ToolResult` with `is_error=True` and a message the model can act on. An exception escaping
`run` is a bug; the engine still turns it into an error result so the turn continues.
"""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, cast

from xum.core.images import ImagePart
from xum.runtime.base import Runtime

if TYPE_CHECKING:
    from xum.tools.background import BackgroundProcesses
    from xum.tools.input import ToolInput
    from xum.tools.mcp_host import McpAccess
    from xum.tools.skill_records import DeleteTarget, SkillChange, SkillListing, SkillScope
    from xum.tools.tasking import SubAgentHost

TodoStatus = Literal["pending", "in_progress", "completed"]
# What a tool can do beyond the session: `read` nothing (reads, session state, asking the user),
# `write` change files, `execute` run commands or start agents. `critical` is not a tool's own
# tier: the approval layer gives it to a destructive command (`rm -rf` outside the checkout,
# `mkfs`, `dd` to a device, a force push), which always needs a person.
RiskTier = Literal["read", "write", "execute", "critical"]


def __getattr__(name: str) -> Any:
    # `from xum.tools.base import ToolInput` keeps working for tool modules, while importing
    # this module (the engine does, on every start) stays free of pydantic.
    if name == "ToolInput":
        from xum.tools.input import ToolInput

        return ToolInput
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class _LazyInput:
    """A tool's `Input` class attribute that imports the model's module when first read."""

    def __init__(self, target: str) -> None:
        self.target = target

    def __get__(self, obj: object, owner: type | None = None) -> type[ToolInput]:
        module, _, name = self.target.partition(":")
        model: type[ToolInput] = getattr(importlib.import_module(module), name)
        return model


def input_model(target: str) -> type[ToolInput]:
    """`Input = input_model("xum.tools.bash_input:BashInput")`: the pydantic model stays in its
    own module, imported when `Input` is first read (a schema, an argument pydantic must
    judge). A tool whose model is plain (`xum.tools.plain_args`) then runs its well-formed
    calls without pydantic ever loading."""
    return cast("type[ToolInput]", _LazyInput(target))


@dataclass(slots=True)
class ToolResult:
    output: str  # what the model sees; always bounded
    is_error: bool = False
    meta: dict[str, Any] = field(default_factory=dict)  # structured facts for UIs and the log
    # Images the model sees after `output` (stored in the session's blobs already; bounded by
    # the tool): `attach_file`, an MCP tool's image content.
    images: list[ImagePart] = field(default_factory=list)


def error(message: str, **meta: Any) -> ToolResult:
    return ToolResult(output=message, is_error=True, meta=meta)


@dataclass(slots=True)
class TodoItem:
    content: str
    status: TodoStatus


@dataclass(frozen=True, slots=True)
class QuestionOption:
    label: str
    description: str


@dataclass(frozen=True, slots=True)
class Question:
    """One `ask_user_question` question. The user may always answer in their own words too."""

    question: str
    header: str  # a short label for the UI
    multi_select: bool
    options: tuple[QuestionOption, ...]


# Put questions to the user and wait: answers keyed by question text (for a multi-select, the
# chosen labels joined with ", "; free-form "Other" text as typed). None: the user dismissed the
# questions (for instance by sending a chat message instead).
AskUser = Callable[[Sequence[Question]], Awaitable[Mapping[str, str] | None]]


class SkillAccess(Protocol):
    """The workspace's skills, as the skill tools see them (implemented by the context layer)."""

    async def skill_names(self) -> list[str]: ...

    async def skill_body(self, name: str) -> str:
        """The body without frontmatter; LookupError when there is no such skill."""
        ...

    async def skill_file(self, name: str, file_path: str, limit: int) -> bytes:
        """A file inside the skill's directory. LookupError (no skill), FileNotFoundError,
        ValueError (the path leaves the directory or is not a regular file)."""
        ...

    async def list_skills(self) -> list[SkillListing]:
        """Every available skill (the winner of each name), by name."""
        ...

    async def write_skill(
        self, scope: SkillScope, name: str, file_path: str | None, content: str
    ) -> SkillChange:
        """Create or replace a file of a skill (`SKILL.md` by default). ValueError (with a
        message for the model) when refused."""
        ...

    async def delete_skill(
        self, scope: SkillScope, name: str, target: DeleteTarget, file_path: str | None
    ) -> SkillChange:
        """Remove a file of a skill or the whole skill. LookupError (no such skill there),
        FileNotFoundError, ValueError (refused)."""
        ...


class GoalAccess(Protocol):
    """The session's goal, as the goal tools see it (implemented by `xum.engine.goals`).
    Goals travel as JSON objects: goalId, objective, status, budgetCents, turnCap, source,
    baseUsd (and, from `snapshot`, spentCents and turnsUsed)."""

    def snapshot(self) -> dict[str, Any] | None:
        """The current goal with its accounting, or None when none was ever set."""
        ...

    @property
    def priced(self) -> bool:
        """Whether the session's cost is known (a budget in cents can be enforced)."""
        ...

    def new_goal_json(
        self, objective: str, budget_cents: int | None, turn_cap: int | None
    ) -> dict[str, Any]:
        """A new active goal set by the agent (not recorded: the tool's result records it)."""
        ...


class OutputStream(Protocol):
    """One named live output stream of a tool call (a UI shows it while the call runs).

    `write` takes raw bytes as a process produced them (any chunking, possibly cutting a UTF-8
    character or a secret in two); the receiving side decodes, masks, bounds and coalesces.
    `close` ends the stream and flushes whatever was held back; writes after it are ignored.
    Neither raises for the writer: live output is a view, the tool's result is the record.
    """

    def write(self, data: bytes) -> None: ...

    def close(self) -> None: ...


# Opens a named live stream for the call whose context carries it. Names in use (docs/events.md
# `tool-output`): "output" (a foreground bash command), "bash:<id>" (a background command, its
# taskId), "hook:tool_pre" and "hook:tool_post" (the tool hooks while they run).
OutputOpener = Callable[[str], OutputStream]
# Wraps the stream a tool keeps a command's output in (its result, its spill file): the masking
# middleware gives one that replaces secret values, so they reach no file on disk either.
OutputFilter = Callable[[OutputStream], OutputStream]


class ByteSink:
    """An `OutputStream` over a plain callable (what a filter writes into)."""

    __slots__ = ("_write",)

    def __init__(self, write: Callable[[bytes], None]) -> None:
        self._write = write

    def write(self, data: bytes) -> None:
        self._write(data)

    def close(self) -> None:
        return None


def filtered(ctx: ToolContext, write: Callable[[bytes], None]) -> OutputStream:
    """A stream into `write` through the call's output filter (none: straight through)."""
    sink = ByteSink(write)
    return ctx.output_filter(sink) if ctx.output_filter is not None else sink


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolContext:
    """Everything one tool call may use: made fresh by the engine for each call, frozen.

    Middleware that needs to change it (hooks set `env_source`, masking wraps `open_output`)
    returns a changed copy (`dataclasses.replace`) which the engine hands to the later layers
    and the tool; nothing writes into a context, so calls that run concurrently cannot see each
    other's changes. Tools must not keep it beyond the call (a background command keeps only
    the stream it opened).

    Frozen is shallow on purpose in one place: `todos` is the session's task list, which the
    todo tools exist to change, so it is the session's own mutable list, shared by reference.
    `env` is typed read-only; a layer that adds variables builds its own dict.
    """

    call_id: str  # the tool call this context belongs to
    runtime: Runtime
    workspace_id: str
    workspace_name: str
    project_path: str  # on the user's machine, even for remote runtimes
    scratch_dir: str  # local directory for spill files and other scratch output
    env: Mapping[str, str]  # the XUM_* environment (and project secrets) for commands
    todos: list[TodoItem] = field(default_factory=list)  # the session's task list (mutable)
    # Directories a file edit may touch besides the workspace (scratch, temp).
    extra_write_roots: tuple[str, ...] = ()
    # Plan mode: file edits may only touch this file (None outside plan mode).
    plan_file: str | None = None
    # `xum run` only: lets the agent choose the process exit code.
    set_exit_code: Callable[[int, str], None] | None = None
    # Live output for UIs (None: nobody watches, and tools work the same). The result still
    # carries the bounded text; the stream is a best-effort view of it while the call runs.
    open_output: OutputOpener | None = None
    # What a command's kept output passes through before its result and spill file (masking).
    output_filter: OutputFilter | None = None
    # The session's children (the task tools); None where sub-agents are not available.
    subagents: SubAgentHost | None = None
    # The session's background bash processes; None where they are not available.
    background: BackgroundProcesses | None = None
    # A file bash sources before each script, in the same shell (`.xum/tool_env`); set by
    # the workspace's hook middleware, in the runtime's namespace.
    env_source: str | None = None
    # ask_user_question: reaches the user (the server provides it); None when nobody is there.
    ask_user: AskUser | None = None
    # The skill tools' access to the workspace's skills; None when skills are not available.
    skills: SkillAccess | None = None
    # Agent ids the task tool may start from this session (plan mode: only "explore"); None:
    # any agent whose definition allows it.
    spawnable_agents: frozenset[str] | None = None
    # The goal tools' access to the session's goal; None where goals are not offered.
    goals: GoalAccess | None = None
    # The session's MCP servers and the MCP tools this agent may use; None without MCP.
    mcp: McpAccess | None = None
    # The user approved running this call's command outside the sandbox (a sandbox escalation,
    # for this one call); set by the approval middleware, read by the sandbox's.
    sandbox_escalated: bool = False


class Tool(ABC):
    name: ClassVar[str]
    description: ClassVar[str]
    Input: ClassVar[type[ToolInput]]
    read_only: ClassVar[bool] = False
    risk: ClassVar[RiskTier] = "read"
    # What a call of this tool loads on its way (its approval check, the process runner): the
    # tool prewarm thread (`xum.tools.registry.prewarm`) imports each module, and calls the
    # `module:function` entries (no arguments), with the tool.
    warm: ClassVar[tuple[str, ...]] = ()

    @abstractmethod
    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        """Execute with validated `args` (an instance of `Input`)."""

    def summary(self, args: Any) -> str:
        """The key argument, for one-line displays (`bash: make test`)."""
        return ""
