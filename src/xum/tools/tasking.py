"""What the task tools see of sub-agents: the host protocol, its data, and a change signal.

The task tools (`task`, `task_await`, ...) live in this layer (L2), but sub-agents are
workspaces, which live in L5. So the interface is defined here and implemented above: the
workspaces layer passes a `SubAgentHost` down through the engine into `ToolContext.subagents`.
A host is scoped to one session: it knows that session's workspace and its nesting depth, and
every id it accepts is one of that workspace's own children.

Kept free of pydantic and of asyncio work at import time: the engine imports it on every start.
The records the task tools exchange with a host (`TaskSpec`, `TaskView`, `Report`,
`PatchOutcome`) live in `xum.tools.taskrecords` and are re-exported here; they are imported
when first used, since most sessions never start a sub-agent.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal, Protocol

if TYPE_CHECKING:  # re-exported (see __getattr__ below)
    from xum.tools.taskrecords import PatchOutcome as PatchOutcome
    from xum.tools.taskrecords import Report as Report
    from xum.tools.taskrecords import TaskSpec as TaskSpec
    from xum.tools.taskrecords import TaskView as TaskView

# A child's lifecycle: queued (waiting for a concurrency slot) -> running -> one of the inactive
# states. `reported` means its turn ended normally; `interrupted` that it was stopped (task_stop,
# an interrupt); `failed` that it ended on an error, the budget, the step limit or a doom loop.
# An inactive child keeps its workspace and can be woken again with task_send_message.
TaskStatus = Literal["queued", "running", "reported", "interrupted", "failed"]
ACTIVE_STATUSES: frozenset[str] = frozenset({"queued", "running"})
TASK_STATUSES: tuple[str, ...] = ("queued", "running", "reported", "interrupted", "failed")

# The status in a finished child's result header. `partial` is an abnormal end (interrupted,
# error, budget, step limit) after which the child still had something to say: whatever it
# claims, the work did not finish normally.
ResultStatus = Literal["completed", "partial", "interrupted", "failed"]

Isolation = Literal["fork", "none"]
DispatchMode = Literal["tool-end", "turn-end"]

# Tools that need a sub-agent host. task_await, task_list and task_stop also serve background
# bash processes, so a session without a host still offers them when asked to.
HOST_TOOLS: frozenset[str] = frozenset(
    {"task", "task_send_message", "task_remove", "task_retitle", "task_apply_git_patch"}
)
CHILD_TOOLS: frozenset[str] = frozenset({"agent_report"})
TASK_TOOL_NAMES: tuple[str, ...] = (
    "task",
    "task_await",
    "task_list",
    "task_send_message",
    "task_stop",
    "task_remove",
    "task_retitle",
    "task_apply_git_patch",
)

BASH_TASK_PREFIX = "bash:"


def is_bash_task(task_id: str) -> bool:
    return task_id.startswith(BASH_TASK_PREFIX)


_RECORDS = frozenset({"PatchOutcome", "Report", "TaskSpec", "TaskView"})


def __getattr__(name: str) -> Any:
    if name in _RECORDS:
        from xum.tools import taskrecords

        return getattr(taskrecords, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class SubAgentError(Exception):
    """A refused task operation (unknown id, depth cap, bad model); the message is for the
    model, which can act on it."""


class ChangeSignal:
    """Wakes every waiter at the next change. Waiters re-check their condition afterwards, so a
    spurious wake-up costs one check and a missed one cannot happen (check, then wait, with no
    await in between)."""

    __slots__ = ("_waiters",)

    def __init__(self) -> None:
        self._waiters: list[asyncio.Future[None]] = []

    def notify(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.done():
                waiter.set_result(None)

    def future(self) -> asyncio.Future[None]:
        """A future resolved at the next `notify()`."""
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self._waiters.append(waiter)
        return waiter


async def wait_any(futures: Sequence[asyncio.Future[None]], timeout_s: float) -> None:
    """Wait until one of `futures` resolves or `timeout_s` passes; cancel the rest."""
    try:
        if futures:
            await asyncio.wait(futures, timeout=timeout_s, return_when=asyncio.FIRST_COMPLETED)
        else:
            await asyncio.sleep(timeout_s)
    finally:
        for fut in futures:
            if not fut.done():
                fut.cancel()


class SubAgentHost(Protocol):
    """A session's view of its children. Implemented by `xum.workspaces.subagents.manager`."""

    workspace_id: str
    depth: int  # 0 for a top-level workspace, 1 for its children, ...

    @property
    def signal(self) -> ChangeSignal:
        """Notified whenever one of this workspace's children changes or reports."""
        ...

    def offers(self, tool_name: str) -> bool:
        """Whether this session may be offered `tool_name` (depth cap, child-only tools)."""
        ...

    def note_cost(self, own_cost_usd: float) -> None:
        """The session reports its own running cost so the tree's total can be known."""
        ...

    def external_cost_usd(self) -> float:
        """Costs of the rest of this task tree (descendants, and for a child its ancestors and
        their other children), counted against a shared budget."""
        ...

    async def spawn(self, spec: TaskSpec) -> list[str]:
        """Create and start the child workspaces; the new task ids. Raises SubAgentError."""
        ...

    def children(self, *, include_inactive: bool = True) -> list[str]: ...

    def view(self, task_id: str, *, consume_reports: bool = False) -> TaskView:
        """Raises SubAgentError for an id that is not one of this workspace's children."""
        ...

    def is_ready(self, task_id: str) -> bool:
        """Finished, or holding a report the parent has not read yet."""
        ...

    async def send_message(self, task_id: str, message: str, *, dispatch: DispatchMode) -> str:
        """Steer a running child (after its current step, or after its turn) or wake an
        inactive one with a new turn. Returns what happened, in words."""
        ...

    async def stop(self, task_ids: Sequence[str]) -> list[TaskView]: ...

    def stop_nowait(self, task_ids: Sequence[str]) -> None:
        """Ask the children to stop without waiting (used while being cancelled)."""
        ...

    async def remove(self, task_ids: Sequence[str]) -> list[str]: ...

    def retitle(self, task_id: str, title: str) -> None: ...

    def report(self, markdown: str, title: str | None) -> None:
        """agent_report: the calling child's incremental report to its parent."""
        ...

    async def apply_patch(
        self,
        task_id: str,
        *,
        dry_run: bool,
        expected_head_sha: str | None,
        three_way: bool,
        force: bool,
    ) -> PatchOutcome: ...
