"""Running one step's tool calls for a session: their contexts, the doom-loop guard, and the
results on record.

Each call gets a fresh, frozen context (`context_for`): the runtime, the session's `XUM_*`
environment (one snapshot per step: the cost it reports is the step's), and the services the
session has (sub-agents, background processes, the user, skills). Results are recorded in call
order as they settle; a repeated identical call gets an advisory appended to its result, and a
doom loop stops the turn before its calls run. The session is seen through
`xum.engine.turnhost.ToolHost`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

import orjson

from xum.engine import events as E
from xum.engine.doomloop import DoomLoopGuard
from xum.engine.extensions import ToolCall
from xum.engine.recorder import result_frame
from xum.engine.turnhost import ToolHost
from xum.tools.mcp_names import FAMILY_TOOLS

if TYPE_CHECKING:
    from xum.tools.base import ToolContext, ToolResult
    from xum.tools.mcp_host import McpAccess


class CallRunner:
    def __init__(self, session: ToolHost) -> None:
        self.session = session
        self.doom = DoomLoopGuard()
        self._advisories: dict[str, str] = {}  # call id -> doom-loop note for its result

    def tool_env(self) -> dict[str, str]:
        """The environment every command of the session gets over the runtime's own: the
        project's secrets (`base_env`) and the `XUM_*` variables."""
        s = self.session
        env = dict(s.base_env)
        env.update(
            {
                "XUM_PROJECT_PATH": s.workspace.project_path,
                "XUM_RUNTIME": s.workspace.runtime,
                "XUM_WORKSPACE_NAME": s.workspace.name,
                "XUM_WORKSPACE_ID": s.workspace.id,
                "XUM_MODEL_STRING": s.route.model_string,
                "XUM_THINKING_LEVEL": s.thinking,
                "XUM_COSTS_USD": f"{s.ledger.total():.2f}",
                "XUM_SCRATCH_DIR": str(s.scratch_dir),
            }
        )
        if s.workspace.ports is not None:
            env.update(s.workspace.ports.env())
        return env

    def context_for(self, call: ToolCall | None, env: dict[str, str]) -> ToolContext:
        from xum.tools.base import ToolContext

        s = self.session
        live = s.context.live
        offered = s.offered_tools
        return ToolContext(
            call_id=call.id if call is not None else "",
            open_output=s.live.opener(call.id) if call is not None else None,
            runtime=s.runtime,
            workspace_id=s.workspace.id,
            workspace_name=s.workspace.name,
            project_path=s.workspace.project_path,
            scratch_dir=str(s.scratch_dir),
            env=dict(env),
            todos=s.todos,
            set_exit_code=s.set_exit_code,
            subagents=s.subagents,
            # Background bash needs a tool that reads it; without one, it is not offered.
            background=s.background if _reads_background(offered) else None,
            plan_file=live.plan_file if live else None,
            ask_user=s.ask_user,
            skills=s.skills,
            spawnable_agents=live.policy.spawnable_agents if live else None,
            goals=s.goals if "get_goal" in offered else None,
            mcp=self._mcp_access(offered),
        )

    def _mcp_access(self, offered: Sequence[str]) -> McpAccess | None:
        s = self.session
        live = s.context.live
        if s.mcp is None or live is None:
            return None
        if not live.mcp_catalog and not any(n in FAMILY_TOOLS for n in offered):
            return None  # no MCP server configured: nothing to load
        from xum.tools.mcp_host import McpAccess

        return McpAccess(
            host=s.mcp,
            catalog=live.mcp_catalog,
            offered=frozenset(offered),
            prompts=live.mcp_prompts,
        )

    async def run(self, calls: list[ToolCall]) -> None:
        from xum.engine.toolrun import run_calls

        s = self.session
        env = self.tool_env()

        def started(call: ToolCall) -> None:
            arguments = _parsed_or_raw(call.arguments)
            s.emit(E.ToolCall(call_id=call.id, name=call.name, arguments=arguments))

        await run_calls(
            calls,
            lambda call: self.context_for(call, env),
            offered=s.offered_tools,
            middleware=s.middleware,
            on_start=started,
            on_result=self._record,
        )

    async def _record(self, call: ToolCall, result: ToolResult, seconds: float) -> None:
        s = self.session
        note = self._advisories.pop(call.id, None)
        output = result.output
        if note is not None:
            output = f"{output}\n\n{note}"
            s.emit(E.Advisory(kind="doom-loop", call_id=call.id, message=note))
        frame = result_frame(
            call,
            output,
            is_error=result.is_error,
            meta=result.meta,
            seconds=seconds,
            images=result.images,
        )
        await s.recorder.append([frame])
        s.rules.note_result(call, result)
        notice = result.meta.get("notification") if call.name == "notify" else None
        if isinstance(notice, dict) and not result.is_error:
            s.emit(
                E.Notification(
                    call_id=call.id,
                    title=str(notice.get("title") or ""),
                    message=notice.get("message"),
                )
            )

    def doom_check(self, calls: Sequence[ToolCall]) -> str | None:
        """Advisories for repeated identical calls; the stop message when the guard trips."""
        self._advisories.clear()
        for call in calls:
            verdict = self.doom.observe(call.name, call.arguments)
            if verdict.stop:
                assert verdict.advisory is not None
                self.session.emit(E.Advisory(kind="doom-loop-stop", message=verdict.advisory))
                return verdict.advisory
            if verdict.advisory is not None:
                self._advisories[call.id] = verdict.advisory
        return None


def _reads_background(offered: Sequence[str]) -> bool:
    return "bash_output" in offered or "task_await" in offered


def _parsed_or_raw(arguments: str) -> Any:
    try:
        return orjson.loads(arguments or "{}")
    except orjson.JSONDecodeError:
        return arguments
