"""The engine's typed events as ACP `session/update` notifications, for one session.

Live (`live`): text deltas become agent message chunks, reasoning deltas thought chunks; a tool
call is announced when its name streams in (`tool_call`, pending), goes in progress with its
parsed arguments (title, kind, the file it touches), shows its live output, and ends with its
result (`completed` or `failed`: the output, or diffs for file edits). `todo_write` results are
also the session's plan. Advisories and dropped streams become short notes in the reply.

Replay (`replayed`, for `session/load`): the committed events of a log, so a loaded session
shows the user's messages, the replies and every call with its result, as they were.

The translator keeps a little state per session: which calls were announced, which run in an
editor terminal (their output is the terminal's, not ours), the live output so far.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from acp.helpers import (
    start_tool_call,
    update_agent_message_text,
    update_agent_thought_text,
    update_current_mode,
    update_plan,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentMessageChunk,
    AgentPlanUpdate,
    AgentThoughtChunk,
    AvailableCommandsUpdate,
    ConfigOptionUpdate,
    CurrentModeUpdate,
    PlanEntry,
    SessionInfoUpdate,
    TerminalToolCallContent,
    ToolCallProgress,
    ToolCallStart,
    UserMessageChunk,
)

from xum.acp import toolviews as views
from xum.engine import events as E

SessionUpdate = (
    AgentMessageChunk
    | AgentThoughtChunk
    | UserMessageChunk
    | ToolCallStart
    | ToolCallProgress
    | AgentPlanUpdate
    | AvailableCommandsUpdate
    | CurrentModeUpdate
    | ConfigOptionUpdate
    | SessionInfoUpdate
)

MODES = ("exec", "plan")


def note(text: str) -> AgentMessageChunk:
    """Something xum (not the model) tells the user, set apart in the reply."""
    return update_agent_message_text(f"\n\n> xum: {text}\n\n")


def plan_update(todos: Any) -> AgentPlanUpdate | None:
    """The session's task list (todo_write's `meta.todos`) as the ACP plan."""
    if not isinstance(todos, list):
        return None
    entries = [
        PlanEntry(content=str(t["content"]), priority="medium", status=t["status"])
        for t in todos
        if isinstance(t, Mapping) and t.get("status") in ("pending", "in_progress", "completed")
    ]
    return update_plan(entries)


class UpdateTranslator:
    def __init__(self, workspace_path: str) -> None:
        self.workspace_path = workspace_path
        self._announced: set[str] = set()
        self._finished: set[str] = set()
        self._names: dict[str, str] = {}
        self._terminals: dict[str, str] = {}  # call id -> editor terminal id
        self._live: dict[str, str] = {}  # call id -> live output so far
        # The last `ask_user_question` call that started: the call a permission request is for.
        self.question_call: str | None = None
        # How the last reply of the turn ended (a refusal ends the prompt as one).
        self.last_finish: str | None = None

    # Live events -------------------------------------------------------------------------

    def live(self, event: E.Event) -> list[SessionUpdate]:
        if isinstance(event, E.TextDelta):
            return [update_agent_message_text(event.text)] if event.text else []
        if isinstance(event, E.ReasoningDelta):
            return [update_agent_thought_text(event.text)] if event.text else []
        if isinstance(event, E.ToolCallStart):
            return self._announce(event.call_id, event.name, None, "pending")
        if isinstance(event, E.AssistantMessage):
            self.last_finish = event.finish_reason
            return self._announce_calls(event.tool_calls, "pending")
        if isinstance(event, E.ToolCall):
            return self._running(event.call_id, event.name, event.arguments)
        if isinstance(event, E.ToolOutput):
            return self._output(event.call_id, event.text)
        if isinstance(event, E.ToolResult):
            return self._result(event)
        if isinstance(event, E.AgentChanged):
            return [update_current_mode(event.agent)] if event.agent in MODES else []
        if isinstance(event, E.Advisory | E.ReplyStalled | E.ModelFallback):
            return [note(event.message)]
        if isinstance(event, E.DiscardPartial):
            return [note("the connection to the model dropped; the reply starts over")]
        if isinstance(event, E.BackgroundWake):
            what = "has ended" if event.reason == "exit" else "printed lines it watches for"
            return [note(f"background process {event.task_id} ({event.display_name}) {what}")]
        if isinstance(event, E.InitOutput):
            return [update_agent_thought_text(f"init: {event.line}\n")]
        if isinstance(event, E.InitEnd) and event.status != "succeeded":
            return [note(f"the workspace's init hook ended: {event.status}")]
        return []

    def terminal_started(self, call_id: str, terminal_id: str) -> list[SessionUpdate]:
        """A delegated command runs in the editor's terminal `terminal_id`: show it in the call."""
        self._terminals[call_id] = terminal_id
        terminal = TerminalToolCallContent(type="terminal", terminal_id=terminal_id)
        return [update_tool_call(call_id, content=[terminal])]

    # Replay ------------------------------------------------------------------------------

    def replayed(self, event: E.Committed) -> list[SessionUpdate]:
        if isinstance(event, E.UserMessage):
            if event.synthetic:
                return []
            text = event.typed or event.text
            if event.images:  # named, not resent: the editor had the pictures when it sent them
                shown = " ".join(f"[image: {i.get('name') or 'image'}]" for i in event.images)
                text = f"{text}\n{shown}" if text else shown
            return [update_user_message_text(text)]
        if isinstance(event, E.AssistantMessage):
            out: list[SessionUpdate] = []
            if event.reasoning:
                out.append(update_agent_thought_text(event.reasoning))
            if event.text:
                out.append(update_agent_message_text(event.text))
            out.extend(self._announce_calls(event.tool_calls, "in_progress"))
            return out
        if isinstance(event, E.ToolResult):
            return self._result(event)
        if isinstance(event, E.DamagedFrame):
            return [note("a damaged entry of this session's log was skipped")]
        if isinstance(event, E.Compaction):
            return [note("the conversation was compacted here")]
        if isinstance(event, E.ModelFallback):
            return [note(event.message)]
        return []

    # Tool calls --------------------------------------------------------------------------

    def _announce(
        self, call_id: str, name: str, arguments: Any, status: str
    ) -> list[SessionUpdate]:
        if call_id in self._announced:
            return []
        self._announced.add(call_id)
        self._names[call_id] = name
        return [
            start_tool_call(
                call_id,
                views.tool_title(name, arguments),
                kind=views.tool_kind(name),
                status="in_progress" if status == "in_progress" else "pending",
                locations=views.call_locations(name, arguments, self.workspace_path) or None,
                raw_input=arguments,
            )
        ]

    def _announce_calls(self, calls: list[dict[str, Any]], status: str) -> list[SessionUpdate]:
        out: list[SessionUpdate] = []
        for call in calls:
            call_id, name = call.get("id"), call.get("name")
            if isinstance(call_id, str) and isinstance(name, str):
                out.extend(self._announce(call_id, name, _parsed(call.get("arguments")), status))
        return out

    def _running(self, call_id: str, name: str, arguments: Any) -> list[SessionUpdate]:
        if name == "ask_user_question":
            self.question_call = call_id
        if call_id not in self._announced:
            return self._announce(call_id, name, arguments, "in_progress")
        locations = views.call_locations(name, arguments, self.workspace_path)
        return [
            update_tool_call(
                call_id,
                title=views.tool_title(name, arguments),
                kind=views.tool_kind(name),
                status="in_progress",
                locations=locations or None,
                raw_input=arguments,
            )
        ]

    def _output(self, call_id: str, text: str) -> list[SessionUpdate]:
        if call_id in self._terminals or call_id in self._finished or not text:
            return []
        so_far = self._live.get(call_id, "") + text
        if len(so_far) > 2 * views.MAX_TEXT_CHARS:
            so_far = so_far[-views.MAX_TEXT_CHARS :]
        self._live[call_id] = so_far
        return [update_tool_call(call_id, content=[views.text_content(views.fenced(so_far))])]

    def _result(self, event: E.ToolResult) -> list[SessionUpdate]:
        call_id = event.call_id
        self._finished.add(call_id)
        self._live.pop(call_id, None)
        out: list[SessionUpdate] = []
        if call_id not in self._announced:
            out.extend(self._announce(call_id, event.name, None, "in_progress"))
        terminal = self._terminals.get(call_id)
        content: list[views.ToolContent]
        if terminal is not None:
            content = [TerminalToolCallContent(type="terminal", terminal_id=terminal)]
        else:
            content = views.result_content(event.name, event.output, event.meta, event.is_error)
        locations = views.edit_location(event.meta) if "diff" in event.meta else None
        out.append(
            update_tool_call(
                call_id,
                status="failed" if event.is_error else "completed",
                content=content,
                locations=locations or None,
                raw_output={"output": event.output},
            )
        )
        if event.name == "todo_write" and not event.is_error:
            plan = plan_update(event.meta.get("todos"))
            if plan is not None:
                out.append(plan)
        return out


def _parsed(arguments: Any) -> Any:
    """A recorded call's arguments (raw JSON text) as an object, when they parse."""
    if not isinstance(arguments, str):
        return arguments
    import orjson

    try:
        return orjson.loads(arguments)
    except orjson.JSONDecodeError:
        return arguments
