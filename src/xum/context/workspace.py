"""Everything a workspace's next request could be told, computed from the files as they are now.

`WorkspaceContext.live(selection, model)` returns a `LiveContext`: the resolved agent and its
tool policy, every system-prompt section, the tool specs with their `Tool:` notes, and digests of
all of it. The engine compares those digests with what it froze for the current context
segment (`xum.context.frozen`) and decides between "nothing changed", "send a change row" and
"start a new segment".

It runs before every model request, so it is built to be cheap when nothing changed: each loader
stats its files and compares signatures, and the assembled result is cached on the combined
signature. On a warm path that is a few dozen `stat` calls and some tuple comparisons.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import orjson

from xum.context import builtin
from xum.context.agents import (
    FALLBACK_AGENT,
    SCOPE_BUILTIN,
    SCOPE_GLOBAL,
    SCOPE_PROJECT,
    AgentCatalog,
    AgentDirectory,
    AgentError,
    ResolvedAgent,
    definition_from_data,
    merge_chain,
)
from xum.context.environment import environment_block
from xum.context.experiments import claude_compatibility
from xum.context.files import LocalFiles, QuickCheck, RecordingView, RuntimeFiles
from xum.context.instructions import DEDICATED_KINDS, InstructionsLoader, model_matches
from xum.context.markup import split_scoped
from xum.context.prelude import PRELUDE
from xum.context.skills import SkillCatalog, SkillLoader
from xum.context.system_prompt import (
    agent_block,
    assemble,
    mode_block,
    model_block,
    plan_block,
    spawnable_agents_note,
    tool_description,
    tool_note,
)
from xum.context.toolpolicy import TASK_TOOL, PolicyContext, ToolPolicy, resolve_tool_policy
from xum.llm.types import ToolSpec
from xum.runtime.base import Runtime, RuntimeKind
from xum.tools import registry
from xum.tools.mcp_names import FAMILY_TOOLS, PROMPT_TOOL, SEARCH_TOOL, is_family

if TYPE_CHECKING:  # the MCP records load only in sessions that have MCP servers
    from xum.context.skill_access import CatalogSkills
    from xum.context.skill_directives import SkillCommands
    from xum.tools.mcp_host import McpHost, McpPrompt, McpSnapshot

SKILL_READ_TOOL = "agent_skill_read"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()[:32]


@dataclass(frozen=True, slots=True)
class AgentSelection:
    """Which agent a session runs, and where it sits in a task tree."""

    agent_id: str = FALLBACK_AGENT
    subagent: bool = False
    task_depth: int = 0
    max_task_depth: int | None = None
    best_of: tuple[int, int] | None = None  # (i, n): candidate i of a best-of-n batch


@dataclass
class LiveContext:
    """What the next request would be told (see the module docstring)."""

    agent: ResolvedAgent
    mode: str  # "plan" when the agent is plan-like, else "exec"
    policy: ToolPolicy
    sections: dict[str, str]  # by name, see `xum.context.system_prompt.SECTION_ORDER`
    tools: list[ToolSpec]  # the offered tools, `Tool:` notes applied
    tool_notes: dict[str, str]  # tool name -> the text after its description (tools in the set)
    plan_file: str | None = None
    skills: SkillCatalog | None = None
    diagnostics: tuple[str, ...] = ()
    fallback_from: str | None = None  # a stored agent that vanished (replaced by exec)
    # MCP: every MCP tool this agent may use, in the tool list or not (`tools` holds them only
    # when tool search is off), whether tool search keeps them out, and the servers' prompts.
    mcp_catalog: tuple[ToolSpec, ...] = ()
    mcp_deferred: bool = False
    mcp_prompts: tuple[McpPrompt, ...] = ()
    system: str = field(init=False)
    digests: dict[str, str] = field(init=False)  # channel -> digest (sections, "tool:<name>")
    tool_identity: str = field(init=False)

    def __post_init__(self) -> None:
        self.system = assemble(self.sections)
        self.digests = {name: digest(text) for name, text in self.sections.items()}
        for name, note in self.tool_notes.items():
            self.digests[f"tool:{name}"] = digest(note)
        if self.mcp_catalog:
            from xum.context.mcp_context import CATALOG_CHANNEL, catalog_digest

            self.digests[CATALOG_CHANNEL] = catalog_digest(self.mcp_catalog)
        self.tool_identity = tool_identity(self.tools)

    @property
    def required_tool(self) -> str | None:
        return self.policy.required


def tool_identity(tools: Sequence[ToolSpec]) -> str:
    """What must stay equal for two tool lists to share a segment: names and schemas (not
    descriptions, whose changes travel as rows). The MCP family is left out: its changes travel
    as rows too (see `xum.context.mcp_context`)."""
    return hashlib.sha256(
        orjson.dumps([(t.name, t.parameters) for t in tools if not is_family(t.name)])
    ).hexdigest()[:32]


class ContextProvider(Protocol):
    """What the engine asks before each request (a `WorkspaceContext`, or `StaticContext`)."""

    # Runs the `!`command`` lines of a skill the user invokes (None: they stay text).
    skill_commands: SkillCommands | None

    async def live(self, selection: AgentSelection, model_string: str) -> LiveContext: ...

    async def skill_catalog(self) -> SkillCatalog | None: ...


class StaticContext:
    """A fixed system prompt and tool list (tests, embedded uses): nothing is discovered."""

    skill_commands: SkillCommands | None = None

    def __init__(self, system_prompt: str, tools: Sequence[str]) -> None:
        self.system_prompt = system_prompt
        self.tool_names = list(tools)
        self._live: LiveContext | None = None

    async def live(self, selection: AgentSelection, model_string: str) -> LiveContext:
        if self._live is None or self._live.agent.id != selection.agent_id:
            agent = ResolvedAgent(
                id=selection.agent_id,
                name=selection.agent_id,
                description="",
                scope=0,
                source="static",
                chain=(selection.agent_id,),
                body="",
                append_prompt="",
                hidden=False,
                color=None,
                runnable=False,
                workflow_runnable=False,
                skip_init_hook=False,
                ai_model=None,
                ai_thinking=None,
                tool_layers=(),
            )
            policy = ToolPolicy(tuple(self.tool_names), None, False, None, False)
            self._live = LiveContext(
                agent=agent,
                mode="exec",
                policy=policy,
                sections={"prelude": self.system_prompt},
                tools=[ToolSpec(**registry.tool_schema(n)) for n in self.tool_names],
                tool_notes={},
            )
        return self._live

    async def skill_catalog(self) -> SkillCatalog | None:
        return None


_BUILTIN_CATALOG: AgentCatalog | None = None


def builtin_agents() -> AgentCatalog:
    global _BUILTIN_CATALOG
    if _BUILTIN_CATALOG is None:
        catalog = AgentCatalog()
        for entry in builtin.builtin_index()["agents"]:
            catalog.add(
                definition_from_data(
                    entry["id"],
                    SCOPE_BUILTIN,
                    "built-in",
                    entry["data"],
                    entry["body"],
                    catalog.diagnostics.append,
                )
            )
        _BUILTIN_CATALOG = catalog
    return _BUILTIN_CATALOG


@dataclass(frozen=True, slots=True)
class WorkspaceFacts:
    """What the context needs to know about the workspace."""

    runtime: Runtime
    workspace_path: str  # the working directory (runtime namespace)
    checkout_root: str  # where upward searches stop (the git toplevel, or the workspace)
    project_path: str
    workspace_name: str
    is_git: bool
    xum_root: str
    home: str
    plan_file: str  # where this workspace's plan lives
    ports: bool = False  # the workspace has a port block (`$XUM_PORT`), fixed for its life

    @property
    def runtime_kind(self) -> RuntimeKind:
        return self.runtime.kind


class WorkspaceContext:
    # Set by the workspace layer that opens the session (`xum.workspaces.skill_commands`).
    skill_commands: SkillCommands | None = None

    def __init__(
        self,
        facts: WorkspaceFacts,
        *,
        available_tools: Callable[[], Sequence[str]] = registry.advertised_tool_names,
        mcp: McpHost | None = None,
    ) -> None:
        self.facts = facts
        self.available_tools = available_tools
        self.mcp = mcp  # the session's MCP servers (None: no MCP in this session)
        self._mcp_specs: tuple[int, dict[str, ToolSpec]] = (-1, {})
        # Every stat goes through a recording view, so the next request can first re-check
        # just the paths the last discovery looked at (see QuickCheck).
        project = self._project = RecordingView(RuntimeFiles(facts.runtime))
        local = self._local = RecordingView(LocalFiles())
        self.agent_dirs = [
            AgentDirectory(
                project,
                f"{facts.checkout_root.rstrip('/')}/.xum/agents",
                SCOPE_PROJECT,
                facts.checkout_root,
            ),
            AgentDirectory(local, f"{facts.xum_root.rstrip('/')}/agents", SCOPE_GLOBAL, None),
        ]
        self.instructions = InstructionsLoader(
            project=project,
            checkout_root=facts.checkout_root,
            cwd=facts.workspace_path,
            local=local,
            xum_root=facts.xum_root,
        )
        self.skills = SkillLoader(
            project=project,
            checkout_root=facts.checkout_root,
            cwd=facts.workspace_path,
            local=local,
            xum_root=facts.xum_root,
            home=facts.home,
        )
        self._environment = environment_block(
            facts.runtime_kind, is_git=facts.is_git, ports=facts.ports
        )
        self._key: tuple[Any, ...] | None = None
        self._live: LiveContext | None = None
        self._quick: tuple[tuple[Any, ...], QuickCheck] | None = None
        self._parts: tuple[Any, ...] = (None, None, None)
        self._catalog: tuple[tuple[Any, ...], AgentCatalog] | None = None

    async def agent_catalog(self) -> tuple[AgentCatalog, tuple[Any, ...]]:
        scratch = AgentCatalog()
        sigs = tuple([await d.load(scratch) for d in self.agent_dirs])
        if self._catalog is not None and self._catalog[0] == sigs:
            return self._catalog[1], sigs
        catalog = AgentCatalog()
        base = builtin_agents()
        for definition in base.by_scope[SCOPE_BUILTIN].values():
            catalog.add(definition)
        for scope in (SCOPE_GLOBAL, SCOPE_PROJECT):
            for definition in scratch.by_scope[scope].values():
                catalog.add(definition)
        catalog.diagnostics.extend(scratch.diagnostics)
        self._catalog = (sigs, catalog)
        return catalog, sigs

    async def skill_catalog(self) -> SkillCatalog:
        catalog, _ = await self.skills.load()
        return catalog

    async def list_agents(self) -> list[ResolvedAgent]:
        """Agents a user can pick: enabled, resolvable and not hidden."""
        catalog, _ = await self.agent_catalog()
        return [a for a in usable_agents(catalog, catalog.ids()) if not a.hidden]

    async def live(self, selection: AgentSelection, model_string: str) -> LiveContext:
        snapshot = await self.mcp.snapshot() if self.mcp is not None else None
        if snapshot is not None and not snapshot.configured:
            snapshot = None
        mcp_specs = self._mcp_tool_specs(snapshot)
        available = tuple(self.available_tools())
        if snapshot is not None:
            available += tuple(mcp_specs)
        else:
            available = tuple(n for n in available if n not in FAMILY_TOOLS)
        revision = snapshot.revision if snapshot is not None else -1
        # The Claude-compatibility switch adds or removes skill roots: part of the request, so
        # the quick re-check (which stats only what the last discovery looked at) sees it.
        request = (selection, model_string, available, revision, claude_compatibility())
        quick = self._quick
        if (
            quick is not None
            and quick[0] == request
            and self._live is not None
            and await quick[1].unchanged()
        ):
            return self._live
        seen: list[Any] = []
        self._project.recording = self._local.recording = seen
        try:
            catalog, _ = await self.agent_catalog()
            instructions, _ = await self.instructions.load()
            skills, _ = await self.skills.load()
        finally:
            self._project.recording = self._local.recording = None
        self._quick = (request, QuickCheck(seen))
        # The loaders hand back the very same objects when nothing was read again.
        parts = (catalog, instructions, skills)
        if (
            request == self._key
            and self._live is not None
            and all(a is b for a, b in zip(parts, self._parts, strict=True))
        ):
            return self._live

        diagnostics: list[str] = [*catalog.diagnostics, *instructions.diagnostics]
        diagnostics.extend(str(p) for p in skills.problems)
        fallback_from = None
        try:
            agent = catalog.resolve(selection.agent_id)
        except AgentError as exc:
            if selection.subagent:
                raise
            diagnostics.append(f"{exc.message}; using the {FALLBACK_AGENT} agent instead")
            fallback_from = selection.agent_id
            try:
                agent = catalog.resolve(FALLBACK_AGENT)
            except AgentError:
                agent = merge_chain([builtin_agents().by_scope[SCOPE_BUILTIN][FALLBACK_AGENT]])
        policy = resolve_tool_policy(
            agent.tool_layers,
            available,
            PolicyContext(selection.subagent, selection.task_depth, selection.max_task_depth),
            warn=lambda message: diagnostics.append(f"{agent.source}: {message}"),
        )
        mode = "plan" if policy.plan_like else "exec"

        # The agent body is a dedicated instruction source: its scoped sections come first.
        body, own_sections = split_scoped(agent.body, DEDICATED_KINDS)
        agent = _with_body(agent, body)
        own_model = [
            s.body for s in own_sections if s.kind == "model" and model_matches(s.key, model_string)
        ]
        mode_keys = {mode, agent.id.lower()}
        own_mode = [
            s.body for s in own_sections if s.kind == "mode" and s.key.strip().lower() in mode_keys
        ]
        model_text = "\n\n".join(
            p for p in (*own_model, instructions.model_text(model_string)) if p
        )
        mode_text = "\n\n".join(p for p in (*own_mode, instructions.mode_text(mode, agent.id)) if p)

        notes: dict[str, list[str]] = {}
        for section in own_sections:
            if section.kind == "tool" and section.body:
                notes.setdefault(section.key.strip().lower(), []).append(section.body)
        for name, text in instructions.tool_texts().items():
            if text:
                notes.setdefault(name, []).append(text)
        tools: list[ToolSpec] = []
        tool_notes: dict[str, str] = {}
        mcp_catalog: list[ToolSpec] = []
        for name in policy.tools:
            mcp_spec = mcp_specs.get(name)
            if mcp_spec is not None:
                note = tool_note("\n\n".join(notes.get(name.lower(), [])))
                if note:
                    tool_notes[name] = note
                    mcp_spec = ToolSpec(
                        name, tool_description(mcp_spec.description, note), mcp_spec.parameters
                    )
                mcp_catalog.append(mcp_spec)
                if snapshot is not None and not snapshot.tool_search:
                    tools.append(mcp_spec)
                continue
            schema = registry.tool_schema(name)
            agents = ""
            if name == TASK_TOOL:
                allowed = policy.spawnable_agents
                agents = spawnable_agents_note(
                    [
                        (a.id, a.description)
                        for a in runnable_agents(catalog)
                        if allowed is None or a.id in allowed
                    ]
                )
            note = tool_note("\n\n".join(notes.get(name.lower(), [])), agents)
            if note:
                tool_notes[name] = note
            tools.append(
                ToolSpec(name, tool_description(schema["description"], note), schema["parameters"])
            )

        plan_file = self.facts.plan_file if policy.plan_file_only else None
        sections = {
            "prelude": PRELUDE,
            "environment": self._environment,
            "agent": agent_block(
                agent,
                subagent=selection.subagent,
                trusted=agent.scope == SCOPE_BUILTIN,
                candidate=selection.best_of,
            ),
            "instructions": instructions.general_block(),
            "model": model_block(model_string, model_text),
            "mode": mode_block(mode, mode_text),
            "skills": skills.index_block() if SKILL_READ_TOOL in policy.tools else "",
            "mcp": self._mcp_section(snapshot, policy.tools, bool(mcp_catalog)),
            "plan": plan_block(plan_file) if plan_file else "",
        }
        live = LiveContext(
            agent=agent,
            mode=mode,
            policy=policy,
            sections=sections,
            tools=tools,
            tool_notes=tool_notes,
            plan_file=plan_file,
            skills=skills,
            diagnostics=tuple(dict.fromkeys(diagnostics)),
            fallback_from=fallback_from,
            mcp_catalog=tuple(mcp_catalog),
            mcp_deferred=snapshot.tool_search if snapshot is not None else False,
            mcp_prompts=snapshot.prompts if snapshot and PROMPT_TOOL in policy.tools else (),
        )
        self._key, self._parts, self._live = request, parts, live
        return live

    def _mcp_tool_specs(self, snapshot: McpSnapshot | None) -> dict[str, ToolSpec]:
        """The snapshot's tools as specs, built once per snapshot revision."""
        if snapshot is None or not snapshot.tools:
            return {}
        if self._mcp_specs[0] != snapshot.revision:
            from xum.context.mcp_context import tool_specs

            self._mcp_specs = (snapshot.revision, tool_specs(snapshot))
        return self._mcp_specs[1]

    @staticmethod
    def _mcp_section(snapshot: McpSnapshot | None, offered: Sequence[str], has_tools: bool) -> str:
        if snapshot is None or not (has_tools or SEARCH_TOOL in offered):
            return ""
        from xum.context.mcp_context import section

        return section(snapshot, deferred=snapshot.tool_search, prompts=PROMPT_TOOL in offered)

    def skill_access(self) -> CatalogSkills:
        from xum.context.skill_access import CatalogSkills

        return CatalogSkills(self)

    @classmethod
    def for_workspace(
        cls,
        runtime: Runtime,
        *,
        project_path: str,
        workspace_name: str,
        is_git: bool,
        workspace_path: str | None = None,
        mcp: McpHost | None = None,
        ports: bool = False,
    ) -> WorkspaceContext:
        """The context of a workspace's checkout, read through `runtime` (global files under
        $XUM_ROOT and HOME, the plan under $XUM_ROOT/plans). `workspace_path`: the working
        directory, by default the runtime's. Upward searches stop at the project (the git
        toplevel) when the workspace lies inside it, else at the workspace itself."""
        from xum.context.plan import plan_file_path
        from xum.core.paths import xum_root
        from xum.core.pathtext import checkout_root

        if workspace_path is None:
            workspace_path = runtime.workspace_path
        root = checkout_root(workspace_path, project_path)
        return cls(
            WorkspaceFacts(
                runtime=runtime,
                workspace_path=workspace_path,
                checkout_root=root,
                project_path=project_path,
                workspace_name=workspace_name,
                is_git=is_git,
                xum_root=str(xum_root()),
                home=os.path.expanduser("~"),
                plan_file=plan_file_path(project_path, workspace_name),
                ports=ports,
            ),
            mcp=mcp,
        )


