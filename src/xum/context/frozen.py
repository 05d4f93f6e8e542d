"""Frozen context sections: keep the cached prompt prefix byte-stable within a context segment.

A *context segment* runs from a `context_frozen` frame to the next one (or to a compaction or
reset boundary, after which the next request starts a new segment). The `context_frozen` frame
holds the exact system prompt and tool list (names, schemas, descriptions with their `Tool:`
notes) the segment sends, plus a digest of every section they were built from. Every request of
the segment sends exactly those bytes, also after a restart: a new engine over the same log
reads them back from the frame instead of rebuilding them.

When a source changes mid-segment (an AGENTS.md edit, a skill added or removed, a `Tool:`
section, another agent with the same tools, the plan file edited outside xum), the engine
appends one `synthetic_message` row (kind `context_update`) at the end of the history, holding
the new text of every changed section and their new digests. The row is in the log, so every
later rebuild of the history has it in the same place, and each request stays a byte prefix of
the next. The next segment (after a compaction or reset) folds the current state into its new
frozen sections.

Only a change of the tool set itself (names or schemas, e.g. switching between plan and exec)
cannot travel as a row: it starts a new segment at once, which breaks the prefix one time. The
`context_frozen` frame records the reason (`tool_set_changed`), and `prefix_breaks` counts them.
MCP tools are the exception (`xum.context.mcp_context`): a server whose tools change mid-segment
is one change row, and only tools the model loads with `tool_catalog_search` (recorded in that
tool's result, `meta.mcp_loaded`) start a new segment, with the reason `mcp_tools_loaded`.
The one other MCP break: a segment frozen without any MCP tool family member (no server was
configured when it began) whose live tools now have one starts a new segment at once, with the
reason `mcp_servers_added`. A row alone could not help there: the frozen list has neither the
servers' tools nor `tool_catalog_search` to load them, so the model could not use a server added
in Settings until the next compaction. From that segment on the family is in the frozen list,
and servers added later are change rows again (their tools reachable with the search tool).
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from xum.context.markup import escape_untrusted
from xum.context.plan import PlanSnapshot
from xum.context.workspace import LiveContext, digest
from xum.llm.types import ToolSpec, text_message
from xum.store import frame_types as ev
from xum.store.follower import FrameSource, LogFollower
from xum.store.frames import Frame
from xum.tools.mcp_names import is_family

# Sections whose changes travel as rows. The prelude and the environment block only change
# with a new xum version or a new workspace; they are refreshed at the next segment.
TRACKED_SECTIONS = ("agent", "instructions", "model", "mode", "skills", "mcp", "plan")
MCP_CATALOG = "mcp_tools"  # the digest channel of the MCP tool catalog (mcp_context)
UPDATE_KIND = "context_update"
EMPTY = digest("")

SEGMENT_START = "start"  # the first request of a session
TOOL_SET_CHANGED = "tool_set_changed"  # mid-history: the one kind of prefix break
MCP_TOOLS_LOADED = "mcp_tools_loaded"  # tool_catalog_search loaded tools the list lacked
MCP_SERVERS_ADDED = "mcp_servers_added"  # the first MCP tools in a segment frozen without any
BREAKING_REASONS = frozenset({TOOL_SET_CHANGED, MCP_TOOLS_LOADED, MCP_SERVERS_ADDED})
LOADED_META = "mcp_loaded"  # in a tool_catalog_search result's meta: the tool names it loaded


def sha256_text(text: str) -> str:
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def tools_sha256(tools: Sequence[ToolSpec]) -> str:
    """The same digest the engine's request headers use for a tool list."""
    return hashlib.sha256(
        orjson.dumps([(t.name, t.description, t.parameters) for t in tools])
    ).hexdigest()


@dataclass
class Frozen:
    """The system prompt and tools frozen for the current context segment."""

    seq: int
    reason: str
    agent: str
    system: str
    tools: list[ToolSpec]
    tool_identity: str
    system_sha256: str
    tools_sha256: str


@dataclass
class ContextDelta:
    """How the live context differs from the frozen one."""

    new_segment: str | None = None  # the reason, when a new segment must start
    sections: list[str] = field(default_factory=list)  # changed tracked sections
    tools: list[str] = field(default_factory=list)  # tools whose `Tool:` notes changed
    mcp_tools: bool = False  # the MCP tool catalog changed

    @property
    def empty(self) -> bool:
        return (
            self.new_segment is None and not self.sections and not self.tools and not self.mcp_tools
        )


