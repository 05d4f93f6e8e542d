"""Per-turn bookkeeping for agents with rules about their tools: a required tool and plan mode.

* A required tool (`tools.require` of the agent): a turn about to end without having called it
  gets up to `MAX_FORCED_STEPS` extra steps whose request forces the call (`tool_choice`).
* Plan mode: the plan file is the one file the agent may edit. After a step that edited it (or
  presented it with `propose_plan`) the plan as the model now knows it is recorded
  (`plan_snapshot`), so the next request does not mistake the model's own edit for an outside
  one; `propose_plan` also emits `plan-proposed` for the UIs' plan card.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from xum.context.files import FileView
from xum.context.plan import read_snapshot
from xum.context.workspace import LiveContext
from xum.core.paths import ensure_private_dir
from xum.engine import events as E
from xum.engine.contextsync import ContextSync
from xum.engine.events import EventSink
from xum.engine.extensions import ToolCall
from xum.llm.types import ToolChoice
from xum.runtime.base import Runtime
from xum.store import frame_types as ev

if TYPE_CHECKING:
    from xum.tools.base import ToolResult

MAX_FORCED_STEPS = 2
PLAN_EDIT_TOOLS = frozenset(
    {"file_edit_replace_string", "file_edit_replace_lines", "file_edit_insert"}
)

AppendFrames = Callable[[Sequence[ev.FrameSpec]], Awaitable[object]]


class TurnRules:
    """The state of one turn's required-tool and plan bookkeeping (`reset` at turn start)."""

    def __init__(self, context: ContextSync, runtime: Runtime, emit: EventSink) -> None:
        self.context = context
        self.runtime = runtime
        self.emit = emit
        self.plan_view: FileView = _plan_view(runtime)
        self.reset()

    def reset(self) -> None:
        self.required_done = False
        self.forced_steps = 0
        self._force_next = False
        self.plan_edits: list[str | None] = []  # plan-file paths touched this step
        self.plan_proposed = False

    @property
    def live(self) -> LiveContext | None:
        return self.context.live

    def ensure_plan_dir(self) -> None:
        """The plan lives under $XUM_ROOT, which stays private (0700): make its directory so,
        before the agent first writes it (local checkouts; a remote host keeps its own)."""
        live = self.live
        if live is not None and live.plan_file and self.runtime.sees_local_files:
            parent = Path(live.plan_file).parent
            if not parent.is_dir():
                ensure_private_dir(parent.parent)
                ensure_private_dir(parent)

    # Required tool -------------------------------------------------------------------------

    def tool_choice(self) -> ToolChoice | None:
        """Force the agent's required tool on a step added because the turn was about to end
        without it (see `force_required_tool`)."""
        live = self.live
        force, self._force_next = self._force_next, False
        if force and not self.required_done and live and live.required_tool:
            return {"name": live.required_tool}
        return None

    def force_required_tool(self, offered: Sequence[str]) -> bool:
        """The model stopped without calling the agent's required tool: add a forced step."""
        live = self.live
        required = live.required_tool if live else None
        if required is None or self.required_done or required not in offered:
            return False
        if self.forced_steps >= MAX_FORCED_STEPS:
            return False
        self.forced_steps += 1
        self._force_next = True
        return True

    # After each tool result ------------------------------------------------------------------

    def note_result(self, call: ToolCall, result: ToolResult) -> None:
        if result.is_error:
            return
        live = self.live
        if live is not None and call.name == live.required_tool:
            self.required_done = True
        path = result.meta.get("path")
        plan = result.meta.get("plan")
        if call.name in PLAN_EDIT_TOOLS and isinstance(path, str):
            self.plan_edits.append(path)
        elif call.name == "propose_plan" and isinstance(plan, dict):
            self.plan_proposed = True
            self.plan_edits.append(None)
            self.emit(
                E.PlanProposed(
                    call_id=call.id,
                    path=plan.get("path"),
                    content=plan.get("content"),
                    mtime_ns=plan.get("mtime_ns"),
                )
            )

    async def snapshot_plan(self, append: AppendFrames) -> None:
        """After a step that edited or proposed the plan: record the plan as the model now knows
        it."""
        touched, self.plan_edits = self.plan_edits, []
        if not touched:
            return
        live = self.live
        known = self.context.tracker.plan
        target = live.plan_file if live and live.plan_file else known.path if known else None
        if target is None:
            return
        real = await self.runtime.realpath(target)
        if not any(path is None or path == real for path in touched):
            return
        snapshot = await read_snapshot(self.plan_view, target)
        if self.context.snapshot_due(snapshot):
            await append([ev.spec(ev.PLAN_SNAPSHOT, snapshot.to_dict())])


def _plan_view(runtime: Runtime) -> FileView:
    from xum.context.files import RuntimeFiles

    return RuntimeFiles(runtime)
