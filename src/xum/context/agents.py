"""Agent definitions: Markdown files whose frontmatter sets metadata and tool policy and whose
body is the agent's instructions.

Three scopes, highest first: the project (`<checkout>/.xum/agents/*.md`), the user
(`$XUM_ROOT/agents/*.md`) and xum's built-ins. Only direct `.md` children count; the file name is
the agent id. A definition overrides lower-scope definitions of the same id.

Inheritance (`base:`): a definition whose base is its own id extends the same id from a lower
scope (that is how a project extends the built-in `exec`); a different id is looked up at the
definition's own scope or lower, so a built-in can never pull in a project file. Chains are
followed 10 levels deep at most; a cycle is reported. Each field the child leaves unset is
inherited; the body is appended to the base's body unless `prompt.append: false`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from xum.context import frontmatter as fm
from xum.context.files import MISSING, FileView, Sig, decode, dir_sig, find_file, trusted
from xum.core.errors import XumError

AGENT_ID_RE = re.compile(r"^[a-z0-9]+(?:[a-z0-9_-]*[a-z0-9])?$")
MAX_ID_CHARS = 64
MAX_AGENT_BYTES = 1024 * 1024
MAX_BASE_DEPTH = 10

SCOPE_BUILTIN, SCOPE_GLOBAL, SCOPE_PROJECT = 0, 1, 2
SCOPE_NAMES = {SCOPE_BUILTIN: "built-in", SCOPE_GLOBAL: "global", SCOPE_PROJECT: "project"}

# Always available: a definition cannot switch these off.
PROTECTED_AGENTS = frozenset({"exec", "plan", "compact"})
FALLBACK_AGENT = "exec"


class AgentError(XumError):
    code = "agent_error"


def valid_agent_id(agent_id: str) -> bool:
    return len(agent_id) <= MAX_ID_CHARS and AGENT_ID_RE.match(agent_id) is not None


@dataclass(frozen=True, slots=True)
class ToolLayer:
    """The `tools` block of one definition."""

    add: tuple[str, ...] = ()
    remove: tuple[str, ...] = ()
    require: tuple[str, ...] | None = None  # None: the layer says nothing about `require`


@dataclass(frozen=True, slots=True)
class AgentDefinition:
    """One file, as written (nothing inherited yet)."""

    id: str
    scope: int
    source: str  # where it came from, for messages: a path or "built-in"
    name: str | None = None
    description: str | None = None
    base: str | None = None
    disabled: bool = False
    hidden: bool | None = None
    color: str | None = None
    prompt_append: bool = True
    runnable: bool | None = None
    workflow_runnable: bool | None = None
    skip_init_hook: bool | None = None
    append_prompt: str | None = None
    ai_model: str | None = None
    ai_thinking: str | None = None
    tools: ToolLayer | None = None
    body: str = ""

    @property
    def off(self) -> bool:
        return self.disabled


@dataclass(frozen=True, slots=True)
class ResolvedAgent:
    """A definition with its inheritance chain applied."""

    id: str
    name: str
    description: str
    scope: int
    source: str
    chain: tuple[str, ...]  # ids from the root base to this agent
    body: str
    append_prompt: str
    hidden: bool
    color: str | None
    runnable: bool
    workflow_runnable: bool
    skip_init_hook: bool
    ai_model: str | None
    ai_thinking: str | None
    tool_layers: tuple[ToolLayer | None, ...]  # base first


def definition_from_data(
    agent_id: str,
    scope: int,
    source: str,
    data: dict[str, Any] | None,
    body: str,
    warn: Callable[[str], None],
) -> AgentDefinition:
    """Build a definition from parsed frontmatter; unknown keys are ignored."""
    data = data or {}
    ui = fm.section(data, "ui")
    prompt = fm.section(data, "prompt")
    sub = fm.section(data, "subagent")
    ai = fm.section(data, "ai")
    tools: ToolLayer | None = None
    if "tools" in data and data["tools"] is not None:
        block = fm.section(data, "tools")
        if not block and data["tools"] != {}:
            warn(f"{source}: `tools` must be a mapping with add/remove/require lists; ignored")
        tools = ToolLayer(
            add=fm.string_list(block.get("add")) or (),
            remove=fm.string_list(block.get("remove")) or (),
            require=fm.string_list(block.get("require")) if "require" in block else None,
        )
    disabled = data.get("disabled") is True
    if disabled and agent_id in PROTECTED_AGENTS:
        warn(f"{source}: the {agent_id} agent cannot be disabled; this file is ignored")
    append = fm.optional_bool(prompt.get("append"))
    return AgentDefinition(
        id=agent_id,
        scope=scope,
        source=source,
        name=fm.optional_str(data.get("name")),
        description=fm.optional_str(data.get("description")),
        base=fm.optional_str(data.get("base")),
        disabled=disabled,
        hidden=fm.optional_bool(ui.get("hidden")),
        color=fm.optional_str(ui.get("color")),
        prompt_append=True if append is None else append,
        runnable=fm.optional_bool(sub.get("runnable")),
        workflow_runnable=fm.optional_bool(sub.get("workflow_runnable")),
        skip_init_hook=fm.optional_bool(sub.get("skip_init_hook")),
        append_prompt=fm.optional_str(sub.get("append_prompt")),
        ai_model=fm.optional_str(ai.get("model")),
        # YAML 1.1 reads a bare `off` as false.
        ai_thinking="off"
        if ai.get("thinkingLevel") is False
        else fm.optional_str(ai.get("thinkingLevel")),
        tools=tools,
        body=body.strip("\n"),
    )


def parse_agent_file(
    agent_id: str, scope: int, source: str, text: str, warn: Callable[[str], None]
) -> AgentDefinition | None:
    try:
        data, body = fm.parse_document(text)
    except fm.FrontmatterError as exc:
        warn(f"{source}: {exc}; the agent is skipped")
        return None
    return definition_from_data(agent_id, scope, source, data, body, warn)


@dataclass
class AgentCatalog:
    """Every definition found, by scope and id, and what went wrong while reading them."""

    by_scope: dict[int, dict[str, AgentDefinition]] = field(
        default_factory=lambda: {SCOPE_BUILTIN: {}, SCOPE_GLOBAL: {}, SCOPE_PROJECT: {}}
    )
    diagnostics: list[str] = field(default_factory=list)

    def add(self, definition: AgentDefinition) -> None:
        if definition.disabled and definition.id in PROTECTED_AGENTS:
            return  # an attempt to switch off exec, plan or compact: the file does not count
        self.by_scope[definition.scope][definition.id] = definition

    def top(self, agent_id: str) -> AgentDefinition | None:
        """The highest-scope definition of `agent_id` (possibly a disabled one)."""
        for scope in (SCOPE_PROJECT, SCOPE_GLOBAL, SCOPE_BUILTIN):
            found = self.by_scope[scope].get(agent_id)
            if found is not None:
                return found
        return None

    def ids(self) -> list[str]:
        seen: dict[str, None] = {}
        for scope in (SCOPE_PROJECT, SCOPE_GLOBAL, SCOPE_BUILTIN):
            for agent_id in sorted(self.by_scope[scope]):
                seen.setdefault(agent_id, None)
        return list(seen)

    def exists(self, agent_id: str) -> bool:
        top = self.top(agent_id)
        return top is not None and not top.off

    def resolve(self, agent_id: str) -> ResolvedAgent:
        """The agent with its chain applied. AgentError when it is missing, disabled or its
        chain is broken (a base that is missing, too deep, or a cycle)."""
        top = self.top(agent_id)
        if top is None:
            raise AgentError(f"no agent named {agent_id!r}", hint=self._known_hint())
        if top.off:
            raise AgentError(
                f"the agent {agent_id!r} is disabled ({top.source})", hint=self._known_hint()
            )
        chain = [top]
        seen = {(top.scope, top.id)}
        current = top
        while current.base:
            if len(chain) > MAX_BASE_DEPTH:
                raise AgentError(
                    f"the agent {agent_id!r} inherits more than {MAX_BASE_DEPTH} levels deep "
                    f"({' -> '.join(d.id for d in chain)})"
                )
            base = self._find_base(current)
            if base is None:
                raise AgentError(
                    f"{current.source}: base agent {current.base!r} not found "
                    f"({self._base_rule(current)})"
                )
            if (base.scope, base.id) in seen:
                names = " -> ".join(f"{d.id} ({SCOPE_NAMES[d.scope]})" for d in [*chain, base])
                raise AgentError(f"the agent {agent_id!r} has a cycle in its bases: {names}")
            seen.add((base.scope, base.id))
            chain.append(base)
            current = base
        return merge_chain(list(reversed(chain)))

    def _find_base(self, current: AgentDefinition) -> AgentDefinition | None:
        assert current.base is not None
        if current.base == current.id:
            scopes = [s for s in (SCOPE_PROJECT, SCOPE_GLOBAL, SCOPE_BUILTIN) if s < current.scope]
        else:
            scopes = [s for s in (SCOPE_PROJECT, SCOPE_GLOBAL, SCOPE_BUILTIN) if s <= current.scope]
        for scope in scopes:
            found = self.by_scope[scope].get(current.base)
            if found is not None and not found.off:
                return found
        return None

    @staticmethod
    def _base_rule(current: AgentDefinition) -> str:
        if current.base == current.id:
            return "a base with the agent's own id is looked up in lower scopes only"
        return f"looked up at the {SCOPE_NAMES[current.scope]} scope and below"

    def _known_hint(self) -> str:
        return "known agents: " + ", ".join(i for i in self.ids() if self.exists(i))


def merge_chain(chain: Sequence[AgentDefinition]) -> ResolvedAgent:
    """Fold a chain (root base first) into one agent: the child's value wins where it set one."""

    def last(getter: Callable[[AgentDefinition], Any]) -> Any:
        for definition in reversed(chain):
            value = getter(definition)
            if value is not None:
                return value
        return None

    body = ""
    for definition in chain:
        if definition is chain[0] or not definition.prompt_append:
            body = definition.body
        elif definition.body:
            body = f"{body}\n\n{definition.body}" if body else definition.body
    child = chain[-1]
    return ResolvedAgent(
        id=child.id,
        name=last(lambda d: d.name) or child.id,
        description=last(lambda d: d.description) or "",
        scope=child.scope,
        source=child.source,
        chain=tuple(d.id for d in chain),
        body=body,
        append_prompt=(last(lambda d: d.append_prompt) or "").strip("\n"),
        hidden=bool(last(lambda d: d.hidden)),
        color=last(lambda d: d.color),
        runnable=bool(last(lambda d: d.runnable)),
        workflow_runnable=bool(last(lambda d: d.workflow_runnable)),
        skip_init_hook=bool(last(lambda d: d.skip_init_hook)),
        ai_model=last(lambda d: d.ai_model),
        ai_thinking=last(lambda d: d.ai_thinking),
        tool_layers=tuple(d.tools for d in chain),
    )


