"""Before each request: what the model has been told vs what the workspace says now.

`ContextSync.prepare` asks the context provider for the live context, compares it with the
frozen sections of the current segment (read from the log by `FrozenTracker`) and returns the
frames to append first:

* nothing, when nothing changed (the usual case, a few dozen `stat` calls);
* a `context_frozen` frame, when a segment starts (the first request, after a compaction or a
  reset, or when the tool set itself changed);
* a `synthetic_message` row (kind `context_update`), when a section, a `Tool:` note, the MCP
  tool catalog or the plan file changed mid-segment.

With MCP tool search on, the MCP tools in the tool list are the ones the model loaded with
`tool_catalog_search` (the tracker reads them from the log), added here to what the context
offers; loading one the list lacks starts a new segment (`mcp_tools_loaded`). The first MCP
server of a segment frozen without any starts one too (`mcp_servers_added`).

The request then sends the frozen system prompt and tools, byte for byte as recorded.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from xum.context.files import FileView
from xum.context.frozen import (
    ContextDelta,
    Frozen,
    FrozenTracker,
    frozen_frame_data,
    update_frame_data,
)
from xum.context.plan import PlanSnapshot, plan_diff, plan_mtime, read_snapshot
from xum.context.workspace import AgentSelection, ContextProvider, LiveContext
from xum.store import frame_types as ev
from xum.store.follower import FrameSource

FrameSpec = ev.FrameSpec


class ContextSync:
    def __init__(self, provider: ContextProvider, selection: AgentSelection) -> None:
        self.provider = provider
        self.selection = selection
        self.tracker = FrozenTracker()
        self.live: LiveContext | None = None
        self._restricted: tuple[LiveContext, LiveContext] | None = None
        self._loaded: tuple[LiveContext, frozenset[str], LiveContext] | None = None
        self._reported: set[str] = set()

    @property
    def frozen(self) -> Frozen:
        frozen = self.tracker.frozen
        assert frozen is not None, "prepare() and an append of its frames come first"
        return frozen

    async def prepare(
        self,
        log: FrameSource,
        model: str,
        can_offer: Callable[[str], bool],
        plan_view: FileView,
    ) -> list[FrameSpec]:
        tracker = self.tracker
        tracker.update(log)
        live = self._offerable(await self.provider.live(self.selection, model), can_offer)
        live = self._with_loaded(live)
        self.live = live
        delta = tracker.compare(live)
        plan, note = await self._plan_change(plan_view)
        frames: list[FrameSpec] = []
        if delta.new_segment is not None:
            frames.append(
                ev.spec(ev.CONTEXT_FROZEN, frozen_frame_data(live, delta.new_segment, model))
            )
            if note is not None:
                frames.append(
                    ev.spec(
                        ev.SYNTHETIC_MESSAGE, update_frame_data(live, ContextDelta(), plan, note)
                    )
                )
        elif not delta.empty or note is not None:
            offered = [t.name for t in tracker.frozen.tools] if tracker.frozen else []
            frames.append(
                ev.spec(ev.SYNTHETIC_MESSAGE, update_frame_data(live, delta, plan, note, offered))
            )
        elif plan is not None:
            tracker.plan = plan  # same content, new mtime: remember it, tell nobody
        return frames

    def new_diagnostics(self) -> list[str]:
        """Problems found while reading agents, instructions and skills, each reported once."""
        live = self.live
        if live is None:
            return []
        fresh = [d for d in live.diagnostics if d not in self._reported]
        self._reported.update(fresh)
        return fresh

    def snapshot_due(self, plan: PlanSnapshot) -> bool:
        """Whether `plan` (read after the model touched the plan file) differs from what the log
        already records, so a `plan_snapshot` frame is worth writing."""
        known = self.tracker.plan
        return known is None or (known.exists, known.sha256, known.mtime_ns) != (
            plan.exists,
            plan.sha256,
            plan.mtime_ns,
        )

    async def _plan_change(self, view: FileView) -> tuple[PlanSnapshot | None, str | None]:
        """(a fresh snapshot, a note for the model) when the plan file moved since xum last
        looked; the note is None when only its mtime moved."""
        known = self.tracker.plan
        if known is None:
            return None, None
        mtime = await plan_mtime(view, known.path)
        if mtime == (known.mtime_ns if known.exists else None):
            return None, None
        fresh = await read_snapshot(view, known.path)
        if fresh.exists == known.exists and fresh.sha256 == known.sha256:
            return fresh, None
        return fresh, plan_diff(known, fresh)

    def _offerable(self, live: LiveContext, can_offer: Callable[[str], bool]) -> LiveContext:
        """`live` without the tools this session cannot offer (no sub-agent host, no exit code
        callback, ...). The result is cached per live context, so it is computed once."""
        cached = self._restricted
        if cached is not None and cached[0] is live:
            return cached[1]
        if all(can_offer(t.name) for t in live.tools):
            self._restricted = (live, live)
            return live
        tools = [t for t in live.tools if can_offer(t.name)]
        names = tuple(t.name for t in tools)
        policy = live.policy
        restricted = LiveContext(
            agent=live.agent,
            mode=live.mode,
            policy=replace(
                policy,
                tools=names,
                required=policy.required if policy.required in names else None,
            ),
            sections=live.sections,
            tools=tools,
            tool_notes={k: v for k, v in live.tool_notes.items() if k in names},
            plan_file=live.plan_file,
            skills=live.skills,
            diagnostics=live.diagnostics,
            fallback_from=live.fallback_from,
            mcp_catalog=live.mcp_catalog,
            mcp_deferred=live.mcp_deferred,
            mcp_prompts=live.mcp_prompts,
        )
        self._restricted = (live, restricted)
        return restricted

    def _with_loaded(self, live: LiveContext) -> LiveContext:
        """`live` with the MCP tools the model loaded (tool search on), in catalog order."""
        loaded = frozenset(self.tracker.loaded)
        if not live.mcp_deferred or not loaded or not live.mcp_catalog:
            return live
        cached = self._loaded
        if cached is not None and cached[0] is live and cached[1] == loaded:
            return cached[2]
        present = {t.name for t in live.tools}
        extra = [t for t in live.mcp_catalog if t.name in loaded and t.name not in present]
        result = live
        if extra:
            result = replace(live, tools=[*live.tools, *extra])
        self._loaded = (live, loaded, result)
        return result
