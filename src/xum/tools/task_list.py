"""task_list: this workspace's sub-agents and background processes."""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import Field

from xum.tools.background import BackgroundProcess
from xum.tools.base import Tool, ToolContext, ToolResult
from xum.tools.input import ToolInput
from xum.tools.tasking import ACTIVE_STATUSES

ListedStatus = Literal["queued", "running", "reported", "interrupted", "failed"]


class TaskListInput(ToolInput):
    statuses: list[ListedStatus] | None = Field(
        default=None,
        description=(
            "Statuses to include (default: the unfinished ones, queued and running). Add "
            "reported, interrupted and failed to find finished sub-agents you can reuse with "
            "task_send_message, for example after a restart."
        ),
    )


def _bash_status(proc: BackgroundProcess) -> str:
    """Background processes listed in the task vocabulary (their own status is shown too)."""
    own = proc.status
    if own == "running":
        return "running"
    if own == "stopped":
        return "interrupted"
    if own == "exited" and proc.result is not None and proc.result.exit_code == 0:
        return "reported"
    return "failed"


class TaskListTool(Tool):
    name = "task_list"
    description = (
        "List this workspace's sub-agents (id, title, agent, status, branch) and background "
        "bash processes (`bash:<id>`). By default only unfinished ones; pass statuses to see "
        "finished sub-agents too."
    )
    Input: ClassVar[type[ToolInput]] = TaskListInput
    read_only = True

    async def run(self, args: TaskListInput, ctx: ToolContext) -> ToolResult:
        wanted = set(args.statuses or ACTIVE_STATUSES)
        rows: list[dict[str, Any]] = []
        lines: list[str] = []
        if ctx.subagents is not None:
            for task_id in ctx.subagents.children():
                view = ctx.subagents.view(task_id)
                if view.status not in wanted:
                    continue
                group = (
                    f", candidate {view.group_index}/{view.group_total}"
                    if view.group_total > 1
                    else ""
                )
                branch = f", branch {view.branch}" if view.branch else ""
                lines.append(
                    f"- {view.task_id} [{view.status}] {view.title} ({view.agent_id}, "
                    f"{view.isolation}{branch}{group}, {view.turns} turn(s))"
                )
                rows.append(
                    {
                        "task_id": view.task_id,
                        "kind": "subagent",
                        "status": view.status,
                        "title": view.title,
                        "agent_id": view.agent_id,
                        "isolation": view.isolation,
                        "branch": view.branch,
                        "workspace_name": view.workspace_name,
                        "group": view.group,
                        "turns": view.turns,
                    }
                )
        if ctx.background is not None:
            for proc in ctx.background.processes(include_finished=True):
                status = _bash_status(proc)
                if status not in wanted:
                    continue
                unread = proc.ring.total - proc.cursor
                lines.append(
                    f"- {proc.task_id} [{status}: {proc.status}] {proc.display_name} "
                    f"({unread:,} unread bytes)"
                )
                rows.append(
                    {
                        "task_id": proc.task_id,
                        "kind": "bash",
                        "status": status,
                        "bash_status": proc.status,
                        "display_name": proc.display_name,
                        "unread_bytes": unread,
                    }
                )
        if not lines:
            shown = ", ".join(sorted(wanted))
            return ToolResult(output=f"No tasks with status {shown}.", meta={"tasks": []})
        return ToolResult(output="\n".join(lines), meta={"tasks": rows})