class FrozenTracker(LogFollower):
    """Follows the log (incrementally, like the history projection): the frozen sections of the
    current segment, the digests the model has been told since, and the plan-file snapshot."""

    def reset(self) -> None:
        super().reset()
        self.version = 0  # moves whenever the state below changes
        self._compared: tuple[int, int, ContextDelta] | None = None
        self.frozen: Frozen | None = None
        self.known: dict[str, str] = {}
        self.next_reason = SEGMENT_START
        self.plan: PlanSnapshot | None = None
        # MCP tools the model loaded with tool_catalog_search (they stay loaded for the session).
        self.loaded: set[str] = set()

    def update(self, log: FrameSource) -> None:
        self.follow(log)

    def _apply(self, frame: Frame) -> None:
        kind = frame.type
        if kind == ev.TOOL_RESULT and not frame.may_contain(LOADED_META.encode()):
            return  # most results: no need to decode a lazy frame's data
        data = frame.data if kind in _WITH_DATA else {}
        if kind in _RELEVANT:
            self.version += 1
        if kind in ev.BOUNDARY_TYPES:
            self.frozen = None
            self.known = {}
            self.next_reason = kind
        elif kind == ev.CONTEXT_FROZEN:
            frozen = _frozen_from(frame)
            if frozen is not None:
                self.frozen = frozen
                digests = data.get("digests")
                self.known = dict(digests) if isinstance(digests, dict) else {}
        elif kind == ev.SYNTHETIC_MESSAGE and data.get("kind") == UPDATE_KIND:
            digests = data.get("digests")
            if isinstance(digests, dict):
                self.known.update(digests)
            self._plan(data.get("plan"))
        elif kind == ev.PLAN_SNAPSHOT:
            self._plan(data)
        elif kind == ev.TOOL_RESULT:
            meta = data.get("meta")
            names = meta.get(LOADED_META) if isinstance(meta, dict) else None
            if isinstance(names, list):
                self.loaded.update(n for n in names if isinstance(n, str))
                self.version += 1

    def _plan(self, data: Any) -> None:
        snapshot = PlanSnapshot.from_dict(data)
        if snapshot is not None:
            self.plan = snapshot

    def compare(self, live: LiveContext) -> ContextDelta:
        """What differs between `live` and what the model was told. Cached per (live context,
        tracker state): the usual request finds both unchanged and costs nothing here."""
        cached = self._compared
        if cached is not None and cached[0] == id(live) and cached[1] == self.version:
            return cached[2]
        delta = self._compare(live)
        self._compared = (id(live), self.version, delta)
        self._compared_live = live  # keeps id(live) from being reused while cached
        return delta

    def _compare(self, live: LiveContext) -> ContextDelta:
        frozen = self.frozen
        if frozen is None:
            return ContextDelta(new_segment=self.next_reason)
        if frozen.tool_identity != live.tool_identity:
            return ContextDelta(new_segment=TOOL_SET_CHANGED)
        if not _has_mcp_family(frozen.tools) and _has_mcp_family(live.tools):
            # A row could only say the new tools exist: nothing in the frozen list can reach
            # them. Later changes find the family frozen and travel as rows again.
            return ContextDelta(new_segment=MCP_SERVERS_ADDED)
        if self.loaded and live.mcp_catalog:
            offered = {t.name for t in frozen.tools}
            if any(t.name in self.loaded and t.name not in offered for t in live.mcp_catalog):
                return ContextDelta(new_segment=MCP_TOOLS_LOADED)
        known = self.known
        delta = ContextDelta()
        delta.mcp_tools = live.digests.get(MCP_CATALOG, EMPTY) != known.get(MCP_CATALOG, EMPTY)
        for name in TRACKED_SECTIONS:
            if live.digests.get(name, EMPTY) != known.get(name, EMPTY):
                delta.sections.append(name)
        names = {k[5:] for k in known if k.startswith("tool:")} | set(live.tool_notes)
        for name in sorted(names):
            key = f"tool:{name}"
            if live.digests.get(key, EMPTY) != known.get(key, EMPTY):
                delta.tools.append(name)
        return delta


def _has_mcp_family(tools: Sequence[ToolSpec]) -> bool:
    return any(is_family(t.name) for t in tools)


_RELEVANT = frozenset(
    {*ev.BOUNDARY_TYPES, ev.CONTEXT_FROZEN, ev.SYNTHETIC_MESSAGE, ev.PLAN_SNAPSHOT}
)
# The kinds `_apply` reads the data of (a lazy frame of any other kind stays undecoded).
_WITH_DATA = frozenset({ev.CONTEXT_FROZEN, ev.SYNTHETIC_MESSAGE, ev.PLAN_SNAPSHOT, ev.TOOL_RESULT})


def _frozen_from(frame: Frame) -> Frozen | None:
    data = frame.data
    system = data.get("system")
    tools = data.get("tools")
    if not isinstance(system, str) or not isinstance(tools, list) or frame.seq is None:
        return None
    specs = [
        ToolSpec(t["name"], t["description"], t["parameters"])
        for t in tools
        if isinstance(t, dict) and {"name", "description", "parameters"} <= t.keys()
    ]
    return Frozen(
        seq=frame.seq,
        reason=str(data.get("reason", "")),
        agent=str(data.get("agent", "")),
        system=system,
        tools=specs,
        tool_identity=str(data.get("tool_identity", "")),
        system_sha256=str(data.get("system_sha256") or sha256_text(system)),
        tools_sha256=str(data.get("tools_sha256") or tools_sha256(specs)),
    )


