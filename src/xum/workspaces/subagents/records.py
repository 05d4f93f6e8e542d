"""Sub-agent task records: a child's live state (`Child`) and its persisted form (`ChildRecord`).

Every child is a workspace whose registry record has `parent_id` set and keeps the task's
fields in its `extra`: `task_depth`, `task_isolation`, `task_status`, the fork point
(`task_fork_base`) or whether the shared checkout is in git (`task_git`), the best-of batch
(`task_group`, `task_group_index`, `task_group_total`), and once a turn ended its outcome
(`task_header`, `task_result`, `task_turns`). `ChildRecord` is the one place those fields are
written and read back, so a later process sees the children an earlier one left exactly as it
recorded them (an active status whose process is gone reads as interrupted).

`Child` adds what only a live process has: the session, its host, the runtime, the queued
turns and the driver task, usage and cost, reports. `Child.view()` is how a tool sees it.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from xum.llm.types import Usage
from xum.store import registry
from xum.store.registry import WorkspaceRecord
from xum.tools.tasking import ACTIVE_STATUSES, Isolation, TaskStatus

if TYPE_CHECKING:
    from collections.abc import Sequence

    from xum.engine.agent import TurnResult
    from xum.runtime.base import Runtime
    from xum.store.sessionlog import SessionLog
    from xum.tools.taskrecords import Report, TaskView
    from xum.workspaces.init_hook import InitHookRun
    from xum.workspaces.subagents.opener import ChildSession, OpenedSession

MAX_RESULT_KEPT = 65536  # characters of a child's final message kept in its record


@dataclass(frozen=True)
class ChildRecord:
    """A child as its workspace record keeps it (see the module docstring)."""

    depth: int
    isolation: Isolation
    status: TaskStatus  # read back: never an active one (its process is gone)
    fork_base: str | None = None  # isolation "fork": the commit its branch started from
    git: bool = True  # isolation "none": whether the shared checkout is a git repository
    group: str | None = None  # best of n: the batch id, this child's place, the batch size
    group_index: int = 1
    group_total: int = 1
    header: dict[str, Any] | None = None
    result: str | None = None
    turns: int = 0

    @classmethod
    def from_workspace(cls, record: WorkspaceRecord) -> ChildRecord:
        extra = record.extra
        header = extra.get("task_header")
        result = extra.get("task_result")
        fork_base = extra.get("task_fork_base")
        group = extra.get("task_group")
        return cls(
            depth=_count(extra.get("task_depth"), 0),
            isolation="none" if extra.get("task_isolation") == "none" else "fork",
            status=_inactive_status(extra.get("task_status")),
            fork_base=fork_base if isinstance(fork_base, str) else None,
            git=bool(extra.get("task_git", True)),
            group=group if isinstance(group, str) else None,
            group_index=_count(extra.get("task_group_index"), 1),
            group_total=_count(extra.get("task_group_total"), 1),
            header=header if isinstance(header, dict) else None,
            result=result if isinstance(result, str) else None,
            turns=_count(extra.get("task_turns"), 0),
        )

    def new_extra(self) -> dict[str, Any]:
        """The `extra` of a new child's record."""
        extra: dict[str, Any] = {
            "task_depth": self.depth,
            "task_isolation": self.isolation,
            "task_status": self.status,
        }
        if self.group is not None:
            extra.update(
                task_group=self.group,
                task_group_index=self.group_index,
                task_group_total=self.group_total,
            )
        if self.isolation == "none":
            extra["task_git"] = self.git
        else:
            extra["task_fork_base"] = self.fork_base
        return extra

    @staticmethod
    def outcome_extra(
        record: WorkspaceRecord,
        *,
        status: TaskStatus,
        header: dict[str, Any] | None,
        result: str | None,
        turns: int,
    ) -> dict[str, Any]:
        """`record`'s `extra` with a run's outcome, which a later process reads back."""
        return dict(
            record.extra,
            task_status=status,
            task_header=header,
            task_result=(result or "")[:MAX_RESULT_KEPT] or None,
            task_turns=turns,
        )


def records_with_parent(workspace_id: str) -> list[WorkspaceRecord]:
    """The records of a workspace's children, oldest first."""
    records = [r for r in registry.list_workspaces() if r.parent_id == workspace_id]
    records.sort(key=lambda r: r.created_at)
    return records


def recorded_view(record: WorkspaceRecord) -> TaskView:
    """A child no process runs, as its record keeps it."""
    return Child.adopt(record, parent_id=record.parent_id or "").view()


class ChildHost(Protocol):
    """What the manager asks of the host a child's session runs with (its `ScopedHost`, which
    itself looks children up here: a protocol keeps the two modules out of each other)."""

    own_cost: float
    child_ids: list[str]

    def descendant_cost(self) -> float: ...

    async def stop(self, task_ids: Sequence[str]) -> list[TaskView]: ...


