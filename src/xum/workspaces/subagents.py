"""Sub-agents: the workspaces layer's implementation of the engine's `SubAgentHost`.

Every child is a workspace: a registry record with `parent_id`, its own session log and scratch
dir, and (with `isolation: fork`, the default) its own git worktree and branch made from the
parent checkout's HEAD commit. Its `AgentSession` runs as an asyncio task in this process; the
`SubAgentManager` owns those tasks, and each session gets a `ScopedHost`: the view of the tree
from that workspace, at its nesting depth.

Lifecycle of a child (see `xum.tools.tasking`):

    queued --(a concurrency slot)--> running --(turn ends)--> reported | interrupted | failed
       ^                                                             |
       +----------------- task_send_message (a new turn) ------------+

Inactive children keep their workspace and context until `task_remove` deletes them. Each
finished turn produces the result the parent reads: a header (status, end reason, turns, steps,
tokens, cost, elapsed) and the final message, or the last `agent_report` when there was none.

Caps (config.json, `tasks`): `maxNestingDepth` (default 3: a top-level workspace is depth 0, and
a session at the maximum depth gets no task tools) and `maxRunningChildren` (default 4 running
children per parent; the rest wait as `queued`).

Costs: every session reports its own cost to its host; the tree's total is the sum. A session's
budget and `XUM_COSTS_USD` count the whole tree (`AgentSession._tree_cost`), and children
inherit the parent's budget, so one `--budget` caps the tree.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xum.core.clock import now_ms
from xum.core.paths import ensure_private_dir
from xum.engine import events as E
from xum.engine.events import Event
from xum.engine.route import ModelRoute, resolve_route
from xum.engine.session import AgentSession, SessionSettings, TurnResult, WorkspaceInfo
from xum.llm.client import LLMClient, open_client
from xum.llm.thinking import parse_thinking
from xum.llm.types import ThinkingLevel, Usage
from xum.runtime import git
from xum.runtime.base import Runtime
from xum.store import registry
from xum.store.registry import WorkspaceRecord
from xum.store.sessionlog import SessionLog
from xum.tools.tasking import (
    ACTIVE_STATUSES,
    ChangeSignal,
    DispatchMode,
    Isolation,
    SubAgentError,
    TaskStatus,
)
from xum.workspaces.service import open_runtime
from xum.workspaces.state import remove_local_state, scratch_dir
from xum.workspaces.subagent_host import TaskSettings as TaskSettings
from xum.workspaces.subagent_host import offered_at

if TYPE_CHECKING:
    from xum.context.agents import ResolvedAgent
    from xum.tools.taskrecords import PatchOutcome, Report, TaskSpec, TaskView
    from xum.workspaces.init_hook import InitHookRun
    from xum.workspaces.wiring import SessionWiring

# Every front-end makes a manager and a host per session, but most sessions never start a
# child: what only spawning, running and patching need (the child agents' definitions, patches,
# worktrees, the task records) is imported by the code that uses it.

MESSAGE_PREFIX = "[message from your parent agent]\n"

EventListener = Callable[[str, Event], None]  # (workspace id, event)


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
    group: str | None = None
    group_index: int = 1
    group_total: int = 1
    status: TaskStatus = "queued"
    session: AgentSession | None = None
    host: ScopedHost | None = None
    runtime: Runtime | None = None
    log: SessionLog | None = None
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

    @property
    def id(self) -> str:
        return self.record.id

    @property
    def active(self) -> bool:
        return self.status in ACTIVE_STATUSES


class SubAgentManager:
    """Owns every child of this process: their records, sessions and asyncio tasks.

    One per front-end process (`xum run`, the server). `host_for` gives a top-level session its
    host; hosts of children are made here when the children are. `aclose()` stops every child
    and kills their processes.
    """

    def __init__(
        self,
        *,
        settings: TaskSettings | None = None,
        listener: EventListener | None = None,
    ) -> None:
        self.settings = settings or TaskSettings.from_config()
        self.listener = listener
        self._children: dict[str, Child] = {}
        self._hosts: dict[str, ScopedHost] = {}
        self._slots: dict[str, asyncio.Semaphore] = {}
        self._clients: list[LLMClient] = []  # opened here for children on another endpoint
        self._closed = False

    # For front-ends --------------------------------------------------------------------------

    def host_for(
        self,
        workspace: WorkspaceInfo,
        *,
        runtime: Runtime,
        route: ModelRoute,
        client: LLMClient,
        thinking: ThinkingLevel,
        budget_usd: float | None = None,
        base_env: dict[str, str] | None = None,
    ) -> ScopedHost:
        """The host of a top-level session (depth 0). Children it had in an earlier process are
        adopted as inactive children, so they can be listed, awaited, woken or removed."""
        info = ParentInfo(workspace, runtime, route, client, thinking, budget_usd, base_env or {})
        host = ScopedHost(self, info, depth=0, root_id=workspace.id, child=None)
        self._hosts[workspace.id] = host
        self._adopt_children(host)
        return host

    def children_of(self, workspace_id: str) -> list[TaskView]:
        """Every child of a workspace, live or recorded (for the server's API)."""
        host = self._hosts.get(workspace_id)
        if host is not None:
            return [host.view(i) for i in host.children()]
        return [_recorded_view(r) for r in _records_with_parent(workspace_id)]

    def view(self, task_id: str) -> TaskView | None:
        child = self._children.get(task_id)
        return None if child is None else self._view(child, consume=False)

    def session_of(self, task_id: str) -> AgentSession | None:
        """A live child's session (a UI may show its events or queue a message into it)."""
        child = self._children.get(task_id)
        return None if child is None else child.session

    async def stop_task(self, task_id: str) -> TaskView | None:
        """Stop one child, whoever its parent is (a UI's stop button)."""
        child = self._children.get(task_id)
        if child is None:
            return None
        await self._stop(child)
        return self._view(child, consume=False)

    async def aclose(self) -> None:
        """Stop every child, kill their background processes, close the clients opened here."""
        self._closed = True
        children = list(self._children.values())
        for child in children:
            self._request_stop(child)
        drivers = [c.driver for c in children if c.driver is not None and not c.driver.done()]
        if drivers:
            await asyncio.gather(*drivers, return_exceptions=True)
        for child in children:
            if child.init is not None:
                child.init.cancel()
            if child.session is not None:
                await child.session.aclose()
            if child.log is not None:
                child.log.close()
        for client in self._clients:
            with contextlib.suppress(Exception):
                await client.aclose()
        self._clients.clear()

    # Internals used by hosts -----------------------------------------------------------------

    def _emit(self, workspace_id: str, event: Event) -> None:
        if self.listener is not None:
            self.listener(workspace_id, event)

    def _slot(self, parent_id: str) -> asyncio.Semaphore:
        slot = self._slots.get(parent_id)
        if slot is None:
            slot = self._slots[parent_id] = asyncio.Semaphore(self.settings.max_running)
        return slot

    def _tree_cost(self, root_id: str) -> float:
        return sum(h.own_cost for h in self._hosts.values() if h.root_id == root_id)

    def _client_for(self, route: ModelRoute, parent: ParentInfo) -> LLMClient:
        if route.endpoint == parent.client.endpoint:
            return parent.client
        for client in self._clients:
            if client.endpoint == route.endpoint:
                return client
        client = open_client(route.endpoint)
        self._clients.append(client)
        return client

    def _adopt_children(self, host: ScopedHost) -> None:
        for record in _records_with_parent(host.workspace_id):
            if record.id in self._children:
                # A front-end opened this workspace's session again: same live children.
                if record.id not in host.child_ids:
                    host.child_ids.append(record.id)
                continue
            extra = record.extra
            child = Child(
                record=record,
                parent_id=host.workspace_id,
                depth=host.depth + 1,
                agent_id=record.agent,
                title=record.title,
                isolation="none" if extra.get("task_isolation") == "none" else "fork",
                fork_base=extra.get("task_fork_base"),
                group=extra.get("task_group"),
                group_index=int(extra.get("task_group_index") or 1),
                group_total=int(extra.get("task_group_total") or 1),
                status=_inactive_status(extra.get("task_status")),
            )
            header = extra.get("task_header")
            child.header = header if isinstance(header, dict) else None
            result = extra.get("task_result")
            child.result = result if isinstance(result, str) else None
            child.turns = int(extra.get("task_turns") or 0)
            self._children[child.id] = child
            host.child_ids.append(child.id)

    def _view(self, child: Child, *, consume: bool) -> TaskView:
        from xum.tools.taskrecords import TaskView

        unread = child.reports[child.reports_read :]
        if consume:
            child.reports_read = len(child.reports)
        return TaskView(
            task_id=child.id,
            title=child.title,
            agent_id=child.agent_id,
            status=child.status,
            isolation=child.isolation,
            workspace_name=child.record.name,
            branch=child.record.branch,
            path=child.record.path,
            group=child.group,
            group_index=child.group_index,
            group_total=child.group_total,
            turns=child.turns,
            header=child.header,
            result=child.result,
            reports=list(unread),
        )

    def _set_status(self, child: Child, status: TaskStatus) -> None:
        child.status = status
        parent = self._hosts.get(child.parent_id)
        if parent is not None:
            parent.signal.notify()
        self._emit(
            child.parent_id,
            E.SubagentStatus(
                task_id=child.id,
                title=child.title,
                status=status,
                header=child.header if status not in ACTIVE_STATUSES else None,
            ),
        )

    # Creating children -----------------------------------------------------------------------

    async def _spawn(self, host: ScopedHost, spec: TaskSpec) -> list[str]:
        from xum.context.workspace import WorkspaceContext
        from xum.workspaces.subagent_agents import runnable_agent

        if self._closed:
            raise SubAgentError("xum is shutting down; no new sub-agents")
        settings = self.settings
        if host.depth >= settings.max_depth:
            raise SubAgentError(
                f"the task nesting depth limit ({settings.max_depth}) is reached: this "
                "workspace cannot start sub-agents; do the work yourself"
            )
        parent = host.parent
        is_git, fork_base = await asyncio.to_thread(_git_state, parent)
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
        agent = await runnable_agent(lookup, spec.agent_id)
        # Model and thinking: the task call's, else the agent's own `ai` defaults, else the
        # parent's.
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
        if spec.isolation == "fork":
            if parent.runtime.kind not in ("local", "worktree"):
                raise SubAgentError(
                    f"isolation 'fork' is not available for {parent.runtime.kind} workspaces: "
                    'pass isolation: "none" to run the sub-agent in your own checkout'
                )
            if fork_base is None:
                raise SubAgentError(
                    "isolation 'fork' needs a git repository with at least one commit (the "
                    "child branches from your HEAD); commit first, or use isolation 'none' for "
                    "read-only work"
                )
        titles = [
            spec.title if spec.n == 1 else f"{spec.title} ({i + 1}/{spec.n})" for i in range(spec.n)
        ]
        records = await asyncio.gather(
            *(
                asyncio.to_thread(
                    _create_child_workspace,
                    parent,
                    title=titles[i],
                    agent_id=agent.id,
                    model=route.model_string,
                    thinking=thinking,
                    isolation=spec.isolation,
                    fork_base=fork_base,
                    depth=host.depth + 1,
                    group=(group, i + 1, spec.n) if group is not None else None,
                    is_git=is_git,
                )
                for i in range(spec.n)
            ),
            return_exceptions=True,
        )
        failures = [r for r in records if isinstance(r, BaseException)]
        if failures:
            for record in records:
                if isinstance(record, WorkspaceRecord):
                    await asyncio.to_thread(_delete_workspace, record)
            raise SubAgentError(f"could not create the child workspace: {failures[0]}")
        children: list[Child] = []
        for i, record in enumerate(records):
            assert isinstance(record, WorkspaceRecord)
            child = Child(
                record=record,
                parent_id=host.workspace_id,
                depth=host.depth + 1,
                agent_id=agent.id,
                title=titles[i],
                isolation=spec.isolation,
                fork_base=fork_base if spec.isolation == "fork" else None,
                group=group,
                group_index=i + 1,
                group_total=spec.n,
            )
            children.append(child)
        try:
            shared = agent if spec.isolation == "none" else None
            for child in children:
                await self._open_session(child, host, route, thinking, agent=shared)
        except Exception as exc:  # the agent is not in the fork, the hooks could not be wired
            for child in children:
                await self._discard(child)
            raise SubAgentError(f"could not start the sub-agent: {exc}") from None
        for child in children:
            self._children[child.id] = child
            host.child_ids.append(child.id)
            self._enqueue(child, spec.prompt)
        return [c.id for c in children]

    async def _discard(self, child: Child) -> None:
        """Undo a child that never started: session, hooks, workspace."""
        if child.init is not None:
            child.init.cancel()
        if child.session is not None:
            await child.session.aclose()
        if child.log is not None:
            child.log.close()
        self._hosts.pop(child.id, None)
        await asyncio.to_thread(_delete_workspace, child.record)

    async def _open_session(
        self,
        child: Child,
        host: ScopedHost,
        route: ModelRoute,
        thinking: ThinkingLevel,
        *,
        agent: ResolvedAgent | None = None,
    ) -> None:
        """Give the child a session: its agent looked up in its own checkout (a fork sees the
        agent files of the commit it was made from) and the checkout's instruction files and
        skills, with the sub-agent rules of its depth. `agent`: the child's agent when the caller
        has just looked it up in the checkout the child runs in (isolation "none")."""
        from xum.context.workspace import WorkspaceContext
        from xum.workspaces.subagent_agents import child_selection, runnable_agent

        parent = host.parent
        record = child.record
        runtime = parent.runtime if child.isolation == "none" else open_runtime(record)
        child.runtime = runtime
        context = WorkspaceContext.for_workspace(
            runtime,
            project_path=record.project_path,
            workspace_name=record.name,
            is_git=child.isolation == "fork" or bool(record.extra.get("task_git", True)),
        )
        try:
            if agent is None:
                agent = await runnable_agent(context, child.agent_id)
        except SubAgentError as exc:
            if child.isolation != "fork":
                raise
            raise SubAgentError(
                f"in its fork of your last commit, {exc} (agent files you have not committed "
                "are not part of the fork)"
            ) from None
        selection = child_selection(
            child.agent_id,
            depth=child.depth,
            max_depth=self.settings.max_depth,
            best_of=(child.group_index, child.group_total),
        )

        def emit(event: Event) -> None:
            self._emit(record.id, event)

        # The project's rules apply to children as to any workspace: secrets in the
        # environment (masked in output), tool hooks and the init hook, in trusted projects.
        wiring = await self._wire(child, runtime, agent, emit)
        info = WorkspaceInfo(record.id, record.name, record.project_path, record.path, runtime.kind)
        child_parent = ParentInfo(
            workspace=info,
            runtime=runtime,
            route=route,
            client=self._client_for(route, parent),
            thinking=thinking,
            budget_usd=parent.budget_usd,
            base_env=wiring.base_env,
        )
        child_host = ScopedHost(
            self, child_parent, depth=child.depth, root_id=host.root_id, child=child
        )
        self._hosts[child.id] = child_host
        log = SessionLog.open(record.id, purpose="sub-agent")
        child.log = log
        child.session = AgentSession(
            workspace=info,
            log=log,
            runtime=runtime,
            route=route,
            client=child_parent.client,
            settings=SessionSettings(thinking=thinking, budget_usd=parent.budget_usd),
            scratch_dir=scratch_dir(record.id),
            emit=emit,
            middleware=wiring.middleware,
            base_env=wiring.base_env,
            subagents=child_host,
            context=context,
            agent=selection,
        )
        child.host = child_host

    async def _wire(
        self, child: Child, runtime: Runtime, agent: ResolvedAgent, emit: Callable[[Event], None]
    ) -> SessionWiring:
        from xum.workspaces.init_hook import start_init_hook
        from xum.workspaces.wiring import project_secrets, wire_session

        record = child.record
        secrets = await asyncio.to_thread(project_secrets, record.project_path)
        if child.isolation == "fork" and not agent.skip_init_hook and child.turns == 0:
            child.init = await start_init_hook(record, runtime, secrets=secrets)
        return await wire_session(
            record,
            runtime,
            scratch_dir=scratch_dir(record.id),
            emit=emit,
            init=child.init,
            secrets=secrets,
        )

    async def _reopen(self, child: Child, host: ScopedHost) -> None:
        """Give an adopted child (from an earlier process) a session before it runs again."""
        parent = host.parent
        route = parent.route
        if child.record.model and child.record.model != route.model_string:
            with contextlib.suppress(Exception):
                route = resolve_route(child.record.model)
        thinking = parent.thinking
        if child.record.thinking:
            with contextlib.suppress(Exception):
                thinking = parse_thinking(child.record.thinking, route.provider, route.model_id)
        await self._open_session(child, host, route, thinking)

    # Running children ------------------------------------------------------------------------

    def _enqueue(self, child: Child, text: str) -> None:
        child.pending.append(text)
        if child.driver is None or child.driver.done():
            child.stop_requested = False
            child.ran = False
            self._set_status(child, "queued")
            child.driver = asyncio.create_task(self._drive(child), name=f"subagent-{child.id}")

    async def _drive(self, child: Child) -> None:
        """Run the child's pending turns, one at a time, each holding a slot of its parent."""
        assert child.session is not None
        session = child.session
        try:
            while child.pending and not child.stop_requested:
                text = child.pending.pop(0)
                async with self._slot(child.parent_id):
                    if child.stop_requested:
                        break
                    child.ran = True
                    self._set_status(child, "running")
                    started = time.monotonic()
                    try:
                        result = await session.run_turn(text)
                    finally:
                        child.elapsed_s += time.monotonic() - started
                self._account(child, result)
                leftover = session.take_step_queue() + session.take_turn_queue()
                if not child.stop_requested:
                    child.pending.extend(leftover)
        except asyncio.CancelledError:
            self._finish(child)
            raise
        except Exception as exc:  # a bug or an unusable log: the child fails, the parent goes on
            child.failure = f"{type(exc).__name__}: {exc}"
        self._finish(child)

    def _account(self, child: Child, result: TurnResult) -> None:
        child.turns += 1
        child.steps += result.steps
        child.usage.add(result.usage)
        if result.cost_usd is None or child.cost_usd is None:
            child.cost_usd = None
        else:
            child.cost_usd += result.cost_usd
        child.last = result
        child.failure = None

    def _finish(self, child: Child) -> None:
        if not child.active:
            return
        last = child.last if child.ran else None
        if child.failure is not None:
            reason = "error"
        elif last is None:
            reason = "interrupted"  # stopped before this run's first turn began
        else:
            reason = last.reason
        if child.ran:
            # The final message; when the turn produced none, the last report stands in.
            latest_report = child.reports[-1].markdown if child.reports else None
            child.result = (last.text if last is not None else "") or latest_report
        status: TaskStatus
        if reason == "completed":
            status, header_status = "reported", "completed"
        elif reason == "interrupted":
            status = "interrupted"
            header_status = "partial" if child.result else "interrupted"
        else:
            status = "failed"
            header_status = "partial" if child.result else "failed"
        host = child.host
        subtree = (host.own_cost + host.descendant_cost()) if host is not None else 0.0
        child.header = {
            "status": header_status,
            "end_reason": reason,
            "turns": child.turns,
            "steps": child.steps,
            "input_tokens": child.usage.input_tokens,
            "output_tokens": child.usage.output_tokens,
            "cache_read_tokens": child.usage.cache_read_tokens,
            "cost_usd": None if child.cost_usd is None else round(child.cost_usd, 6),
            "subtree_cost_usd": round(subtree, 6),
            "elapsed_s": round(child.elapsed_s, 3),
        }
        if child.failure is not None:
            child.header["error"] = child.failure
        elif last is not None and last.error:
            child.header["error"] = last.error.get("message") or str(last.error)
        if child.isolation == "fork":
            child.header["branch"] = child.record.branch
        self._set_status(child, status)
        self._persist(child)

    def _persist(self, child: Child) -> None:
        """Keep the outcome in the registry so a later process can list and reuse the child."""
        extra = dict(child.record.extra)
        extra.update(
            task_status=child.status,
            task_header=child.header,
            task_result=(child.result or "")[:65536] or None,
            task_turns=child.turns,
        )
        with contextlib.suppress(Exception):  # the registry is best effort here
            child.record = registry.update_workspace(child.id, extra=extra)

    def _request_stop(self, child: Child) -> None:
        child.stop_requested = True
        if child.driver is None or child.driver.done():
            return
        if child.session is not None and child.session.running:
            child.session.interrupt()
        else:
            child.driver.cancel()  # still queued: it never started this turn

    async def _stop(self, child: Child) -> None:
        """Interrupt the child, stop its own children, kill its background processes."""
        self._request_stop(child)
        if child.driver is not None and not child.driver.done():
            await asyncio.wait({child.driver})  # never raises: the driver records its own end
        if child.host is not None:
            active = [i for i in child.host.child_ids if self._children[i].active]
            if active:
                await child.host.stop(active)
        if child.session is not None:
            await child.session.background.stop_all()
        if child.active:  # cancelled before it recorded anything
            self._finish(child)

    async def _remove(self, child: Child) -> None:
        if child.host is not None:
            for grandchild_id in list(child.host.child_ids):
                grandchild = self._children.get(grandchild_id)
                if grandchild is not None:
                    if grandchild.active:
                        await self._stop(grandchild)
                    await self._remove(grandchild)
        else:
            for record in _records_with_parent(child.id):
                await asyncio.to_thread(_delete_workspace_tree, record)
        if child.init is not None:
            child.init.cancel()
        if child.session is not None:
            await child.session.aclose()
        if child.log is not None:
            child.log.close()
        await _delete_child_workspace(child.record)
        self._children.pop(child.id, None)
        self._hosts.pop(child.id, None)
        parent = self._hosts.get(child.parent_id)
        if parent is not None and child.id in parent.child_ids:
            parent.child_ids.remove(child.id)
            parent.signal.notify()
        self._emit(child.parent_id, E.SubagentRemoved(task_id=child.id))


class ScopedHost:
    """One session's view of its children (implements `xum.tools.tasking.SubAgentHost`)."""

    def __init__(
        self,
        manager: SubAgentManager,
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
        return max(0.0, self.manager._tree_cost(self.root_id) - self.own_cost)

    def descendant_cost(self) -> float:
        total = 0.0
        for child_id in self.child_ids:
            host = self.manager._hosts.get(child_id)
            if host is not None:
                total += host.own_cost + host.descendant_cost()
        return total

    async def spawn(self, spec: TaskSpec) -> list[str]:
        return await self.manager._spawn(self, spec)

    def children(self, *, include_inactive: bool = True) -> list[str]:
        children = self.manager._children
        return [i for i in self.child_ids if include_inactive or children[i].active]

    def _get(self, task_id: str) -> Child:
        child = self.manager._children.get(task_id)
        if child is None or child.parent_id != self.workspace_id:
            raise SubAgentError(
                f"{task_id!r} is not one of this workspace's sub-agents; task_list shows them"
            )
        return child

    def view(self, task_id: str, *, consume_reports: bool = False) -> TaskView:
        return self.manager._view(self._get(task_id), consume=consume_reports)

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
            await self.manager._reopen(child, self)
        self.manager._enqueue(child, text)
        return f"Woke {task_id} with a new turn; await it with task_await."

    async def stop(self, task_ids: Sequence[str]) -> list[TaskView]:
        children = [self._get(i) for i in task_ids]
        await asyncio.gather(*(self.manager._stop(c) for c in children))
        return [self.manager._view(c, consume=False) for c in children]

    def stop_nowait(self, task_ids: Sequence[str]) -> None:
        for task_id in task_ids:
            child = self.manager._children.get(task_id)
            if child is not None and child.parent_id == self.workspace_id:
                self.manager._request_stop(child)

    async def remove(self, task_ids: Sequence[str]) -> list[str]:
        children = [self._get(i) for i in task_ids]
        busy = [c.id for c in children if c.active]
        if busy:
            raise SubAgentError(
                f"still active: {', '.join(busy)}; stop them with task_stop first (removal "
                "deletes the workspace)"
            )
        for child in children:
            await self.manager._remove(child)
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
        parent = self.manager._hosts.get(child.parent_id)
        if parent is not None:
            parent.signal.notify()
        self.manager._emit(
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
        return await asyncio.to_thread(
            _apply,
            child,
            self.parent.workspace.path,
            dry_run=dry_run,
            expected=expected_head_sha,
            three_way=three_way,
            force=force,
        )


# Synchronous helpers (run in threads) ----------------------------------------------------------

# `git worktree add` for siblings (best of n) runs in threads; one at a time keeps git's own
# lock files (the shared config, the worktrees admin directory) out of each other's way.
_WORKTREE_LOCK = threading.Lock()


def _git_state(parent: ParentInfo) -> tuple[bool, str | None]:
    """Whether the parent checkout is in git, and its HEAD commit (the fork point)."""
    if parent.runtime.kind not in ("local", "worktree"):
        return True, None
    path = parent.workspace.path
    if git.toplevel(path) is None:
        return False, None
    return True, git.head_commit(path)


def _create_child_workspace(
    parent: ParentInfo,
    *,
    title: str,
    agent_id: str,
    model: str,
    thinking: str,
    isolation: Isolation,
    fork_base: str | None,
    depth: int,
    group: tuple[str, int, int] | None,
    is_git: bool,
) -> WorkspaceRecord:
    """The registry record (and for a fork, the worktree) of a new child. `group`: (best-of
    batch id, this child's place, the batch size)."""
    import tempfile

    from xum.runtime.worktree import create_worktree, worktree_path
    from xum.workspaces.xumignore import copy_ignored_files

    project = parent.workspace.project_path
    extra: dict[str, Any] = {
        "task_depth": depth,
        "task_isolation": isolation,
        "task_status": "queued",
    }
    if group is not None:
        extra["task_group"], extra["task_group_index"], extra["task_group_total"] = group
    fields: dict[str, Any] = {
        "title": title,
        "agent": agent_id,
        "model": model,
        "thinking": thinking,
        "parent_id": parent.workspace.id,
    }
    if isolation == "none":
        host, remote = _shared_checkout(parent)
        if host is not None:
            fields["host"] = host
            extra.update(remote)
        extra["task_git"] = bool(remote.get("remote_git", is_git))
        record = registry.create_workspace(
            project_path=project,
            runtime=parent.runtime.kind,
            name_hint=title,
            path_for=lambda _name: parent.workspace.path,
            extra=extra,
            **fields,
        )
    else:
        assert fork_base is not None
        extra["task_fork_base"] = fork_base
        record = registry.create_workspace(
            project_path=project,
            runtime="worktree",
            name_hint=title,
            path_for=lambda name: worktree_path(project, name),
            extra=extra,
            **fields,
        )
        try:
            with _WORKTREE_LOCK:
                create_worktree(
                    project, record.name, temp_dir=tempfile.gettempdir(), base=fork_base
                )
        except BaseException:
            registry.remove_workspace(record.id)
            raise
        copy_ignored_files(Path(project), Path(record.path))
        record = registry.update_workspace(record.id, branch=record.name)
    ensure_private_dir(scratch_dir(record.id))
    return record


def _shared_checkout(parent: ParentInfo) -> tuple[str | None, dict[str, Any]]:
    """(host, extra fields) that let a child sharing an SSH parent's checkout open it again
    later (the same as the parent's record holds); (None, {}) for a checkout on this machine."""
    runtime = parent.runtime
    if runtime.kind != "ssh":
        return None, {}
    from xum.runtime.ssh import SshRuntime

    assert isinstance(runtime, SshRuntime)
    record = registry.get_workspace(parent.workspace.id)
    if record is not None and record.host:
        kept: dict[str, Any] = {
            k: record.extra[k] for k in ("remote_home", "remote_git") if k in record.extra
        }
        return record.host, kept
    return runtime.host, {"remote_home": runtime.home}


async def _delete_child_workspace(record: WorkspaceRecord) -> None:
    """A forked child goes through the workspace lifecycle (its `.xum/delete` hook runs, then its
    worktree, branch and state are removed); a child that shared its parent's checkout only
    loses its own state (the checkout is the parent's)."""
    if record.extra.get("task_isolation") == "fork":
        from xum.workspaces.lifecycle import delete_workspace

        try:
            await delete_workspace(record.id, force=True, branch="always")
            return
        except Exception:  # the record or checkout is half gone: clean up what is left
            pass
    await asyncio.to_thread(_delete_workspace, record)


def _delete_workspace(record: WorkspaceRecord) -> None:
    """Delete a child's checkout (worktree and branch; never a shared checkout), its local state
    (session log, scratch dir, plan file, init log) and its registry record."""
    from xum.workspaces import patches

    if record.runtime == "worktree" and record.extra.get("task_isolation") != "none":
        patches.remove_checkout(record.project_path, record.path, record.branch)
    # The same local state a deleted workspace loses (plan file and init log included).
    remove_local_state(record)
    registry.remove_workspace(record.id)


def _delete_workspace_tree(record: WorkspaceRecord) -> None:
    for child in _records_with_parent(record.id):
        _delete_workspace_tree(child)
    _delete_workspace(record)


def _records_with_parent(workspace_id: str) -> list[WorkspaceRecord]:
    records = [r for r in registry.list_workspaces() if r.parent_id == workspace_id]
    records.sort(key=lambda r: r.created_at)
    return records


def _inactive_status(value: Any) -> TaskStatus:
    # A child recorded as active belonged to a process that is gone: it is not running now.
    if value in ("reported", "failed"):
        return "reported" if value == "reported" else "failed"
    return "interrupted"


def _recorded_view(record: WorkspaceRecord) -> TaskView:
    from xum.tools.taskrecords import TaskView

    extra = record.extra
    header = extra.get("task_header")
    result = extra.get("task_result")
    return TaskView(
        task_id=record.id,
        title=record.title,
        agent_id=record.agent,
        status=_inactive_status(extra.get("task_status")),
        isolation="none" if extra.get("task_isolation") == "none" else "fork",
        workspace_name=record.name,
        branch=record.branch,
        path=record.path,
        turns=int(extra.get("task_turns") or 0),
        header=header if isinstance(header, dict) else None,
        result=result if isinstance(result, str) else None,
    )


def _apply(
    child: Child,
    target: str,
    *,
    dry_run: bool,
    expected: str | None,
    three_way: bool,
    force: bool,
) -> PatchOutcome:
    from xum.tools.taskrecords import PatchOutcome
    from xum.workspaces import patches

    record = child.record
    assert child.fork_base is not None and record.branch is not None
    if git.toplevel(target) is None:
        return PatchOutcome(False, f"{target} is not a git checkout")
    head = patches.resolve_commit(record.project_path, record.branch)
    if head is None:
        return PatchOutcome(False, f"the sub-agent's branch {record.branch!r} no longer exists")
    current = git.head_commit(target)
    if expected is not None:
        wanted = patches.resolve_commit(target, expected)
        if wanted is None or wanted != current:
            return PatchOutcome(
                False,
                f"refused: your HEAD is {(current or 'none')[:12]}, not {expected}; nothing "
                "was applied (look at what changed, then retry with the current sha)",
                {"head": current, "expected_head_sha": expected},
            )
    if not force and patches.already_applied(target, child.fork_base, head):
        return PatchOutcome(
            False,
            f"{child.id}'s commits are already in your history; nothing was applied (force "
            "applies them again)",
            {"head": current},
        )
    report = patches.apply_commits(
        source_repo=record.project_path,
        base=child.fork_base,
        head=head,
        target=target,
        three_way=three_way,
        dry_run=dry_run,
    )
    lines = [report.message]
    lines.extend(f"  {sha[:12]} {subject}" for sha, subject in report.commits)
    if report.ok and not dry_run:
        lines.append(f"HEAD is now {report.head_after}.")
    exists = Path(record.path).is_dir()
    dirty = exists and git.run_git(["status", "--porcelain"], record.path, check=False).stdout
    if dirty:
        lines.append(
            "note: the sub-agent also left uncommitted changes in its worktree; they are not "
            f"part of the patch ({record.path})"
        )
    return PatchOutcome(
        report.ok,
        "\n".join(lines),
        {
            "task_id": child.id,
            "dry_run": dry_run,
            "commits": [{"sha": s, "subject": m} for s, m in report.commits],
            "head_before": report.head_before,
            "head_after": report.head_after,
            "fork_base": child.fork_base,
            "branch": record.branch,
        },
    )