def frozen_frame_data(live: LiveContext, reason: str, model: str) -> ev.ContextFrozenData:
    """The `context_frozen` frame for a new segment built from `live`."""
    return {
        "reason": reason,
        "agent": live.agent.id,
        "mode": live.mode,
        "model": model,
        "system": live.system,
        "tools": [
            {"name": t.name, "description": t.description, "parameters": t.parameters}
            for t in live.tools
        ],
        "tool_identity": live.tool_identity,
        "digests": {k: v for k, v in live.digests.items() if v != EMPTY},
        "system_sha256": sha256_text(live.system),
        "tools_sha256": tools_sha256(live.tools),
    }


# The change row --------------------------------------------------------------------------------

_LEAD = (
    "xum: part of this workspace's context changed after this part of the conversation began. "
    "Each item below replaces the matching part of the system prompt or tool descriptions you "
    "were given; everything else still stands."
)

_GONE = {
    "agent": "The agent instructions were removed.",
    "instructions": (
        "The instruction files (AGENTS.md and friends) are now empty or gone: disregard the "
        "custom instructions given earlier."
    ),
    "model": "No model-specific instructions apply any more.",
    "mode": "No mode-specific instructions apply any more.",
    "skills": "No skills are available any more: disregard the earlier skill list.",
    "mcp": "No MCP servers serve this workspace any more: their tools no longer work.",
    "plan": "Plan mode no longer applies: the plan-mode rules given earlier are lifted.",
}
_NEW = {
    "agent": "You now work as a different agent. Its instructions replace the earlier ones:",
    "instructions": "The instruction files changed. Their current content:",
    "model": "Model-specific instructions now in effect:",
    "mode": "Mode-specific instructions now in effect:",
    "skills": "The available skills changed. The current list:",
    "mcp": "The MCP servers changed. What applies now:",
    "plan": "Plan-mode rules now in effect:",
}


def update_row_text(
    live: LiveContext,
    delta: ContextDelta,
    plan_note: str | None,
    plan_path: str | None,
    offered: Sequence[str] = (),
) -> str:
    """The row's text; `offered`: the tool names of the current segment's frozen list."""
    parts = [_LEAD]
    for name in delta.sections:
        text = live.sections.get(name, "")
        parts.append(f"{_NEW[name]}\n{text}" if text else _GONE[name])
    if delta.mcp_tools:
        from xum.context.mcp_context import catalog_change_text
        from xum.tools.mcp_names import SEARCH_TOOL

        parts.append(
            catalog_change_text(live.mcp_catalog, offered, can_load=SEARCH_TOOL in offered)
        )
    for tool in delta.tools:
        note = live.tool_notes.get(tool, "")
        if note:
            parts.append(
                f"The notes at the end of the description of the tool {tool} changed; they are "
                f'now:\n<tool-instructions tool="{tool}">\n{escape_untrusted(note)}\n'
                "</tool-instructions>"
            )
        else:
            parts.append(
                f"The notes at the end of the description of the tool {tool} were removed."
            )
    if plan_note is not None:
        parts.append(
            f'<plan-file-changed path="{plan_path}">\n'
            "The plan file was changed outside the file edit tools (most likely by the user). "
            "Take the change into account.\n"
            f"{escape_untrusted(plan_note)}\n</plan-file-changed>"
        )
    return "<context-update>\n" + "\n\n".join(parts) + "\n</context-update>"


def update_frame_data(
    live: LiveContext,
    delta: ContextDelta,
    plan: PlanSnapshot | None,
    plan_note: str | None,
    offered: Sequence[str] = (),
) -> ev.SyntheticMessageData:
    digests = {name: live.digests.get(name, EMPTY) for name in delta.sections}
    for tool in delta.tools:
        digests[f"tool:{tool}"] = live.digests.get(f"tool:{tool}", EMPTY)
    if delta.mcp_tools:
        digests[MCP_CATALOG] = live.digests.get(MCP_CATALOG, EMPTY)
    text = update_row_text(live, delta, plan_note, plan.path if plan else None, offered)
    data: ev.SyntheticMessageData = {
        "message": text_message("user", text),
        "kind": UPDATE_KIND,
        "digests": digests,
        "changed": [*delta.sections, *(f"tool:{t}" for t in delta.tools)]
        + ([MCP_CATALOG] if delta.mcp_tools else [])
        + (["plan_file"] if plan_note is not None else []),
    }
    if plan is not None:
        data["plan"] = plan.to_dict()
    return data


def prefix_breaks(frames: Iterable[Frame]) -> list[dict[str, Any]]:
    """Every mid-history segment start (a prefix break), with its seq and reason."""
    return [
        {"seq": f.seq, "reason": f.data.get("reason"), "agent": f.data.get("agent")}
        for f in frames
        if not f.damaged
        and f.type == ev.CONTEXT_FROZEN
        and f.data.get("reason") in BREAKING_REASONS
    ]
