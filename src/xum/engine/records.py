"""The plain records a session is built from and a turn ends with."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

from xum.core.messages import Usage
from xum.core.portblock import PortBlock
from xum.llm.types import ThinkingLevel
from xum.runtime.base import RuntimeKind

TurnReason = Literal["completed", "interrupted", "error", "budget", "max_steps", "doom_loop"]
QueueMode = Literal["step", "turn"]  # deliver after the running tool calls, or after the turn


class Interrupted(Exception):
    """Raised inside a turn when the user asked to stop (`AgentSession.interrupt`)."""


@dataclass(frozen=True)
class WorkspaceInfo:
    """The workspace a session runs in."""

    id: str
    name: str
    project_path: str
    path: str  # the workspace directory (in the runtime's namespace)
    runtime: RuntimeKind
    # The workspace's own ports (`XUM_PORT`, `XUM_PORTS`); None: it has none (or they are off).
    ports: PortBlock | None = None


@dataclass
class SessionSettings:
    """How a session runs: model settings, limits, mode."""

    # A fixed prompt and tool list, used when the session has no context provider (tests and
    # embedded uses); with one, the agent definition and the workspace decide both.
    system_prompt: str = ""
    tools: list[str] = field(default_factory=list)  # the tool names offered to the model
    thinking: ThinkingLevel = "medium"
    budget_usd: float | None = None
    max_steps: int = 200
    max_output_tokens: int | None = None
    mode: str = "exec"
    # The goal tools are offered (top-level sessions whose front-end drives continuations).
    goals: bool = False


@dataclass
class TurnResult:
    """How a turn ended, and what it cost."""

    turn_id: str
    reason: TurnReason
    text: str = ""  # the last assistant text of the turn
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0  # None: some reply had no known price
    steps: int = 0
    error: dict[str, str] | None = None
    agent: str = ""  # the agent that ran the turn
    plan_file: str | None = None  # plan mode: where the plan is
    plan_proposed: bool = False  # plan mode: propose_plan presented it during the turn
    kind: str = "agent"  # "compaction": a summarization turn; "command": /clear, nothing sent

    def after(self, earlier: TurnResult) -> TurnResult:
        """This turn with `earlier` (a compaction before it) added to its usage and cost."""
        self.usage.add(earlier.usage)
        if self.cost_usd is not None:
            self.cost_usd = None if earlier.cost_usd is None else self.cost_usd + earlier.cost_usd
        return self


def internal_error(exc: BaseException) -> dict[str, str]:
    """The error a turn ends with when something unexpected broke it (with where it broke)."""
    import traceback  # only when something broke

    where = traceback.extract_tb(exc.__traceback__)[-1:] if exc.__traceback__ else []
    location = f" (at {where[0].filename}:{where[0].lineno} in {where[0].name})" if where else ""
    return {
        "code": "internal_error",
        "kind": "internal",
        "message": f"the turn stopped on an unexpected error: {type(exc).__name__}: {exc}"
        + location,
        "hint": "this is a bug in xum or in an extension it runs (a hook, middleware or event "
        "consumer); the session log is intact and a new turn can continue; please report the "
        "message above",
    }