# Discovery -------------------------------------------------------------------------------------


@dataclass
class _DirCache:
    """What an agent directory held when last read."""

    sig: Sig = MISSING
    names: list[str] = field(default_factory=list)
    files: dict[str, tuple[Sig, AgentDefinition | None, list[str]]] = field(default_factory=dict)


class AgentDirectory:
    """One scope's directory of agent files, re-read only where signatures moved."""

    def __init__(self, view: FileView, path: str, scope: int, fence: str | None) -> None:
        self.view = view
        self.path = path
        self.scope = scope
        self.fence = fence  # symlinks must stay inside this directory tree (None: anywhere)
        self._cache = _DirCache()
        self.reads = 0  # files parsed so far: moves whenever a definition may have changed

    async def load(self, catalog: AgentCatalog) -> tuple[Any, ...]:
        """Add this directory's definitions to `catalog`; returns the signature it saw."""
        cache = self._cache
        sig = await dir_sig(self.view, self.path)
        if not trusted(cache.sig, sig):
            names = await self.view.list_dir(self.path) if sig.exists else []
            cache.names = [n for n in (names or []) if n.endswith(".md")]
            cache.sig = sig
        seen: list[Any] = [sig]
        files: dict[str, tuple[Sig, AgentDefinition | None, list[str]]] = {}
        for filename in cache.names:
            agent_id = filename[:-3]
            path = f"{self.path}/{filename}"
            if not valid_agent_id(agent_id):
                catalog.diagnostics.append(
                    f"{path}: {agent_id!r} is not a valid agent id (lowercase letters, digits, "
                    "'-' and '_', starting and ending with a letter or digit, at most 64); skipped"
                )
                continue
            entry = await self._entry(path, agent_id)
            files[filename] = entry
            seen.append((filename, entry[0]))
            catalog.diagnostics.extend(entry[2])
            if entry[1] is not None:
                catalog.add(entry[1])
        cache.files = files
        seen.append(self.reads)
        return tuple(seen)

    async def _entry(
        self, path: str, agent_id: str
    ) -> tuple[Sig, AgentDefinition | None, list[str]]:
        found = await find_file(self.view, path, self.fence)
        if found is None:
            return (MISSING, None, [])
        if isinstance(found, str):
            return (MISSING, None, [found])
        cached = self._cache.files.get(path.rsplit("/", 1)[-1])
        if cached is not None and trusted(cached[0], found.sig):
            return cached
        problems: list[str] = []
        self.reads += 1
        if found.sig.size > MAX_AGENT_BYTES:
            problems.append(
                f"{path}: {found.sig.size:,} bytes is over the 1 MB limit for agent files; skipped"
            )
            return (found.sig, None, problems)
        try:
            text = decode(await self.view.read_bytes(found.path, limit=MAX_AGENT_BYTES + 1))
        except OSError as exc:
            return (found.sig, None, [f"{path}: cannot be read ({exc.strerror or exc}); skipped"])
        definition = parse_agent_file(agent_id, self.scope, path, text, problems.append)
        return (found.sig, definition, problems)
