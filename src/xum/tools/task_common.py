"""Shared by the task tools: waiting on children and background processes, and rendering them.

A finished child renders as a block whose first line is a machine-readable JSON header
(status, end reason, turns, steps, tokens, cost, elapsed) followed by its final message:

    <task id="3f9c0a1b2e" title="Reviewer" agent="exec" status="reported">
    header: {"status":"completed","end_reason":"completed","turns":1,...}
    ...the child's final message...
    </task>
"""

from __future__ import annotations

import html
import time
from collections.abc import Callable, Sequence
from typing import Any

import orjson

from xum.tools.background import BackgroundProcess, BackgroundProcesses, BashRead
from xum.tools.base import ToolContext
from xum.tools.bounds import clip_middle
from xum.tools.tasking import (
    ChangeSignal,
    Report,
    SubAgentError,
    TaskView,
    is_bash_task,
    wait_any,
)

# A child's final message or report shown to the parent keeps its head and tail beyond this.
RESULT_HEAD_BYTES = 12 * 1024
RESULT_TAIL_BYTES = 12 * 1024


def _attr(value: object) -> str:
    return html.escape(str(value), quote=True)


def _clip(text: str, where: str) -> str:
    return clip_middle(
        text.encode("utf-8"),
        head_bytes=RESULT_HEAD_BYTES,
        tail_bytes=RESULT_TAIL_BYTES,
        where=where,
    )


def render_reports(reports: Sequence[Report]) -> list[str]:
    out = []
    for report in reports:
        title = f' title="{_attr(report.title)}"' if report.title else ""
        body = _clip(report.markdown, "the child's session log has the whole report")
        out.append(f"<report{title}>\n{body.rstrip()}\n</report>")
    return out


def render_view(view: TaskView) -> str:
    group = f' candidate="{view.group_index}/{view.group_total}"' if view.group_total > 1 else ""
    lines = [
        f'<task id="{_attr(view.task_id)}" title="{_attr(view.title)}" '
        f'agent="{_attr(view.agent_id)}" status="{view.status}"{group}>'
    ]
    if view.header is not None and not view.active:
        lines.append("header: " + orjson.dumps(view.header).decode())
    lines.extend(render_reports(view.reports))
    if view.active:
        lines.append(f"(still {view.status})")
    elif view.result:
        lines.append(_clip(view.result, "the child's session log has the whole message").rstrip())
    else:
        lines.append("(the sub-agent ended without a final message)")
    lines.append("</task>")
    return "\n".join(lines)


def view_meta(view: TaskView) -> dict[str, Any]:
    return {
        "task_id": view.task_id,
        "kind": "subagent",
        "title": view.title,
        "agent_id": view.agent_id,
        "status": view.status,
        "isolation": view.isolation,
        "workspace_name": view.workspace_name,
        "branch": view.branch,
        "group": view.group,
        "header": view.header,
        "reports": len(view.reports),
    }


def render_bash(read: BashRead) -> str:
    attrs = f'id="{_attr(read.task_id)}" name="{_attr(read.display_name)}" status="{read.status}"'
    if read.exit_code is not None:
        attrs += f' exit_code="{read.exit_code}"'
    if read.signal is not None:
        attrs += f' signal="{read.signal}"'
    body = read.output if read.new_bytes else "(no new output)"
    return f"<bash {attrs}>\n{body.rstrip()}\n</bash>"


def bash_meta(read: BashRead) -> dict[str, Any]:
    return {
        "task_id": read.task_id,
        "kind": "bash",
        "display_name": read.display_name,
        "status": read.status,
        "exit_code": read.exit_code,
        "signal": read.signal,
        "new_bytes": read.new_bytes,
        "missed_bytes": read.missed_bytes,
        "total_bytes": read.total_bytes,
        "elapsed_s": read.elapsed_s,
        "spill_path": read.spill_path,
    }


class Awaitables:
    """The ids one call waits on, resolved against the session's children and processes."""

    def __init__(self, ctx: ToolContext, task_ids: Sequence[str]) -> None:
        self.host = ctx.subagents
        self.background = ctx.background
        self.children: list[str] = []
        self.processes: list[BackgroundProcess] = []
        self.unknown: list[str] = []
        self.order: list[str] = []
        for task_id in dict.fromkeys(task_ids):  # de-duplicated, in order
            if is_bash_task(task_id):
                proc = self.background.get(task_id) if self.background else None
                if proc is None:
                    self.unknown.append(task_id)
                    continue
                self.processes.append(proc)
            elif self.host is not None and self._is_child(task_id):
                self.children.append(task_id)
            else:
                self.unknown.append(task_id)
                continue
            self.order.append(task_id)

    def _is_child(self, task_id: str) -> bool:
        assert self.host is not None
        try:
            self.host.view(task_id)
        except SubAgentError:
            return False
        return True

    @property
    def count(self) -> int:
        return len(self.children) + len(self.processes)

    def ready_count(self, *, finished_only: bool = False) -> int:
        n = 0
        if self.host is not None:
            for task_id in self.children:
                if finished_only:
                    n += not self.host.view(task_id).active
                else:
                    n += self.host.is_ready(task_id)
        for proc in self.processes:
            n += proc.done if finished_only else BackgroundProcesses.is_ready(proc)
        return n

    def signals(self) -> list[ChangeSignal]:
        out = []
        if self.children and self.host is not None:
            out.append(self.host.signal)
        if self.processes and self.background is not None:
            out.append(self.background.signal)
        return out

    async def wait(
        self, min_ready: int, timeout_s: float | None, *, finished_only: bool = False
    ) -> bool:
        """Until `min_ready` are ready (finished, or with news) or the timeout; True if met."""
        return await wait_until(
            lambda: self.ready_count(finished_only=finished_only) >= min_ready,
            self.signals(),
            timeout_s,
        )

    def render(self) -> tuple[list[str], list[dict[str, Any]]]:
        """Read every awaited task (consuming new reports and output) in the asked order."""
        blocks: list[str] = []
        metas: list[dict[str, Any]] = []
        procs = {p.task_id: p for p in self.processes}
        for task_id in self.order:
            if task_id in procs:
                read = procs[task_id].take()
                blocks.append(render_bash(read))
                metas.append(bash_meta(read))
            else:
                assert self.host is not None
                view = self.host.view(task_id, consume_reports=True)
                blocks.append(render_view(view))
                metas.append(view_meta(view))
        return blocks, metas


async def wait_until(
    ready: Callable[[], bool], signals: Sequence[ChangeSignal], timeout_s: float | None
) -> bool:
    deadline = None if timeout_s is None else time.monotonic() + timeout_s
    while not ready():
        remaining = None if deadline is None else deadline - time.monotonic()
        if remaining is not None and remaining <= 0:
            return False
        futures = [s.future() for s in signals]
        if remaining is None:
            await wait_any(futures, 3600.0)
        else:
            await wait_any(futures, remaining)
    return True