@dataclass
class Child:
    """One child workspace and the state of its work."""

    record: WorkspaceRecord
    parent_id: str
    depth: int
    agent_id: str
    title: str
    isolation: Isolation
    fork_base: str | None
    git: bool = True  # see ChildRecord.git
    group: str | None = None
    group_index: int = 1
    group_total: int = 1
    status: TaskStatus = "queued"
    session: ChildSession | None = None  # xum's engine, or an external ACP agent
    host: ChildHost | None = None
    runtime: Runtime | None = None
    log: SessionLog | None = None
    opened: OpenedSession | None = None  # the session and what it owns (closed together)
    pending: list[str] = field(default_factory=list)  # turns waiting to run
    driver: asyncio.Task[None] | None = None
    stop_requested: bool = False
    ran: bool = False  # whether the current run (since the last wake-up) started a turn
    turns: int = 0
    steps: int = 0
    usage: Usage = field(default_factory=Usage)
    cost_usd: float | None = 0.0  # None once a reply had no known price
    elapsed_s: float = 0.0
    last: TurnResult | None = None
    failure: str | None = None  # an error that escaped the session
    reports: list[Report] = field(default_factory=list)
    reports_read: int = 0
    init: InitHookRun | None = None  # the child's `.xum/init` run (fork children)
    header: dict[str, Any] | None = None
    result: str | None = None

    @classmethod
    def adopt(cls, record: WorkspaceRecord, *, parent_id: str, depth: int | None = None) -> Child:
        """A child an earlier process made, as its record keeps it (inactive). `depth`: where
        the adopting host puts it (default: as recorded)."""
        kept = ChildRecord.from_workspace(record)
        return cls(
            record=record,
            parent_id=parent_id,
            depth=kept.depth if depth is None else depth,
            agent_id=record.agent,
            title=record.title,
            isolation=kept.isolation,
            fork_base=kept.fork_base,
            git=kept.git,
            group=kept.group,
            group_index=kept.group_index,
            group_total=kept.group_total,
            status=kept.status,
            header=kept.header,
            result=kept.result,
            turns=kept.turns,
        )

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def active(self) -> bool:
        return self.status in ACTIVE_STATUSES

    def view(self, *, consume: bool = False) -> TaskView:
        """The child as a tool sees it now; `consume` marks its unread reports read."""
        from xum.tools.taskrecords import TaskView

        unread = self.reports[self.reports_read :]
        if consume:
            self.reports_read = len(self.reports)
        return TaskView(
            task_id=self.id,
            title=self.title,
            agent_id=self.agent_id,
            status=self.status,
            isolation=self.isolation,
            workspace_name=self.record.name,
            branch=self.record.branch,
            path=self.record.path,
            group=self.group,
            group_index=self.group_index,
            group_total=self.group_total,
            turns=self.turns,
            header=self.header,
            result=self.result,
            reports=list(unread),
        )

    def account(self, result: TurnResult) -> None:
        """Add a finished turn to the child's totals."""
        self.turns += 1
        self.steps += result.steps
        self.usage.add(result.usage)
        if result.cost_usd is None or self.cost_usd is None:
            self.cost_usd = None
        else:
            self.cost_usd += result.cost_usd
        self.last = result
        self.failure = None

    def outcome(self, subtree_cost_usd: float) -> TaskStatus:
        """End the current run: its result (the final message, or the last report when the turn
        produced none) and header (see docs/subagents.md); returns the status it ends in."""
        last = self.last if self.ran else None
        if self.failure is not None:
            reason = "error"
        elif last is None:
            reason = "interrupted"  # stopped before this run's first turn began
        else:
            reason = last.reason
        if self.ran:
            latest_report = self.reports[-1].markdown if self.reports else None
            self.result = (last.text if last is not None else "") or latest_report
        status: TaskStatus
        if reason == "completed":
            status, header_status = "reported", "completed"
        elif reason == "interrupted":
            status = "interrupted"
            header_status = "partial" if self.result else "interrupted"
        else:
            status = "failed"
            header_status = "partial" if self.result else "failed"
        self.header = {
            "status": header_status,
            "end_reason": reason,
            "turns": self.turns,
            "steps": self.steps,
            "input_tokens": self.usage.input_tokens,
            "output_tokens": self.usage.output_tokens,
            "cache_read_tokens": self.usage.cache_read_tokens,
            "cost_usd": None if self.cost_usd is None else round(self.cost_usd, 6),
            "subtree_cost_usd": round(subtree_cost_usd, 6),
            "elapsed_s": round(self.elapsed_s, 3),
        }
        if self.failure is not None:
            self.header["error"] = self.failure
        elif last is not None and last.error:
            self.header["error"] = last.error.get("message") or str(last.error)
        if self.isolation == "fork":
            self.header["branch"] = self.record.branch
        return status

    def persisted_extra(self) -> dict[str, Any]:
        """The child's record `extra` with its outcome so far."""
        return ChildRecord.outcome_extra(
            self.record,
            status=self.status,
            header=self.header,
            result=self.result,
            turns=self.turns,
        )


def _count(value: Any, default: int) -> int:
    # Only xum writes these fields; anything else there reads as the default.
    return value if isinstance(value, int) and not isinstance(value, bool) else default


def _inactive_status(value: Any) -> TaskStatus:
    # A child recorded as active belonged to a process that is gone: it is not running now.
    if value in ("reported", "failed"):
        return "reported" if value == "reported" else "failed"
    return "interrupted"
