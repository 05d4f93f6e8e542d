"""The one assembly: how every front-end opens an agent session on a workspace.

`xum run`, the server, sub-agents (and the coming ACP bridge and terminal UI) call
`open_workspace_session` and nothing else, so a workspace's agent gets the same system prompt,
tools, secrets, hooks, trust rules, masking and sub-agent host whichever front-end drives it.
What it returns (`WorkspaceSession`) owns every part it opened and closes them in one call.

The caller resolves the model first (`route_for`, or its own flags), so a missing key or an unknown model fails
before anything is written or started. Slow steps (reading a long log, git calls, reading the
secrets file) run on worker threads: the server's loop is shared by every workspace.

Sub-agents: a top-level session gets a host that makes the sub-agent machinery on first real
use (most sessions never start a child); a child session gets the host its parent's manager made
for it.

MCP: every session gets its own `SessionMcp` (xum.workspaces.mcp.lazy), which starts the
workspace's servers with its first message and stops them when the session closes.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from xum.context.workspace import AgentSelection, WorkspaceContext
from xum.engine.agent import AgentSession, SessionSettings, WorkspaceInfo
from xum.engine.events import Event, EventSink, null_sink
from xum.engine.extensions import ToolMiddleware
from xum.engine.route import ModelRoute, resolve_route
from xum.llm.client import LLMClient, open_client
from xum.llm.thinking import DEFAULT_THINKING, parse_thinking
from xum.llm.types import ThinkingLevel
from xum.runtime.base import Runtime
from xum.store.registry import WorkspaceRecord
from xum.store.writerlog import WriterLog
from xum.tools.tasking import SubAgentHost
from xum.workspaces.init_hook import InitHookRun
from xum.workspaces.middleware import TrustView
from xum.workspaces.ports import block_for, ensure_block
from xum.workspaces.safety.approvals import Approver
from xum.workspaces.safety.choice import DEFAULT_CHOICE, SafetyChoice
from xum.workspaces.safety.sandboxing import SandboxMiddleware
from xum.workspaces.state import scratch_dir
from xum.workspaces.subagents.gate import SubagentGate
from xum.workspaces.subagents.host import DeferredHost, TaskSettings
from xum.workspaces.wiring import SessionWiring, wire_session

if TYPE_CHECKING:
    from xum.tools.base import AskUser
    from xum.workspaces.checkouts.protocol import Checkout
    from xum.workspaces.external.agent import ExternalAgent
    from xum.workspaces.lifecycle import CreatedWorkspace
    from xum.workspaces.mcp.lazy import SessionMcp
    from xum.workspaces.service import ProjectPaths
    from xum.workspaces.skill_commands import WorkspaceSkillCommands
    from xum.workspaces.subagents.manager import SubAgentManager

ChildListener = Callable[[str, Event], None]  # (child workspace id, event)
# Makes a child session's host once its wiring is known (the host hands the child's environment
# down to the grandchildren it starts).
HostFactory = Callable[["WorkspaceInfo", SessionWiring], SubAgentHost]


def route_for(record: WorkspaceRecord) -> tuple[ModelRoute, ThinkingLevel]:
    """The model and thinking level a workspace's record names (the defaults where it names
    none). Raises the configuration error that says what to fix; reads config files, so call it
    on a worker thread from a shared loop."""
    route = resolve_route(record.model)
    level = parse_thinking(record.thinking or DEFAULT_THINKING, route.provider, route.model_id)
    return route, level


@dataclass(frozen=True)
class ProjectFacts:
    """What wiring a session needs to know about its project."""

    trust_root: Path
    is_git: bool  # whether the workspace's checkout is a git work tree
    secrets: dict[str, str]


def project_facts(
    record: WorkspaceRecord,
    known: ProjectPaths | None,
    secrets: dict[str, str] | None = None,
    is_git: bool | None = None,
    checkout: Checkout | None = None,
) -> ProjectFacts:
    """Git calls and a file read: run it on a worker thread. `known`, `secrets`, `is_git`: what
    the caller found already (creating the workspace), which is not asked again; `checkout`: the
    workspace's, when the caller has it."""
    from xum.store.secrets import load_project_secrets
    from xum.workspaces.checkouts.factory import checkout_for
    from xum.workspaces.service import project_paths

    paths = known or project_paths(Path(record.project_path))
    if is_git is None:
        checkout = checkout or checkout_for(record)
        # The project's answer holds for a checkout that is the project or was just made from
        # it; any other one is asked (a remote checkout answers from its record).
        same = known is not None or Path(record.path).resolve() == paths.root
        is_git = checkout.is_git(paths.is_git if same and checkout.on_this_machine else None)
    if secrets is None:
        secrets = load_project_secrets(str(paths.trust_root))
    return ProjectFacts(paths.trust_root, is_git, secrets)


