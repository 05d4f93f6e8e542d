"""The one place sub-agents look up their agent: system prompt and tool list for a child.

It resolves xum's built-in agent definitions (`exec`, `explore`, ...) with the agent module's
catalog and tool policy, including the runtime restrictions for sub-agents (no
`ask_user_question`, `agent_report` on, the task tools off at the depth cap). Project and user
agent files are not consulted yet: when sessions take their agent from
`xum.context.workspace` (an `AgentSelection` with `subagent=True` and the task depth), this
module shrinks to building that selection.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cache

from xum.context.agents import SCOPE_BUILTIN, AgentCatalog, AgentError, definition_from_data
from xum.context.builtin import builtin_index
from xum.context.environment import environment_block
from xum.context.prelude import PRELUDE
from xum.context.toolpolicy import PolicyContext, resolve_tool_policy
from xum.runtime.base import RuntimeKind
from xum.tools import registry
from xum.tools.tasking import SubAgentError


@dataclass(frozen=True)
class ChildAgent:
    id: str
    name: str
    system_prompt: str
    tools: tuple[str, ...]
    model: str | None  # the definition's default model, if any
    thinking: str | None
    skip_init_hook: bool = False


@cache
def _catalog() -> AgentCatalog:
    catalog = AgentCatalog()
    for entry in builtin_index()["agents"]:
        definition = definition_from_data(
            entry["id"], SCOPE_BUILTIN, "built-in", entry["data"], entry["body"], lambda _m: None
        )
        catalog.add(definition)
    return catalog


def runnable_agents() -> list[str]:
    catalog = _catalog()
    out = []
    for agent_id in catalog.ids():
        try:
            if catalog.resolve(agent_id).runnable:
                out.append(agent_id)
        except AgentError:
            continue
    return out


def resolve_child_agent(
    agent_id: str,
    *,
    runtime_kind: RuntimeKind,
    is_git: bool,
    depth: int,
    max_depth: int,
    best_of: tuple[int, int] | None = None,
) -> ChildAgent:
    """The agent a child at `depth` runs. SubAgentError when it is unknown or not runnable."""
    catalog = _catalog()
    try:
        agent = catalog.resolve(agent_id)
    except AgentError as exc:
        raise SubAgentError(
            f"{exc.message}; agents that can run as sub-agents: {', '.join(runnable_agents())}"
        ) from None
    if not agent.runnable:
        raise SubAgentError(
            f"the {agent_id!r} agent cannot run as a sub-agent; use one of: "
            + ", ".join(runnable_agents())
        )
    policy = resolve_tool_policy(
        agent.tool_layers,
        registry.tool_names(),
        PolicyContext(subagent=True, task_depth=depth, max_task_depth=max_depth),
    )
    body = agent.body
    if agent.append_prompt:
        body = f"{body}\n\n{agent.append_prompt}" if body else agent.append_prompt
    if best_of is not None and best_of[1] > 1:
        body += (
            f"\n\nYou are candidate {best_of[0]} of {best_of[1]}: other sub-agents work on the "
            "same brief independently and the parent compares the results. Do your own best "
            "attempt; do not start another best-of batch unless the brief asks for one."
        )
    block = f'<agent id="{agent.id}" name="{agent.name}">\n{body}\n</agent>'
    system = "\n\n".join([PRELUDE, environment_block(runtime_kind, is_git=is_git), block])
    return ChildAgent(
        id=agent.id,
        name=agent.name,
        system_prompt=system,
        tools=policy.tools,
        model=agent.ai_model,
        thinking=agent.ai_thinking,
        skip_init_hook=agent.skip_init_hook,
    )
