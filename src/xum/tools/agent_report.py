"""agent_report: a sub-agent's incremental report, which wakes its parent."""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field

from xum.tools.base import Tool, ToolContext, ToolResult, error
from xum.tools.input import ToolInput
from xum.tools.tasking import SubAgentError

MAX_REPORT_CHARS = 64 * 1024


class AgentReportInput(ToolInput):
    reportMarkdown: str = Field(  # the documented (camelCase) parameter name
        description="The report, in Markdown: findings, status, or questions for the parent."
    )
    title: str | None = Field(default=None, description="A short heading for the report.")


class AgentReportTool(Tool):
    name = "agent_report"
    description = (
        "Send your parent agent a report now, without ending your work: an important finding, "
        "a status update, or questions when the brief is missing something you cannot infer. "
        "It wakes a parent waiting on you. You may call it several times; your final message "
        "still ends the task."
    )
    Input: ClassVar[type[ToolInput]] = AgentReportInput
    read_only = False

    async def run(self, args: AgentReportInput, ctx: ToolContext) -> ToolResult:
        if ctx.subagents is None:
            return error("agent_report is only available to sub-agents")
        text = args.reportMarkdown.strip()
        if not text:
            return error("the report is empty")
        if len(text) > MAX_REPORT_CHARS:
            return error(
                f"the report is {len(text):,} characters; keep it under {MAX_REPORT_CHARS:,} "
                "(put long material in a file and name it)"
            )
        try:
            ctx.subagents.report(text, (args.title or "").strip() or None)
        except SubAgentError as exc:
            return error(str(exc))
        return ToolResult(output="Report delivered to the parent.", meta={"chars": len(text)})
