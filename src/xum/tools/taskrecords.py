"""The records the task tools and a sub-agent host exchange (see `xum.tools.tasking`).

Imported when a task tool first runs or a host first reports on a child, not at start-up.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from xum.tools.tasking import ACTIVE_STATUSES, Isolation, TaskStatus


@dataclass(slots=True)
class TaskSpec:
    agent_id: str
    title: str
    prompt: str
    model: str | None = None  # None: the parent's model
    thinking: str | None = None  # None: the parent's thinking level
    n: int = 1  # best of n: n siblings on the same prompt
    # Best of N across agents: one child per entry (xum's agents or external ones), n of them.
    agents: tuple[str, ...] = ()
    isolation: Isolation = "fork"
    # Whether the call named the isolation: a defaulted `fork` becomes `none` where the parent's
    # checkout cannot fork children (a scratch chat has no git).
    isolation_given: bool = True


@dataclass(slots=True)
class Report:
    markdown: str
    title: str | None = None
    at_ms: int = 0


@dataclass(slots=True)
class TaskView:
    """One child as a tool sees it at one moment."""

    task_id: str
    title: str
    agent_id: str
    status: TaskStatus
    isolation: Isolation
    workspace_name: str
    branch: str | None = None
    path: str = ""
    group: str | None = None  # best-of batch id
    group_index: int = 0  # 1-based within the batch
    group_total: int = 1
    turns: int = 0
    header: dict[str, Any] | None = None  # set once a turn finished: see docs/subagents.md
    result: str | None = None  # the final message, or the last report when it had none
    reports: list[Report] = field(default_factory=list)  # unread reports, consumed by the read

    @property
    def active(self) -> bool:
        return self.status in ACTIVE_STATUSES


@dataclass(slots=True)
class PatchOutcome:
    ok: bool
    message: str
    meta: dict[str, Any] = field(default_factory=dict)
