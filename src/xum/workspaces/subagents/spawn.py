"""Checking a `task` call before anything is made: what the children will run, and where.

`plan_spawn` refuses a call that cannot work (the nesting depth cap, an unknown or
non-runnable agent, an unknown model or thinking level, `isolation: "fork"` from a checkout
that cannot fork children (SSH) or has no git HEAD to branch from) before a workspace exists, and settles the children's agent,
model route and thinking level: the task call's, else the agent's own `ai` defaults, else the
parent's. The manager (`subagents.manager`) then makes the children from the plan.

An agent id that names an external ACP agent (config.json `externalAgents`) makes an external
child: no route or thinking level of its own (`model`/`thinking` given with it are refused). It
runs where xum's own child would (an SSH parent's child on the host, in the shared checkout; a
container parent's fork child in a container of its own). With `agents` (best of N across
agents) each entry gets its child, titled `Title (i/n, <agent>)`.
"""

from __future__ import annotations

import asyncio
import dataclasses
from dataclasses import dataclass
from typing import TYPE_CHECKING

from xum.core.clock import now_ms
from xum.engine.route import ModelRoute, resolve_route
from xum.llm.thinking import parse_thinking
from xum.llm.types import ThinkingLevel
from xum.tools.tasking import Isolation, SubAgentError
from xum.workspaces.checkouts.factory import session_checkout
from xum.workspaces.checkouts.protocol import Checkout

if TYPE_CHECKING:
    from xum.context.agents import ResolvedAgent
    from xum.context.workspace import WorkspaceContext
    from xum.tools.taskrecords import TaskSpec
    from xum.workspaces.subagents.host import ParentInfo


@dataclass
class ChildPlan:
    """One child of a `task` call: its title and what it runs."""

    title: str
    agent_id: str
    agent: ResolvedAgent | None  # xum's own agent; None for an external one
    external: str | None  # the name of an external ACP agent (config.json `externalAgents`)
    route: ModelRoute  # for an external child, the parent's (recorded, never used)
    thinking: ThinkingLevel


@dataclass
class SpawnPlan:
    """What one `task` call starts: n children alike but for their titles, or with `agents`,
    one child per listed agent."""

    children: list[ChildPlan]
    parent_checkout: Checkout
    is_git: bool  # whether the parent's checkout is a git repository
    fork_base: str | None  # the parent's HEAD, where fork children branch from
    group: str | None  # the best-of batch id (n > 1)
    isolation: Isolation  # the call's, or `none` for a defaulted fork that cannot be made


async def plan_spawn(
    parent: ParentInfo, spec: TaskSpec, *, depth: int, max_depth: int
) -> SpawnPlan:
    """Check the call made from a session at nesting `depth` (see the module docstring)."""
    from xum.context.workspace import WorkspaceContext

    if depth >= max_depth:
        raise SubAgentError(
            f"the task nesting depth limit ({max_depth}) is reached: this "
            "workspace cannot start sub-agents; do the work yourself"
        )
    checkout, is_git, fork_base = await asyncio.to_thread(_git_state, parent)
    group = f"best-{now_ms():x}" if spec.n > 1 else None
    # An unknown or non-runnable agent is refused before anything is created; a fork child
    # looks its agent up again in its own checkout when its session opens (one that shares
    # this checkout keeps what was found here).
    lookup = WorkspaceContext.for_workspace(
        parent.runtime,
        project_path=parent.workspace.project_path,
        workspace_name=parent.workspace.name,
        is_git=is_git,
    )
    ids = list(spec.agents) if spec.agents else [spec.agent_id] * spec.n
    known: dict[str, ChildPlan] = {}
    for agent_id in dict.fromkeys(ids):
        known[agent_id] = await _child_plan(parent, lookup, spec, agent_id)
    isolation: Isolation = spec.isolation
    if isolation == "fork" and not checkout.forks_children and not spec.isolation_given:
        isolation = "none"  # a scratch chat: its sub-agents work in its folder
    if isolation == "fork":
        if not checkout.forks_children:
            raise SubAgentError(
                f"isolation 'fork' is not available for {checkout.kind} workspaces: "
                'pass isolation: "none" to run the sub-agent in your own checkout'
            )
        if fork_base is None:
            raise SubAgentError(
                "isolation 'fork' needs a git repository with at least one commit (the "
                "child branches from your HEAD); commit first, or use isolation 'none' for "
                "read-only work"
            )
    total = len(ids)
    children = [
        dataclasses.replace(known[agent_id], title=_title(spec, i, total, agent_id))
        for i, agent_id in enumerate(ids)
    ]
    return SpawnPlan(children, checkout, is_git, fork_base, group, isolation)


def _title(spec: TaskSpec, i: int, total: int, agent_id: str) -> str:
    if total == 1:
        return spec.title
    if spec.agents:
        return f"{spec.title} ({i + 1}/{total}, {agent_id})"
    return f"{spec.title} ({i + 1}/{total})"


async def _child_plan(
    parent: ParentInfo, lookup: WorkspaceContext, spec: TaskSpec, agent_id: str
) -> ChildPlan:
    """What a child running `agent_id` runs: an external agent configured under that name, or
    xum's agent with its model route and thinking level (see the module docstring)."""
    from xum.workspaces.subagents.agents import external_agent_names, runnable_agent

    if agent_id in await asyncio.to_thread(external_agent_names):
        given = [
            name for name, value in (("model", spec.model), ("thinking", spec.thinking)) if value
        ]
        if given:
            raise SubAgentError(
                f"{' and '.join(given)} cannot be given for the external agent {agent_id!r}: it "
                "picks its own model; omit them (set its model in its own configuration)"
            )
        return ChildPlan(spec.title, agent_id, None, agent_id, parent.route, parent.thinking)
    agent = await runnable_agent(lookup, agent_id)
    route = parent.route
    model = spec.model or agent.ai_model
    if model:
        try:
            route = resolve_route(model)
        except Exception as exc:  # an unknown model, a provider without a key
            origin = "" if spec.model else f" (ai.model of the {agent.id!r} agent)"
            raise SubAgentError(f"model {model!r}{origin}: {exc}") from None
    level = spec.thinking or agent.ai_thinking
    try:
        thinking = (
            parse_thinking(level, route.provider, route.model_id) if level else parent.thinking
        )
    except Exception as exc:
        origin = "" if spec.thinking else f" (ai.thinkingLevel of the {agent.id!r} agent)"
        raise SubAgentError(f"thinking {level!r}{origin}: {exc}") from None
    return ChildPlan(spec.title, agent.id, agent, None, route, thinking)


def _git_state(parent: ParentInfo) -> tuple[Checkout, bool, str | None]:
    """The parent's checkout, whether it is in git, and its HEAD commit (the fork point)."""
    checkout = session_checkout(parent.workspace)
    is_git = checkout.is_git()
    return checkout, is_git, checkout.fork_point() if is_git else None
