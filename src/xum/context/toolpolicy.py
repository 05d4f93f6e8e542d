"""From an agent's chain of `tools` blocks to the tools a session offers and the one it must call.

Patterns are regular expressions matched against whole tool names (`task_.*` matches
`task_await`, not `task`). Per layer, base first: every `add` enables what it matches, then
every `remove` disables what it matches, so a child can undo its base either way. A layer with
`require` then sets the required tool to its last literal entry (entries with regex syntax are
dropped) and enables it, replacing whatever the base required. A required tool that a later
layer removes is no longer required: the agent must be allowed to call what it is forced to
call. When no layer has a `tools` block, the agent has no tools.

The runtime restrictions come last and no frontmatter can undo them. They are expressed by tool
name over whatever tools exist, so they take effect by themselves when a tool family appears
(the task tools, `agent_report`, MCP tools):

| condition                         | effect                                            |
|-----------------------------------|---------------------------------------------------|
| sub-agent                         | `ask_user_question` off                           |
| sub-agent, plan-like chain        | `propose_plan` required, `agent_report` off       |
| sub-agent, other chains           | `agent_report` on, `propose_plan` off             |
| task depth >= the maximum         | `task` and `task_.*` off                          |
| plan-like chain                   | may spawn only `explore`; file edits only to the plan file |

A chain is plan-like when its resolved layers enable `propose_plan`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import lru_cache

from xum.context.agents import ToolLayer

PLAN_TOOL = "propose_plan"
ASK_TOOL = "ask_user_question"
REPORT_TOOL = "agent_report"
TASK_TOOL = "task"
PLAN_SPAWNABLE = frozenset({"explore"})

_LITERAL = re.compile(r"^[A-Za-z0-9_:-]+$")
_TASK_FAMILY = re.compile(r"^task(?:_.*)?$")


@dataclass(frozen=True, slots=True)
class PolicyContext:
    """Where the session sits in a task tree (what tool policies depend on)."""

    subagent: bool = False
    task_depth: int = 0
    max_task_depth: int | None = None  # None: no limit known


@dataclass(frozen=True, slots=True)
class ToolPolicy:
    """The tools an agent gets, resolved from its definition."""

    tools: tuple[str, ...]  # in the order of `available`
    required: str | None  # the tool the agent must call before its turn ends
    plan_like: bool
    spawnable_agents: frozenset[str] | None  # None: any runnable agent
    plan_file_only: bool  # file edits may only touch the plan file


@lru_cache(maxsize=512)
def _compiled(pattern: str) -> re.Pattern[str] | None:
    try:
        return re.compile(f"(?:{pattern})")
    except re.error:
        return None


def _matching(pattern: str, names: Sequence[str], warn: Callable[[str], None]) -> list[str]:
    if _LITERAL.match(pattern):  # most entries name one tool: no regex to compile
        return [name for name in names if name == pattern]
    compiled = _compiled(pattern)
    if compiled is None:
        warn(f"tool pattern {pattern!r} is not a valid regular expression; ignored")
        return []
    return [name for name in names if compiled.fullmatch(name)]


def resolve_tool_policy(
    layers: Sequence[ToolLayer | None],
    available: Sequence[str],
    context: PolicyContext = PolicyContext(),
    warn: Callable[[str], None] = lambda _message: None,
) -> ToolPolicy:
    enabled: set[str] = set()
    required: str | None = None
    declared = False
    for layer in layers:
        if layer is None:
            continue
        declared = True
        for pattern in layer.add:
            enabled.update(_matching(pattern, available, warn))
        for pattern in layer.remove:
            enabled.difference_update(_matching(pattern, available, warn))
        if required is not None and required not in enabled:
            required = None  # this layer removed the tool an earlier layer required
        if layer.require is not None:
            literal = [name for name in layer.require if _LITERAL.match(name)]
            for dropped in set(layer.require) - set(literal):
                warn(f"tools.require entry {dropped!r} is not a literal tool name; ignored")
            required = literal[-1] if literal else None
            if required is not None:
                if required in available:
                    enabled.add(required)
                else:
                    required = None
    if not declared:
        return ToolPolicy((), None, False, None, False)

    plan_like = PLAN_TOOL in enabled
    if context.subagent:
        enabled.discard(ASK_TOOL)
        if plan_like:
            enabled.discard(REPORT_TOOL)
            if PLAN_TOOL in available:
                required = PLAN_TOOL
        else:
            if REPORT_TOOL in available:
                enabled.add(REPORT_TOOL)
            enabled.discard(PLAN_TOOL)
    if context.max_task_depth is not None and context.task_depth >= context.max_task_depth:
        enabled.difference_update(n for n in available if _TASK_FAMILY.match(n))
    if required is not None and required not in enabled:
        required = None  # a hard restriction wins over `require`
    return ToolPolicy(
        tools=tuple(name for name in available if name in enabled),
        required=required,
        plan_like=plan_like,
        spawnable_agents=PLAN_SPAWNABLE if plan_like else None,
        plan_file_only=plan_like,
    )
