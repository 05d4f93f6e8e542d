"""The sub-agent hosts (`xum.tools.tasking.SubAgentHost`): a session's view of its children.

`ScopedHost` is the view from one session, at its nesting depth: it checks that a task id is
one of its own children, and hands the work to the `SubAgentManager` (`subagents.manager`) that owns
every child of the process. The manager makes one for a top-level session (`host_for`) and one
for each child's session.

Most sessions never start a sub-agent. Until one does, a top-level session only asks its host
which task tools to offer and what the rest of its tree costs (nothing: it has no children
yet). `DeferredHost` answers those itself and makes the real host (`xum.workspaces.subagents.manager`,
imported then) the first time anything else is asked, which keeps the sub-agent machinery off
`xum run`'s start-up path. Also here: the caps (`TaskSettings`) and which task tools a session
is offered (`offered_at`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from xum.core.clock import now_ms
from xum.engine import events as E
from xum.store import registry
from xum.store.config import load_config
from xum.tools.tasking import (
    CHILD_TOOLS,
    HOST_TOOLS,
    ChangeSignal,
    DispatchMode,
    SubAgentError,
    SubAgentHost,
)
from xum.workspaces.safety.choice import DEFAULT_CHOICE, SafetyChoice

if TYPE_CHECKING:
    from xum.engine.agent import WorkspaceInfo
    from xum.engine.route import ModelRoute
    from xum.llm.client import LLMClient
    from xum.llm.types import ThinkingLevel
    from xum.runtime.base import Runtime
    from xum.tools.tasking import PatchOutcome, TaskSpec, TaskView
    from xum.workspaces.subagents.records import Child

DEFAULT_MAX_DEPTH = 3
DEFAULT_MAX_RUNNING = 4


@dataclass(frozen=True)
class TaskSettings:
    """The sub-agent caps (`config.json` `tasks`)."""

    max_depth: int = DEFAULT_MAX_DEPTH
    max_running: int = DEFAULT_MAX_RUNNING

    @classmethod
    def from_config(cls, config: Mapping[str, Any] | None = None) -> TaskSettings:
        """config.json `{"tasks": {"maxNestingDepth": 3, "maxRunningChildren": 4}}`; values
        that are not positive integers are ignored (the defaults apply)."""
        section = (load_config() if config is None else config).get("tasks")
        if not isinstance(section, dict):
            return cls()

        def number(key: str, default: int, low: int) -> int:
            value = section.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= low:
                return value
            return default

        return cls(
            max_depth=number("maxNestingDepth", DEFAULT_MAX_DEPTH, 0),
            max_running=number("maxRunningChildren", DEFAULT_MAX_RUNNING, 1),
        )


def offered_at(tool_name: str, *, depth: int, max_depth: int, child: bool) -> bool:
    """Whether a session at nesting `depth` (a sub-agent when `child`) may be offered a tool:
    agent_report only to sub-agents, the task tools only below the depth cap."""
    if tool_name in CHILD_TOOLS:
        return child
    if tool_name in HOST_TOOLS or tool_name.startswith("task_"):
        return depth < max_depth
    return True


class DeferredHost:
    """A top-level session's `SubAgentHost`, made by `make()` on first real use."""

    depth = 0

    def __init__(
        self, workspace_id: str, make: Callable[[], SubAgentHost], *, settings: TaskSettings
    ) -> None:
        self.workspace_id = workspace_id
        self.settings = settings
        self._make = make
        self._host: SubAgentHost | None = None
        self._own_cost = 0.0

    @property
    def made(self) -> bool:
        return self._host is not None

    def host(self) -> SubAgentHost:
        if self._host is None:
            self._host = self._make()
            self._host.note_cost(self._own_cost)
        return self._host

    # Answered without the real host while there is none --------------------------------------

    def offers(self, tool_name: str) -> bool:
        return offered_at(tool_name, depth=0, max_depth=self.settings.max_depth, child=False)

    def note_cost(self, own_cost_usd: float) -> None:
        self._own_cost = own_cost_usd
        if self._host is not None:
            self._host.note_cost(own_cost_usd)

    def external_cost_usd(self) -> float:
        # Without a real host there are no children, so nothing else in the tree costs anything.
        return 0.0 if self._host is None else self._host.external_cost_usd()

    # Everything else is the real host's --------------------------------------------------------

    @property
    def signal(self) -> ChangeSignal:
        return self.host().signal

    async def spawn(self, spec: TaskSpec) -> list[str]:
        return await self.host().spawn(spec)

    def children(self, *, include_inactive: bool = True) -> list[str]:
        return self.host().children(include_inactive=include_inactive)

    def view(self, task_id: str, *, consume_reports: bool = False) -> TaskView:
        return self.host().view(task_id, consume_reports=consume_reports)

    def is_ready(self, task_id: str) -> bool:
        return self.host().is_ready(task_id)

    async def send_message(self, task_id: str, message: str, *, dispatch: DispatchMode) -> str:
        return await self.host().send_message(task_id, message, dispatch=dispatch)

    async def stop(self, task_ids: Sequence[str]) -> list[TaskView]:
        return await self.host().stop(task_ids)

    def stop_nowait(self, task_ids: Sequence[str]) -> None:
        self.host().stop_nowait(task_ids)

    async def remove(self, task_ids: Sequence[str]) -> list[str]:
        return await self.host().remove(task_ids)

    def retitle(self, task_id: str, title: str) -> None:
        self.host().retitle(task_id, title)

    def report(self, markdown: str, title: str | None) -> None:
        self.host().report(markdown, title)

    async def apply_patch(
        self,
        task_id: str,
        *,
        dry_run: bool,
        expected_head_sha: str | None,
        three_way: bool,
        force: bool,
    ) -> PatchOutcome:
        return await self.host().apply_patch(
            task_id,
            dry_run=dry_run,
            expected_head_sha=expected_head_sha,
            three_way=three_way,
            force=force,
        )


