"""What every tool is and what it receives.

A tool declares its input as a pydantic model (optional fields are nullable so OpenAI strict
mode accepts the schema), whether it only reads (read-only tools in one step may run
concurrently), and an async `run`. Tools never raise for expected failures: they return a
`ToolResult` with `is_error=True` and a message the model can act on. An exception escaping
`run` is a bug; the engine still turns it into an error result so the turn continues.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

from xum.runtime.base import Runtime

if TYPE_CHECKING:
    from xum.tools.input import ToolInput

TodoStatus = Literal["pending", "in_progress", "completed"]


def __getattr__(name: str) -> Any:
    # `from xum.tools.base import ToolInput` keeps working for tool modules, while importing
    # this module (the engine does, on every start) stays free of pydantic.
    if name == "ToolInput":
        from xum.tools.input import ToolInput

        return ToolInput
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


@dataclass(slots=True)
class ToolResult:
    output: str  # what the model sees; always bounded
    is_error: bool = False
    meta: dict[str, Any] = field(default_factory=dict)  # structured facts for UIs and the log


def error(message: str, **meta: Any) -> ToolResult:
    return ToolResult(output=message, is_error=True, meta=meta)


@dataclass(slots=True)
class TodoItem:
    content: str
    status: TodoStatus


@dataclass(slots=True)
class ToolContext:
    """Everything a tool may use. Built by the engine per call; tools must not keep it."""

    runtime: Runtime
    workspace_id: str
    workspace_name: str
    project_path: str  # on the user's machine, even for remote runtimes
    scratch_dir: str  # local directory for spill files and other scratch output
    env: dict[str, str]  # the XUM_* environment (and later project secrets) for commands
    todos: list[TodoItem] = field(default_factory=list)  # the session's task list
    # Directories a file edit may touch besides the workspace (scratch, temp).
    extra_write_roots: tuple[str, ...] = ()
    # Plan mode: file edits may only touch this file (None outside plan mode).
    plan_file: str | None = None
    # `xum run` only: lets the agent choose the process exit code.
    set_exit_code: Callable[[int, str], None] | None = None
    # Live output for UIs: bash feeds its merged stdout/stderr here as it arrives (unbounded;
    # the sink decides what to keep). The result still carries the bounded text.
    on_output: Callable[[bytes], None] | None = None


class Tool(ABC):
    name: ClassVar[str]
    description: ClassVar[str]
    Input: ClassVar[type[ToolInput]]
    read_only: ClassVar[bool] = False

    @abstractmethod
    async def run(self, args: Any, ctx: ToolContext) -> ToolResult:
        """Execute with validated `args` (an instance of `Input`)."""

    def summary(self, args: Any) -> str:
        """The key argument, for one-line displays (`bash: make test`)."""
        return ""
