"""How a sub-agent gets its agent: the same discovery and context as any workspace.

A child's agentId is looked up like a top-level session's agent (`xum.context.agents`: the
checkout's `.xum/agents` > `$XUM_ROOT/agents` > built-in), read through the child's own runtime,
so a fork child sees the agent files of the commit it was forked from. The child's session runs
on a `WorkspaceContext` of its checkout (`WorkspaceContext.for_workspace`, as every session's)
with a sub-agent `AgentSelection`, which gives it the instruction files, the skills index and the
runtime restrictions for sub-agents (no `ask_user_question`, `agent_report` on, the task tools
off at the depth cap).

Only agents with `subagent.runnable` may be started; any other id is refused with the list of
those that may, which includes the external ACP agents of config.json (`externalAgents`): a
child may run one of those instead of xum's engine.
"""

from __future__ import annotations

from xum.context.agents import AgentError, ResolvedAgent
from xum.context.workspace import AgentSelection, WorkspaceContext, runnable_agents
from xum.tools.tasking import SubAgentError


def child_selection(
    agent_id: str, *, depth: int, max_depth: int, best_of: tuple[int, int] | None = None
) -> AgentSelection:
    return AgentSelection(
        agent_id=agent_id,
        subagent=True,
        task_depth=depth,
        max_task_depth=max_depth,
        best_of=best_of if best_of is not None and best_of[1] > 1 else None,
    )


async def runnable_agent(context: WorkspaceContext, agent_id: str) -> ResolvedAgent:
    """The agent `agent_id` resolves to in `context`. SubAgentError when it is unknown, disabled,
    broken or not runnable as a sub-agent; the message lists the agents that are."""
    catalog, _ = await context.agent_catalog()

    def runnable() -> str:
        names = [a.id for a in runnable_agents(catalog)]
        names += [f"{name} (external)" for name in external_agent_names()]
        return ", ".join(names) or "none"

    try:
        agent = catalog.resolve(agent_id)
    except AgentError as exc:
        raise SubAgentError(
            f"{exc.message}; agents that can run as sub-agents: {runnable()}"
        ) from None
    if not agent.runnable:
        raise SubAgentError(
            f"the {agent_id!r} agent cannot run as a sub-agent (its definition lacks "
            f"`subagent.runnable: true`); use one of: {runnable()}"
        )
    return agent


def external_agent_names() -> list[str]:
    """The external ACP agents configured in config.json, sorted (none when it cannot be
    read: a broken entry is reported where external agents are opened)."""
    from xum.core.errors import XumError
    from xum.store.config import read_config
    from xum.workspaces.external.definitions import external_agents

    try:
        return sorted(external_agents(read_config()))
    except XumError:
        return []