@dataclass(eq=False)
class WorkspaceSession:
    """An open session and every part it owns. `aclose` releases them all; the client and the
    runtime are closed only when the session opened them."""

    record: WorkspaceRecord
    agent: AgentSession | ExternalAgent  # an external ACP agent's (xum.workspaces.external)
    runtime: Runtime
    client: LLMClient | None  # None: an external agent, which talks to its own models
    log: WriterLog
    wiring: SessionWiring
    host: SubAgentHost | None
    init: InitHookRun | None = None
    owns_client: bool = True
    owns_runtime: bool = True
    _manager: list[SubAgentManager] = field(default_factory=list)  # made on first use
    mcp: SessionMcp | None = None

    @property
    def subagents(self) -> SubAgentManager | None:
        """The manager of this session's children, once any sub-agent machinery was needed."""
        return self._manager[0] if self._manager else None

    def has_active_children(self) -> bool:
        manager = self.subagents
        if manager is None:
            return False
        try:
            return any(view.active for view in manager.children_of(self.record.id))
        except Exception:
            return False

    def warm_sandbox(self) -> None:
        """A turn is starting: start the session's command sandbox while the model answers
        (`SandboxMiddleware.warm`)."""
        if not isinstance(self.agent, AgentSession):
            return
        from xum.llm.http import first_request_sent

        for layer in self.wiring.middleware:
            if isinstance(layer, SandboxMiddleware):
                # Made and imported once the first request is out (xum run's start-up path).
                layer.warm(self.agent.tool_context, after=first_request_sent)

    async def aclose(self) -> None:
        """Background processes, children, the client (if owned) and the runtime, then the log;
        each is closed even when an earlier one fails."""
        closers = [self.agent.aclose]
        # The session's sandbox (after the agent, which stops its background commands first).
        closers += [m.aclose for m in self.wiring.middleware if isinstance(m, SandboxMiddleware)]
        if self.subagents is not None:
            closers.append(self.subagents.aclose)
        if self.mcp is not None:
            closers.append(self.mcp.aclose)
        if self.owns_client and self.client is not None:
            closers.append(self.client.aclose)
        if self.owns_runtime:
            closers.append(self.runtime.close)
        for close in closers:
            with contextlib.suppress(Exception):
                await close()
        self.log.close()


