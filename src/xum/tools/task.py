"""task: delegate work to sub-agents, each in its own child workspace."""

from __future__ import annotations

import asyncio
from typing import ClassVar, Literal

from pydantic import Field

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput
from xum.tools.task_common import Awaitables
from xum.tools.tasking import SubAgentError, TaskSpec

MAX_BEST_OF = 10


class TaskInput(ToolInput):
    agentId: str | None = Field(  # the documented (camelCase) parameter name
        default=None,
        description=(
            "The agent to run: `exec` (default; does the work and commits it), `explore` "
            "(read-only investigation that reports back), or another runnable agent of the "
            "project; the agents you can start are listed at the end of this tool's description."
        ),
    )
    title: str = Field(
        description=(
            "A short, reusable role name for the sub-agent, such as 'Reviewer' or 'Test "
            "fixer', not the whole assignment."
        )
    )
    prompt: str = Field(
        description=(
            "The complete brief: the goal, where to start, what done looks like. The sub-agent "
            "sees nothing of this conversation except this text."
        )
    )
    model: str | None = Field(
        default=None,
        description=(
            "Model for the sub-agent (an alias or provider:model). Omit unless the user asked "
            "for one: by default it uses the agent's own default model, else yours."
        ),
    )
    thinking: str | None = Field(
        default=None,
        description=(
            "Thinking level (off, low, medium, high, xhigh, max, or 0-9). Omit unless the "
            "user asked: by default the agent's own default level, else yours."
        ),
    )
    n: int | None = Field(
        default=None,
        ge=1,
        le=MAX_BEST_OF,
        description=(
            f"Best of n (at most {MAX_BEST_OF}): start n sub-agents on the same prompt "
            "independently and compare their results. Only for work without conflicting side "
            "effects. Omit for a single task."
        ),
    )
    agents: list[str] | None = Field(
        default=None,
        min_length=2,
        max_length=MAX_BEST_OF,
        description=(
            f"Best of N across agents (2 to {MAX_BEST_OF} agent ids, repeats allowed): one "
            "sub-agent per entry on the same prompt, to compare their results. Instead of "
            "agentId and n. Omit for a single task."
        ),
    )
    run_in_background: bool | None = Field(
        default=None,
        description=(
            "Return the task ids at once instead of waiting for the results; collect them with "
            "task_await. Use it to run several different tasks in parallel."
        ),
    )
    isolation: Literal["fork", "none"] | None = Field(
        default=None,
        description=(
            "`fork` (default): the sub-agent works in its own git worktree and branch made from "
            "your last commit (uncommitted changes are not included); bring its commits into "
            "your checkout with task_apply_git_patch. `none`: it works in your checkout, "
            "uncommitted changes included; use it only for read-only work."
        ),
    )


class TaskTool(Tool):
    name = "task"
    description = (
        "Delegate a self-contained piece of work to a sub-agent that runs in its own child "
        "workspace with its own context, and get back its result: a JSON header (status, end "
        "reason, turns, tokens, cost, elapsed) and its final message. status `partial` means it "
        "ended abnormally (stopped, error, budget, step limit) whatever its message claims. By "
        "default this waits for the result; with run_in_background it returns task ids to "
        "collect with task_await. A sub-agent stays available after it finishes: steer or "
        "reuse it with task_send_message, remove it with task_remove when done."
    )
    Input: ClassVar[type[ToolInput]] = TaskInput
    read_only = False
    risk = "execute"

    def summary(self, args: TaskInput) -> str:
        return args.title

    async def run(self, args: TaskInput, ctx: ToolContext) -> ToolResult:
        host = ctx.subagents
        if host is None:
            return error("sub-agents are not available in this session")
        picked = tuple(a.strip() for a in args.agents or ())
        if picked and args.n is not None:
            return error("give either n or agents, not both: agents already sets how many")
        if picked and args.agentId is not None:
            return error("give either agentId or agents, not both: list every agent in agents")
        spec = TaskSpec(
            agent_id=(args.agentId or "exec").strip(),
            title=args.title.strip() or "Sub-agent",
            prompt=args.prompt,
            model=args.model or None,
            thinking=args.thinking or None,
            n=len(picked) or args.n or 1,
            agents=picked,
            isolation=args.isolation or "fork",
            isolation_given=args.isolation is not None,
        )
        if not spec.prompt.strip():
            return error("the prompt is empty; give the sub-agent a complete brief")
        allowed = ctx.spawnable_agents
        refused = [
            a for a in spec.agents or (spec.agent_id,) if allowed is not None and a not in allowed
        ]
        if allowed is not None and refused:
            return error(
                f"this agent may only start {', '.join(sorted(allowed))} sub-agents, "
                f"not {refused[0]!r}"
            )
        try:
            ids = await host.spawn(spec)
        except SubAgentError as exc:
            return error(str(exc))
        if args.run_in_background:
            listed = ", ".join(ids)
            return ToolResult(
                output=(
                    f"Started {len(ids)} sub-agent{'s' if len(ids) > 1 else ''} in the "
                    f"background: {listed}. Collect results with task_await (task_ids "
                    f"{list(ids)}, min_completed {len(ids)} to wait for all)."
                ),
                meta={"task_ids": ids, "background": True},
            )
        waiting = Awaitables(ctx, ids)
        try:
            await waiting.wait(len(ids), None, finished_only=True)
        except asyncio.CancelledError:
            # The parent was interrupted while waiting: children started by this call stop too.
            host.stop_nowait(ids)
            raise
        blocks, metas = waiting.render()
        failed = all(m["header"] and m["header"]["status"] == "failed" for m in metas)
        return ToolResult(output="\n\n".join(blocks), is_error=failed, meta={"tasks": metas})