async def agent_ai_defaults(directory: str, agent_id: str) -> tuple[str | None, str | None]:
    """(model, thinking level) an agent's frontmatter `ai` block asks for, looked up for a
    directory on this machine before any workspace exists (`xum run` resolves its model first).
    (None, None) when the agent sets nothing or cannot be resolved."""
    from xum.core.paths import xum_root
    from xum.runtime.local import LocalRuntime

    # The nearest directory holding `.git` (no git subprocess on the start-up path).
    start = Path(directory).resolve()
    root = str(next((d for d in (start, *start.parents) if (d / ".git").exists()), start))
    context = WorkspaceContext(
        WorkspaceFacts(
            runtime=LocalRuntime(root, root),
            workspace_path=root,
            checkout_root=root,
            project_path=root,
            workspace_name="",
            is_git=False,
            xum_root=str(xum_root()),
            home=os.path.expanduser("~"),
            plan_file="",
        )
    )
    catalog, _ = await context.agent_catalog()
    try:
        agent = catalog.resolve(agent_id)
    except AgentError:
        return None, None
    return agent.ai_model, agent.ai_thinking


def usable_agents(catalog: AgentCatalog, ids: Iterable[str]) -> Iterator[ResolvedAgent]:
    """The agents of `ids` (in that order) that are enabled and resolve; a broken one is
    skipped (its problem is among the catalog's diagnostics)."""
    for agent_id in ids:
        if not catalog.exists(agent_id):
            continue
        try:
            yield catalog.resolve(agent_id)
        except AgentError:
            continue


def runnable_agents(catalog: AgentCatalog) -> list[ResolvedAgent]:
    """The catalog's enabled, resolvable agents with `subagent.runnable`, by id."""
    return [a for a in usable_agents(catalog, sorted(catalog.ids())) if a.runnable]


def _with_body(agent: ResolvedAgent, body: str) -> ResolvedAgent:
    if body == agent.body:
        return agent
    from dataclasses import replace

    return replace(agent, body=body)