async def open_workspace_session(
    record: WorkspaceRecord,
    *,
    route: ModelRoute | None,
    thinking: ThinkingLevel | None,
    emit: EventSink = null_sink,
    created: CreatedWorkspace | None = None,
    runtime: Runtime | None = None,
    client: LLMClient | None = None,
    init: InitHookRun | None = None,
    selection: AgentSelection | None = None,
    budget_usd: float | None = None,
    set_exit_code: Callable[[int, str], None] | None = None,
    ask_user: AskUser | None = None,
    make_host: HostFactory | None = None,
    children: ChildListener | None = None,
    is_git: bool | None = None,
    task_settings: TaskSettings | None = None,
    purpose: str = "session",
    hold_writer: bool = False,
    tool_middleware: Sequence[ToolMiddleware] = (),
    goals: bool = False,
    safety: SafetyChoice = DEFAULT_CHOICE,
    approver: Approver | None = None,
    subagent_gate: SubagentGate | None = None,
) -> WorkspaceSession:
    """Open the agent session of `record`.

    `created`: what creating the workspace in this process produced (its open runtime, its init
    hook run, the project facts it learnt). `runtime`, `client`, `init`: parts the caller
    already has (a sub-agent shares its parent's client; a child sharing its parent's checkout
    shares its runtime); a `client` or `runtime` passed in is not closed by the session.
    `selection`: the agent to run (default: the record's agent, else exec). `make_host`: how a
    child session gets its host (from its parent's manager); without it, a top-level host is made
    on first use, whose children's events go to `children`. `is_git`: whether the checkout is a
    git repository, when the caller knows. `hold_writer`: keep the log's writer lock for the
    session's whole life (a front-end that owns the workspace until it exits).
    `tool_middleware`: layers the front-end adds around every tool call, after the workspace's
    own (hooks, masking): the ACP bridge's delegation of files and commands to the editor.
    `goals`: offer the goal tools (a front-end that drives goal continuations: `xum run`, the
    workspace host of the server and `xum acp`).
    session's whole life (a front-end that owns the workspace until it exits). `safety`: the
    front-end's choices over the user's config (sandbox, permission mode, approval policy); a
    child gets its parent's. `approver`: who answers approval requests (the server's browser
    clients); without one, requests are refused (children never have one: their requests are
    refused and they report back). `subagent_gate`: the process's cap on running sub-agents
    (the host's governor), which every child of this session's tree waits on.

    A workspace whose record names an `external_agent` gets that agent instead of xum's engine
    (`xum.workspaces.external`); `route` and `thinking` are then not used (None is fine).
    """
    from xum.workspaces.checkouts.factory import checkout_for

    if record.external_agent is not None:
        from xum.workspaces.external.opening import open_external_session

        return await open_external_session(
            record,
            emit=emit,
            created=created,
            runtime=runtime,
            init=init,
            safety=safety,
            approver=approver,
            purpose=purpose,
            hold_writer=hold_writer,
            is_git=is_git,
        )
    if route is None or thinking is None:
        raise ValueError("open_workspace_session: xum's own agent needs a route and thinking")

    # Looked up once and handed to everything below that needs it (facts, hooks, middleware).
    checkout = checkout_for(record)
    owns_runtime = runtime is None
    if created is not None:
        runtime = runtime or created.runtime
        init = init or created.init
    if runtime is None:
        runtime = checkout.open_runtime()
    owns_client = client is None
    client = client or open_client(route.endpoint)
    known = created.project if created is not None else None
    # Reading a long log is the slow part of opening: off the loop every workspace shares.
    log = await asyncio.to_thread(WriterLog.open, record.id, purpose=f"xum {purpose}")
    manager_box: list[SubAgentManager] = []
    mcp: SessionMcp | None = None
    try:
        if record.ports is None:  # made before port blocks, or while they were off
            record = await asyncio.to_thread(ensure_block, record)
        secrets = created.secrets if created is not None else None
        if known is not None and secrets is not None:
            # Nothing to ask: no thread hop.
            facts = project_facts(record, known, secrets, is_git, checkout)
        else:
            facts = await asyncio.to_thread(project_facts, record, known, secrets, is_git, checkout)
        trust = TrustView(record.project_path, root=facts.trust_root)
        wiring = await wire_session(
            record,
            runtime,
            scratch_dir=scratch_dir(record.id),
            emit=emit,
            init=init,
            secrets=facts.secrets,
            trust=trust,
            checkout=checkout,
            safety=safety,
            approver=approver,
        )
        ports = block_for(record)
        info = WorkspaceInfo(
            record.id, record.name, record.project_path, record.path, runtime.kind, ports
        )
        host: SubAgentHost
        if make_host is not None:
            host = make_host(info, wiring)
        else:
            host = _deferred_host(
                info,
                runtime=runtime,
                route=route,
                client=client,
                thinking=thinking,
                budget_usd=budget_usd,
                base_env=wiring.base_env,
                settings=task_settings or TaskSettings.from_config(),
                listener=children,
                box=manager_box,
                safety=safety,
                gate=subagent_gate,
            )
        agent_box: list[AgentSession] = []
        mcp = _mcp_manager(record, runtime, wiring, trust, emit, agent_box)
        context = WorkspaceContext.for_workspace(
            runtime,
            project_path=record.project_path,
            workspace_name=record.name,
            is_git=facts.is_git,
            mcp=mcp,
            ports=ports is not None,
        )
        agent_id = record.agent or "exec"
        mode = "plan" if agent_id == "plan" else "exec"
        agent = AgentSession(
            workspace=info,
            log=log,
            runtime=runtime,
            route=route,
            client=client,
            settings=SessionSettings(
                thinking=thinking, budget_usd=budget_usd, mode=mode, goals=goals
            ),
            scratch_dir=scratch_dir(record.id),
            emit=emit,
            middleware=[*wiring.middleware, *tool_middleware],
            set_exit_code=set_exit_code,
            base_env=wiring.base_env,
            subagents=host,
            context=context,
            agent=selection or AgentSelection(agent_id=agent_id),
            ask_user=ask_user,
            mcp=mcp,
        )
        agent_box.append(agent)
        if not agent.context.selection.subagent:
            # A sub-agent's messages are written by a model (its parent's task prompt): the
            # commands of a skill run only when a person invokes it.
            context.skill_commands = _skill_commands(trust, wiring, agent)
        if hold_writer:
            await agent.hold_writer(f"xum {purpose}")
    except BaseException:
        for manager in manager_box:
            with contextlib.suppress(Exception):
                await manager.aclose()
        if mcp is not None:
            with contextlib.suppress(Exception):
                await mcp.aclose()
        if owns_client:
            with contextlib.suppress(Exception):
                await client.aclose()
        if owns_runtime:
            with contextlib.suppress(Exception):
                await runtime.close()
        log.close()
        raise
    return WorkspaceSession(
        record,
        agent,
        runtime,
        client,
        log,
        wiring,
        host,
        init=init,
        owns_client=owns_client,
        owns_runtime=owns_runtime,
        _manager=manager_box,
        mcp=mcp,
    )