# The real host ----------------------------------------------------------------------------------

MESSAGE_PREFIX = "[message from your parent agent]\n"


@dataclass
class ParentInfo:
    """What a host knows about the session it serves."""

    workspace: WorkspaceInfo
    runtime: Runtime
    route: ModelRoute
    client: LLMClient
    thinking: ThinkingLevel
    budget_usd: float | None
    base_env: dict[str, str] = field(default_factory=dict)
    safety: SafetyChoice = DEFAULT_CHOICE  # the front-end's choices; children inherit them


class TaskTree(Protocol):
    """What a host asks of the manager that owns every child of the process (`SubAgentManager`,
    which makes the hosts: this protocol keeps this module from importing it back)."""

    settings: TaskSettings

    def child(self, task_id: str) -> Child | None: ...

    def host_of(self, workspace_id: str) -> ScopedHost | None: ...

    def emit(self, workspace_id: str, event: E.Event) -> None: ...

    def tree_cost(self, root_id: str) -> float: ...

    async def spawn(self, host: ScopedHost, spec: TaskSpec) -> list[str]: ...

    async def reopen(self, child: Child, host: ScopedHost) -> None: ...

    def enqueue(self, child: Child, text: str) -> None: ...

    def request_stop(self, child: Child) -> None: ...

    async def stop_child(self, child: Child) -> None: ...

    async def remove_child(self, child: Child) -> None: ...


