"""Sub-agents: the manager that owns every child of this process, their sessions and tasks.

Every child is a workspace: a registry record with `parent_id`, its own session log and scratch
dir, and (with `isolation: fork`, the default) its own git worktree and branch made from the
parent checkout's HEAD commit. Its `AgentSession` runs as an asyncio task in this process; the
`SubAgentManager` owns those tasks, and each session gets a `ScopedHost`: the view of the tree
from that workspace, at its nesting depth. A child whose record names an external ACP agent runs
that agent instead (`xum.workspaces.external`), driven through the same `ChildSession` calls; it
has no host, so it starts no children of its own.

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

The rest lives beside this module in `workspaces/subagents/`: the hosts (`host`), the task
records and their persisted form (`records`), checking a `task` call (`spawn`), the children's
workspaces (`workspaces`), their agents (`agents`) and moving their commits (`patches`). The
children's sessions are opened by the assembly, through the opener the manager is given
(`opener`): the assembly makes the manager, so the manager never imports it.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from xum.engine import events as E
from xum.engine.agent import AgentSession, WorkspaceInfo
from xum.engine.events import Event
from xum.engine.route import ModelRoute, resolve_route
from xum.llm.client import LLMClient, open_client
from xum.llm.thinking import parse_thinking
from xum.llm.types import ThinkingLevel
from xum.runtime.base import Runtime
from xum.store import registry
from xum.store.registry import WorkspaceRecord
from xum.tools.tasking import ACTIVE_STATUSES, SubAgentError, TaskStatus
from xum.workspaces.safety.choice import DEFAULT_CHOICE, SafetyChoice
from xum.workspaces.service import open_runtime
from xum.workspaces.subagents.gate import SubagentGate
from xum.workspaces.subagents.host import ParentInfo, ScopedHost
from xum.workspaces.subagents.host import TaskSettings as TaskSettings
from xum.workspaces.subagents.opener import ChildSession, SessionOpener
from xum.workspaces.subagents.records import Child, ChildRecord, recorded_view, records_with_parent
from xum.workspaces.subagents.spawn import plan_spawn
from xum.workspaces.subagents.workspaces import (
    create_child_workspace,
    delete_child_workspace,
    discard_child_workspace,
    discard_workspace_tree,
)

if TYPE_CHECKING:
    from xum.context.agents import ResolvedAgent
    from xum.tools.taskrecords import TaskSpec, TaskView

EventListener = Callable[[str, Event], None]  # (workspace id, event)


class SubAgentManager:
    """Owns every child of this process: their records, sessions and asyncio tasks.

    One per front-end process (`xum run`, the server). `host_for` gives a top-level session its
    host; hosts of children are made here when the children are. `aclose()` stops every child
    and kills their processes.
    """

    def __init__(
        self,
        *,
        open_session: SessionOpener,
        settings: TaskSettings | None = None,
        listener: EventListener | None = None,
        gate: SubagentGate | None = None,
    ) -> None:
        # How a child's session is opened: the assembly's `open_workspace_session`, handed in by
        # whoever makes the manager (`assembly.subagent_manager`).
        self.open_session = open_session
        self.settings = settings or TaskSettings.from_config()
        self.listener = listener
        # The process's cap on running sub-agents (the host's governor), after the parent's.
        self.gate = gate
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
        safety: SafetyChoice = DEFAULT_CHOICE,
    ) -> ScopedHost:
        """The host of a top-level session (depth 0). Children it had in an earlier process are
        adopted as inactive children, so they can be listed, awaited, woken or removed."""
        info = ParentInfo(
            workspace, runtime, route, client, thinking, budget_usd, base_env or {}, safety
        )
        host = ScopedHost(self, info, depth=0, root_id=workspace.id, child=None)
        self._hosts[workspace.id] = host
        self._adopt_children(host)
        return host

    def children_of(self, workspace_id: str) -> list[TaskView]:
        """Every child of a workspace, live or recorded (for the server's API)."""
        host = self._hosts.get(workspace_id)
        if host is not None:
            return [host.view(i) for i in host.children()]
        return [recorded_view(r) for r in records_with_parent(workspace_id)]

    def view(self, task_id: str) -> TaskView | None:
        child = self._children.get(task_id)
        return None if child is None else child.view()

    def session_of(self, task_id: str) -> ChildSession | None:
        """A live child's session (a UI may show its events or queue a message into it)."""
        child = self._children.get(task_id)
        return None if child is None else child.session

    async def stop_task(self, task_id: str) -> TaskView | None:
        """Stop one child, whoever its parent is (a UI's stop button)."""
        child = self._children.get(task_id)
        if child is None:
            return None
        await self.stop_child(child)
        return child.view()

    async def aclose(self) -> None:
        """Stop every child, kill their background processes, close the clients opened here."""
        self._closed = True
        children = list(self._children.values())
        for child in children:
            self.request_stop(child)
        drivers = [c.driver for c in children if c.driver is not None and not c.driver.done()]
        if drivers:
            await asyncio.gather(*drivers, return_exceptions=True)
        for child in children:
            if child.init is not None:
                child.init.cancel()
            if child.opened is not None:
                await child.opened.aclose()
        for client in self._clients:
            with contextlib.suppress(Exception):
                await client.aclose()
        self._clients.clear()

    # For hosts -------------------------------------------------------------------------------

    def child(self, task_id: str) -> Child | None:
        return self._children.get(task_id)

    def host_of(self, workspace_id: str) -> ScopedHost | None:
        return self._hosts.get(workspace_id)

    def emit(self, workspace_id: str, event: Event) -> None:
        if self.listener is not None:
            self.listener(workspace_id, event)

    def tree_cost(self, root_id: str) -> float:
        return sum(h.own_cost for h in self._hosts.values() if h.root_id == root_id)

    def _slot(self, parent_id: str) -> asyncio.Semaphore:
        slot = self._slots.get(parent_id)
        if slot is None:
            slot = self._slots[parent_id] = asyncio.Semaphore(self.settings.max_running)
        return slot

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
        for record in records_with_parent(host.workspace_id):
            if record.id in self._children:
                # A front-end opened this workspace's session again: same live children.
                if record.id not in host.child_ids:
                    host.child_ids.append(record.id)
                continue
            child = Child.adopt(record, parent_id=host.workspace_id, depth=host.depth + 1)
            self._children[child.id] = child
            host.child_ids.append(child.id)

    def _set_status(self, child: Child, status: TaskStatus) -> None:
        child.status = status
        parent = self._hosts.get(child.parent_id)
        if parent is not None:
            parent.signal.notify()
        self.emit(
            child.parent_id,
            E.SubagentStatus(
                task_id=child.id,
                title=child.title,
                status=status,
                header=child.header if status not in ACTIVE_STATUSES else None,
            ),
        )

    # Creating children -----------------------------------------------------------------------

    async def spawn(self, host: ScopedHost, spec: TaskSpec) -> list[str]:
        """Start the children of one `task` call from `host`'s session; their ids."""
        if self._closed:
            raise SubAgentError("xum is shutting down; no new sub-agents")
        plan = await plan_spawn(
            host.parent, spec, depth=host.depth, max_depth=self.settings.max_depth
        )
        if plan.isolation != spec.isolation:
            spec = dataclasses.replace(spec, isolation=plan.isolation)
        kept = [
            ChildRecord(
                depth=host.depth + 1,
                isolation=spec.isolation,
                status="queued",
                fork_base=plan.fork_base if spec.isolation == "fork" else None,
                git=plan.is_git,
                group=plan.group,
                group_index=i + 1,
                group_total=spec.n,
            )
            for i in range(spec.n)
        ]
        records = await asyncio.gather(
            *(
                asyncio.to_thread(create_child_workspace, host.parent, plan, kept[i], planned)
                for i, planned in enumerate(plan.children)
            ),
            return_exceptions=True,
        )
        failures = [r for r in records if isinstance(r, BaseException)]
        if failures:
            for record in records:
                if isinstance(record, WorkspaceRecord):
                    await asyncio.to_thread(discard_child_workspace, record)
            raise SubAgentError(f"could not create the child workspace: {failures[0]}")
        children: list[Child] = []
        for i, record in enumerate(records):
            assert isinstance(record, WorkspaceRecord)
            child = Child(
                record=record,
                parent_id=host.workspace_id,
                depth=host.depth + 1,
                agent_id=plan.children[i].agent_id,
                title=plan.children[i].title,
                isolation=spec.isolation,
                fork_base=kept[i].fork_base,
                git=kept[i].git,
                group=plan.group,
                group_index=i + 1,
                group_total=spec.n,
            )
            children.append(child)
        try:
            for child, planned in zip(children, plan.children, strict=True):
                shared = planned.agent if spec.isolation == "none" else None
                await self.open_child_session(
                    child, host, planned.route, planned.thinking, agent=shared
                )
        except Exception as exc:  # the agent is not in the fork, the hooks could not be wired
            for child in children:
                await self._discard(child)
            raise SubAgentError(f"could not start the sub-agent: {exc}") from None
        for child in children:
            self._children[child.id] = child
            host.child_ids.append(child.id)
            self.enqueue(child, spec.prompt)
        return [c.id for c in children]

    async def _discard(self, child: Child) -> None:
        """Undo a child that never started: session, hooks, workspace."""
        if child.init is not None:
            child.init.cancel()
        if child.opened is not None:
            await child.opened.aclose()
        self._hosts.pop(child.id, None)
        await asyncio.to_thread(discard_child_workspace, child.record)

    async def open_child_session(
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
        has just looked it up in the checkout the child runs in (isolation "none").

        The one place a child's session is wired (secrets, hooks, its init hook) and its
        `AgentSession` built."""
        from xum.context.workspace import WorkspaceContext
        from xum.workspaces.init_hook import start_init_hook
        from xum.workspaces.subagents.agents import child_selection, runnable_agent
        from xum.workspaces.wiring import SessionWiring, project_secrets

        parent = host.parent
        record = child.record
        shared = child.isolation == "none"
        runtime = parent.runtime if shared else open_runtime(record)
        is_git = child.isolation == "fork" or child.git
        external = record.external_agent is not None
        try:
            if agent is None and not external:
                lookup = WorkspaceContext.for_workspace(
                    runtime,
                    project_path=record.project_path,
                    workspace_name=record.name,
                    is_git=is_git,
                )
                agent = await runnable_agent(lookup, child.agent_id)
        except SubAgentError as exc:
            if child.isolation != "fork":
                raise
            raise SubAgentError(
                f"in its fork of your last commit, {exc} (agent files you have not committed "
                "are not part of the fork)"
            ) from None
        # The project's rules apply to children as to any workspace: secrets in the
        # environment (masked in output), tool hooks and the init hook, in trusted projects.
        skip_init = agent is not None and agent.skip_init_hook
        if child.isolation == "fork" and not skip_init and child.turns == 0:
            secrets = await asyncio.to_thread(project_secrets, record.project_path)
            child.init = await start_init_hook(record, runtime, secrets=secrets)
        client = self._client_for(route, parent)

        def make_host(info: WorkspaceInfo, wiring: SessionWiring) -> ScopedHost:
            child_parent = ParentInfo(
                workspace=info,
                runtime=runtime,
                route=route,
                client=client,
                thinking=thinking,
                budget_usd=parent.budget_usd,
                base_env=wiring.base_env,
                safety=wiring.safety,
            )
            made = ScopedHost(
                self, child_parent, depth=child.depth, root_id=host.root_id, child=child
            )
            self._hosts[child.id] = made
            return made

        opened = await self.open_session(
            record,
            route=route,
            thinking=thinking,
            emit=lambda event: self.emit(record.id, event),
            runtime=runtime,
            client=client,
            init=child.init,
            selection=child_selection(
                child.agent_id,
                depth=child.depth,
                max_depth=self.settings.max_depth,
                best_of=(child.group_index, child.group_total),
            ),
            budget_usd=parent.budget_usd,
            make_host=make_host,
            is_git=is_git,
            purpose="sub-agent",
            safety=parent.safety,
        )
        child.runtime = runtime
        child.opened = opened
        child.session = opened.agent
        child.log = opened.log
        if external:
            return  # an external agent starts no sub-agents of its own: it has no host
        assert isinstance(opened.host, ScopedHost)
        child.host = opened.host

    async def reopen(self, child: Child, host: ScopedHost) -> None:
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
        await self.open_child_session(child, host, route, thinking)

    # Running children ------------------------------------------------------------------------

    def enqueue(self, child: Child, text: str) -> None:
        """Queue a turn for the child, starting its driver when it has none running."""
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
                    permit = await self.gate.acquire_subagent(child.id) if self.gate else None
                    try:
                        if child.stop_requested:
                            break
                        child.ran = True
                        self._set_status(child, "running")
                        started = time.monotonic()
                        try:
                            result = await session.run_turn(text)
                        finally:
                            child.elapsed_s += time.monotonic() - started
                    finally:
                        if permit is not None:
                            permit.release()
                child.account(result)
                leftover = session.take_step_queue() + session.take_turn_queue()
                if not child.stop_requested:
                    child.pending.extend(leftover)
        except asyncio.CancelledError:
            self._finish(child)
            raise
        except Exception as exc:  # a bug or an unusable log: the child fails, the parent goes on
            child.failure = f"{type(exc).__name__}: {exc}"
        self._finish(child)

    def _finish(self, child: Child) -> None:
        if not child.active:
            return
        host = child.host
        subtree = (host.own_cost + host.descendant_cost()) if host is not None else 0.0
        self._set_status(child, child.outcome(subtree))
        # Keep the outcome in the registry so a later process can list and reuse the child.
        with contextlib.suppress(Exception):  # the registry is best effort here
            child.record = registry.update_workspace(child.id, extra=child.persisted_extra())

    def request_stop(self, child: Child) -> None:
        """Ask the child to stop, without waiting for it."""
        child.stop_requested = True
        if child.driver is None or child.driver.done():
            return
        if child.session is not None and child.session.running:
            child.session.interrupt()
        else:
            child.driver.cancel()  # still queued: it never started this turn

    async def stop_child(self, child: Child) -> None:
        """Interrupt the child, stop its own children, kill its background processes."""
        self.request_stop(child)
        if child.driver is not None and not child.driver.done():
            await asyncio.wait({child.driver})  # never raises: the driver records its own end
        if child.host is not None:
            active = [i for i in child.host.child_ids if self._children[i].active]
            if active:
                await child.host.stop(active)
        if isinstance(child.session, AgentSession):  # an external agent has no such processes
            await child.session.background.stop_all()
        if child.active:  # cancelled before it recorded anything
            self._finish(child)

    async def remove_child(self, child: Child) -> None:
        """Delete an inactive child, its descendants first, and forget it."""
        if child.host is not None:
            for grandchild_id in list(child.host.child_ids):
                grandchild = self._children.get(grandchild_id)
                if grandchild is not None:
                    if grandchild.active:
                        await self.stop_child(grandchild)
                    await self.remove_child(grandchild)
        else:
            for record in records_with_parent(child.id):
                await asyncio.to_thread(discard_workspace_tree, record)
        if child.init is not None:
            child.init.cancel()
        if child.opened is not None:
            await child.opened.aclose()
        await delete_child_workspace(child.record)
        self._children.pop(child.id, None)
        self._hosts.pop(child.id, None)
        parent = self._hosts.get(child.parent_id)
        if parent is not None and child.id in parent.child_ids:
            parent.child_ids.remove(child.id)
            parent.signal.notify()
        self.emit(child.parent_id, E.SubagentRemoved(task_id=child.id))


__all__ = ["EventListener", "ScopedHost", "SubAgentManager", "TaskSettings"]