def _mcp_manager(
    record: WorkspaceRecord,
    runtime: Runtime,
    wiring: SessionWiring,
    trust: TrustView,
    emit: EventSink,
    agent_box: list[AgentSession],
) -> SessionMcp:
    """The session's MCP servers: they run in the workspace directory with the environment
    the session's commands get (xum's own less its provider keys and server token, the
    project's secrets, the `XUM_*` variables)."""
    import os

    from xum.core.ownsecrets import without_own_secrets
    from xum.core.pathtext import checkout_root
    from xum.workspaces.mcp.lazy import SessionMcp

    workspace_path = runtime.workspace_path
    project = record.project_path
    # An SSH workspace's servers run on its host, with the environment its commands get there
    # (not this machine's: its PATH and HOME mean nothing on the host).
    ssh_host = getattr(runtime, "host", None) if runtime.kind == "ssh" else None

    def env() -> dict[str, str]:
        extra = agent_box[0].tool_env() if agent_box else dict(wiring.base_env)
        if ssh_host is not None:
            return extra
        return {**without_own_secrets(os.environ), **extra}

    return SessionMcp(
        workspace_id=record.id,
        workspace_path=workspace_path,
        checkout_root=checkout_root(workspace_path, project),
        runtime_kind=runtime.kind,
        env=env,
        mask=wiring.masker.mask,
        trusted=trust.allowed,
        emit=emit,
        ssh_host=ssh_host,
    )


def _skill_commands(
    trust: TrustView, wiring: SessionWiring, agent: AgentSession
) -> WorkspaceSkillCommands:
    """Who runs the `!`command`` lines of a skill the user invokes: the session's runtime,
    environment, sandbox layer and masking, in trusted projects only (the session's one trust
    view)."""
    from xum.workspaces.skill_commands import WorkspaceSkillCommands

    sandbox = next((m for m in wiring.middleware if isinstance(m, SandboxMiddleware)), None)
    return WorkspaceSkillCommands(
        trusted=trust.allowed,
        context=agent.tool_context,
        sandbox=sandbox,
        mask=wiring.masker.mask,
    )


def _deferred_host(
    info: WorkspaceInfo,
    *,
    runtime: Runtime,
    route: ModelRoute,
    client: LLMClient,
    thinking: ThinkingLevel,
    budget_usd: float | None,
    base_env: dict[str, str],
    settings: TaskSettings,
    listener: ChildListener | None,
    box: list[SubAgentManager],
    safety: SafetyChoice,
    gate: SubagentGate | None = None,
) -> DeferredHost:
    """A top-level session's host; the manager (and its imports) is made on first real use."""

    def make() -> SubAgentHost:
        manager = subagent_manager(settings=settings, listener=listener, gate=gate)
        box.append(manager)
        return manager.host_for(
            info,
            runtime=runtime,
            route=route,
            client=client,
            thinking=thinking,
            budget_usd=budget_usd,
            base_env=base_env,
            safety=safety,
        )

    return DeferredHost(info.id, make, settings=settings)


def subagent_manager(
    *,
    settings: TaskSettings | None = None,
    listener: ChildListener | None = None,
    gate: SubagentGate | None = None,
) -> SubAgentManager:
    """A manager of sub-agents whose sessions this assembly opens (the manager is handed the
    opener instead of importing this module, which makes it)."""
    from typing import cast

    from xum.workspaces.subagents.manager import SubAgentManager
    from xum.workspaces.subagents.opener import SessionOpener

    # A child's session is xum's engine or, for a child whose record names an external agent,
    # that agent: both offer what the opener's protocol (`ChildSession`) asks for.
    opener = cast("SessionOpener", open_workspace_session)
    return SubAgentManager(open_session=opener, settings=settings, listener=listener, gate=gate)