class ScopedHost:
    """One session's view of its children (implements `xum.tools.tasking.SubAgentHost`)."""

    def __init__(
        self,
        manager: TaskTree,
        parent: ParentInfo,
        *,
        depth: int,
        root_id: str,
        child: Child | None,
    ) -> None:
        self.manager = manager
        self.parent = parent
        self.workspace_id = parent.workspace.id
        self.depth = depth
        self.root_id = root_id
        self.child = child  # the Child this host's session runs as (None at the top)
        self.child_ids: list[str] = []
        self.own_cost = 0.0
        self._signal = ChangeSignal()

    @property
    def signal(self) -> ChangeSignal:
        return self._signal

    def offers(self, tool_name: str) -> bool:
        return offered_at(
            tool_name,
            depth=self.depth,
            max_depth=self.manager.settings.max_depth,
            child=self.child is not None,
        )

    def note_cost(self, own_cost_usd: float) -> None:
        self.own_cost = own_cost_usd

    def external_cost_usd(self) -> float:
        return max(0.0, self.manager.tree_cost(self.root_id) - self.own_cost)

    def descendant_cost(self) -> float:
        total = 0.0
        for child_id in self.child_ids:
            host = self.manager.host_of(child_id)
            if host is not None:
                total += host.own_cost + host.descendant_cost()
        return total

    async def spawn(self, spec: TaskSpec) -> list[str]:
        return await self.manager.spawn(self, spec)

    def children(self, *, include_inactive: bool = True) -> list[str]:
        return [i for i in self.child_ids if include_inactive or self._get(i).active]

    def _get(self, task_id: str) -> Child:
        child = self.manager.child(task_id)
        if child is None or child.parent_id != self.workspace_id:
            raise SubAgentError(
                f"{task_id!r} is not one of this workspace's sub-agents; task_list shows them"
            )
        return child

    def view(self, task_id: str, *, consume_reports: bool = False) -> TaskView:
        return self._get(task_id).view(consume=consume_reports)

    def is_ready(self, task_id: str) -> bool:
        child = self._get(task_id)
        return not child.active or child.reports_read < len(child.reports)

    async def send_message(self, task_id: str, message: str, *, dispatch: DispatchMode) -> str:
        child = self._get(task_id)
        text = MESSAGE_PREFIX + message
        session = child.session
        if child.active and session is not None and session.running:
            session.queue_message(text, "step" if dispatch == "tool-end" else "turn")
            when = "after its current step" if dispatch == "tool-end" else "after its turn"
            return f"Queued for {task_id}: it gets the message {when}."
        if child.active:  # queued, waiting for a slot
            child.pending.append(text)
            return f"{task_id} is queued; the message runs as a turn once it starts."
        if session is None:
            await self.manager.reopen(child, self)
        self.manager.enqueue(child, text)
        return f"Woke {task_id} with a new turn; await it with task_await."

    async def stop(self, task_ids: Sequence[str]) -> list[TaskView]:
        children = [self._get(i) for i in task_ids]
        await asyncio.gather(*(self.manager.stop_child(c) for c in children))
        return [c.view() for c in children]

    def stop_nowait(self, task_ids: Sequence[str]) -> None:
        for task_id in task_ids:
            child = self.manager.child(task_id)
            if child is not None and child.parent_id == self.workspace_id:
                self.manager.request_stop(child)

    async def remove(self, task_ids: Sequence[str]) -> list[str]:
        children = [self._get(i) for i in task_ids]
        busy = [c.id for c in children if c.active]
        if busy:
            raise SubAgentError(
                f"still active: {', '.join(busy)}; stop them with task_stop first (removal "
                "deletes the workspace)"
            )
        for child in children:
            await self.manager.remove_child(child)
        return [c.id for c in children]

    def retitle(self, task_id: str, title: str) -> None:
        child = self._get(task_id)
        child.title = title
        with contextlib.suppress(Exception):
            child.record = registry.update_workspace(task_id, title=title)
        self.signal.notify()

    def report(self, markdown: str, title: str | None) -> None:
        child = self.child
        if child is None:
            raise SubAgentError("agent_report is only for sub-agents: you have no parent agent")
        from xum.tools.taskrecords import Report

        child.reports.append(Report(markdown=markdown, title=title, at_ms=now_ms()))
        parent = self.manager.host_of(child.parent_id)
        if parent is not None:
            parent.signal.notify()
        self.manager.emit(
            child.parent_id,
            E.SubagentReport(task_id=child.id, title=title, text=markdown),
        )

    async def apply_patch(
        self,
        task_id: str,
        *,
        dry_run: bool,
        expected_head_sha: str | None,
        three_way: bool,
        force: bool,
    ) -> PatchOutcome:
        from xum.workspaces.checkouts.factory import checkout_for
        from xum.workspaces.subagents.patches import apply_child_commits

        child = self._get(task_id)
        if child.active:
            raise SubAgentError(
                f"{task_id} is still {child.status}; wait for it (task_await) or stop it first"
            )
        if child.isolation == "none" or not child.fork_base or not child.record.branch:
            raise SubAgentError(
                f"{task_id} worked in your checkout (isolation 'none'): its changes are "
                "already there"
            )
        checkout = await asyncio.to_thread(checkout_for, child.record)
        if not checkout.on_this_machine:
            # A container's checkout (Docker): git runs in the child's and the parent's
            # containers, the series passed between them.
            from xum.workspaces.subagents.runtime_patches import apply_child_commits_in_runtimes

            runtime = checkout.open_runtime()
            try:
                return await apply_child_commits_in_runtimes(
                    child,
                    runtime,
                    self.parent.runtime,
                    dry_run=dry_run,
                    expected=expected_head_sha,
                    three_way=three_way,
                    force=force,
                )
            finally:
                await runtime.close()
        return await asyncio.to_thread(
            apply_child_commits,
            child,
            self.parent.workspace.path,
            dry_run=dry_run,
            expected=expected_head_sha,
            three_way=three_way,
            force=force,
        )
