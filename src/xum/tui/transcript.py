"""What the terminal UI shows of one workspace, folded from engine events.

A `Transcript` is a list of entries (a user message, an assistant reply, a tool call, a notice,
an error, a plan, a sub-agent task) built by `fold(event)`, one event at a time. The same
function folds the live stream and a replay of the session log: live deltas grow the reply
being streamed, and the committed `assistant-message` that follows settles it, so a reply looks
the same whether it was watched or replayed. Each fold returns what changed (an entry added,
updated or removed), which is all the view needs to redraw incrementally.

Nothing here imports Textual: the model is plain data, tested on its own.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from typing import Any, Literal

from xum.engine import events as E

LIVE_OUTPUT_CHARS = 32 * 1024  # per tool card: the tail of its live output
INIT_LINES = 200  # of the `.xum/init` hook's output

ChangeKind = Literal["add", "update", "remove"]


@dataclass
class Entry:
    id: int


@dataclass
class UserEntry(Entry):
    text: str
    queued: bool = False


@dataclass
class AssistantEntry(Entry):
    text: str = ""
    reasoning: str = ""
    streaming: bool = True
    interrupted: bool = False
    # The committed reply's frame, when it is a final one (text, no tool calls): what Start
    # Here can restart the context from.
    start_here_seq: int | None = None


ToolState = Literal["streaming", "pending", "running", "done", "missing"]


@dataclass
class ToolEntry(Entry):
    call_id: str
    name: str
    arguments: Any = None  # parsed JSON, or the raw text when it is not valid JSON
    arguments_text: str = ""  # while the model streams them
    state: ToolState = "streaming"
    live: str = ""  # the tail of its live output
    live_cut: bool = False  # earlier live output was dropped
    is_error: bool = False
    output: str = ""
    meta: dict[str, Any] = field(default_factory=dict)
    duration_s: float | None = None
    started: float | None = None  # monotonic, while it runs


@dataclass
class NoticeEntry(Entry):
    text: str
    level: Literal["info", "warn"] = "info"


def search_notes(event: E.AssistantMessage, shown: int = 5) -> list[str]:
    """The provider's web searches and the cited pages of a reply, as plain-text notes: the
    query, then a title and link per result (at most `shown`), never a page's markup."""
    notes: list[str] = []
    for search in event.web_searches or ():
        head = f"searched: {search.get('query', '')}"
        if search.get("error"):
            notes.append(f"{head} (failed: {search['error']})")
            continue
        hits = [h for h in search.get("results") or () if isinstance(h, dict)]
        rows = [f"  {h.get('title') or h.get('url')} <{h.get('url')}>" for h in hits[:shown]]
        if len(hits) > shown:
            rows.append(f"  … {len(hits) - shown} more")
        notes.append("\n".join([f"{head} ({len(hits)} results)", *rows]))
    cited = [c for c in event.citations or () if isinstance(c, dict)]
    if cited:
        rows = [f"  {c.get('title') or c.get('url')} <{c.get('url')}>" for c in cited[:shown]]
        notes.append("\n".join(["sources:", *rows]))
    return notes


@dataclass
class ErrorEntry(Entry):
    code: str
    message: str
    hint: str | None = None
    retry: str | None = None  # the message to send again


@dataclass
class PlanEntry(Entry):
    call_id: str
    path: str | None
    content: str | None
    start_here_seq: int | None = None  # the committed `propose_plan` result's frame


@dataclass
class TaskEntry(Entry):
    task_id: str
    title: str
    status: str
    report: str | None = None


@dataclass
class InitEntry(Entry):
    lines: list[str] = field(default_factory=list)
    status: str | None = None  # None while it runs
    exit_code: int | None = None


@dataclass(frozen=True)
class Change:
    kind: ChangeKind
    entry: Entry


@dataclass
class Usage:
    """What the status line shows: the context the last request used, and the session's cost."""

    context_tokens: int = 0
    model: str | None = None
    session_cost: float | None = 0.0  # None: some reply had no known price
    turn_cost: float | None = None


class Transcript:
    def __init__(self) -> None:
        self.entries: list[Entry] = []
        self.usage = Usage()
        self.last_seq = 0
        self._next_id = 0
        self._streaming: list[int] = []  # entry ids of the reply streaming now
        self._tools: dict[str, ToolEntry] = {}
        self._tasks: dict[str, TaskEntry] = {}
        self._plans: set[str] = set()
        self._init: InitEntry | None = None
        self._last_user_text: str | None = None
        self._error_shown = False  # this turn's error is on screen already
        # What the process's governor holds back now (the status line says why).
        self.governor: E.GovernorWait | None = None

    # Reading -----------------------------------------------------------------------------

    def __iter__(self) -> Iterator[Entry]:
        return iter(self.entries)

    def __len__(self) -> int:
        return len(self.entries)

    def tool(self, call_id: str) -> ToolEntry | None:
        return self._tools.get(call_id)

    def start_here_seq(self) -> int | None:
        """The frame Start Here would restart from: the latest plan or final reply."""
        for entry in reversed(self.entries):
            if isinstance(entry, AssistantEntry | PlanEntry) and entry.start_here_seq is not None:
                return entry.start_here_seq
        return None

    # Folding -----------------------------------------------------------------------------

    def fold(self, event: E.Event) -> list[Change]:
        """Apply one event; return what changed, in order."""
        if isinstance(event, E.Committed) and event.seq is not None:
            if event.seq <= self.last_seq:
                return []  # seen already (a replay that overlaps the live stream)
            self.last_seq = event.seq
        handler = _HANDLERS.get(type(event))
        return handler(self, event) if handler is not None else []

    def note(self, text: str, level: Literal["info", "warn"] = "info") -> list[Change]:
        """A line of the UI's own (a command it carried out, a problem it met)."""
        return [self._add(NoticeEntry(self._id(), text, level))]

    def error(
        self, code: str, message: str, hint: str | None = None, retry: str | None = None
    ) -> list[Change]:
        return [self._add(ErrorEntry(self._id(), code, message, hint, retry))]

    def _id(self) -> int:
        self._next_id += 1
        return self._next_id

    def _add(self, entry: Entry) -> Change:
        self.entries.append(entry)
        return Change("add", entry)

    def _remove(self, entry: Entry) -> Change:
        self.entries = [e for e in self.entries if e is not entry]
        return Change("remove", entry)

    def _reply(self) -> tuple[AssistantEntry, list[Change]]:
        """The reply streaming now, made when its first delta arrives."""
        for entry_id in reversed(self._streaming):
            entry = self._find(entry_id)
            if isinstance(entry, AssistantEntry) and entry.streaming:
                if self.entries and self.entries[-1] is entry:
                    return entry, []
                break
        entry = AssistantEntry(self._id())
        self._streaming.append(entry.id)
        return entry, [self._add(entry)]

    def _find(self, entry_id: int) -> Entry | None:
        for entry in reversed(self.entries):
            if entry.id == entry_id:
                return entry
        return None

    # Handlers ----------------------------------------------------------------------------

    def _user(self, event: E.UserMessage) -> list[Change]:
        if event.synthetic and event.kind == "background_wake":
            # A background process woke the agent: its first line, as a note of xum's.
            return self.note(event.text.split("\n", 1)[0])
        if event.synthetic:
            return []  # a row xum added for the model (a context change), not the user's
        text = event.typed or event.text
        self._last_user_text = text
        if event.images:  # shown by name; the terminal draws no pictures
            shown = " ".join(f"[image: {i.get('name') or 'image'}]" for i in event.images)
            text = f"{text}\n{shown}" if text else shown
        return [self._add(UserEntry(self._id(), text, bool(event.queued)))]

    def _turn_start(self, _event: E.TurnStart) -> list[Change]:
        self._error_shown = False
        return []

    def _text(self, event: E.TextDelta) -> list[Change]:
        entry, changes = self._reply()
        entry.text += event.text
        return changes or [Change("update", entry)]

    def _reasoning(self, event: E.ReasoningDelta) -> list[Change]:
        entry, changes = self._reply()
        entry.reasoning += event.text
        return changes or [Change("update", entry)]

    def _call_start(self, event: E.ToolCallStart) -> list[Change]:
        if event.call_id in self._tools:
            return []
        entry = ToolEntry(self._id(), event.call_id, event.name)
        self._tools[event.call_id] = entry
        self._streaming.append(entry.id)
        return [self._add(entry)]

    def _call_delta(self, event: E.ToolCallDelta) -> list[Change]:
        entry = self._tools.get(event.call_id)
        if entry is None or entry.state != "streaming":
            return []
        entry.arguments_text = (entry.arguments_text + event.arguments)[-4096:]
        return [Change("update", entry)]

    def _discard(self, _event: E.DiscardPartial) -> list[Change]:
        """The connection dropped mid-reply: what streamed of this step goes; it restarts."""
        changes = self.restream()
        changes.extend(self.note("connection lost; the reply restarts", "warn"))
        return changes

    def _fallback(self, event: E.ModelFallback) -> list[Change]:
        """A model refused: its reply goes, a line says which model the turn went on with."""
        changes = self.restream()
        changes.extend(self.note(event.message, "warn"))
        return changes

    def restream(self) -> list[Change]:
        """What streamed of this step goes, quietly: the same reply so far follows at once (a
        client resuming a server's stream), or a note says why it went."""
        changes = []
        for entry_id in self._streaming:
            entry = self._find(entry_id)
            if entry is None:
                continue
            if isinstance(entry, ToolEntry):
                self._tools.pop(entry.call_id, None)
            changes.append(self._remove(entry))
        self._streaming.clear()
        return changes

    def _assistant(self, event: E.AssistantMessage) -> list[Change]:
        changes: list[Change] = []
        streamed = [self._find(i) for i in self._streaming]
        self._streaming.clear()
        reply = next((e for e in streamed if isinstance(e, AssistantEntry)), None)
        interrupted = event.finish_reason == "interrupted"
        final = not event.tool_calls and not interrupted and bool(event.text.strip())
        if reply is not None:
            reply.text, reply.reasoning = event.text, event.reasoning
            reply.streaming, reply.interrupted = False, interrupted
            changes.append(Change("update", reply))
        elif event.text or event.reasoning:
            reply = AssistantEntry(
                self._id(), event.text, event.reasoning, False, interrupted=interrupted
            )
            changes.append(self._add(reply))
        if reply is not None and final:
            reply.start_here_seq = event.seq
        for line in search_notes(event):
            changes.append(self._add(NoticeEntry(self._id(), line)))
        for call in event.tool_calls:
            call_id = str(call.get("id", ""))
            entry = self._tools.get(call_id)
            arguments = _parse(str(call.get("arguments", "")))
            if entry is None:
                entry = ToolEntry(self._id(), call_id, str(call.get("name", "")))
                self._tools[call_id] = entry
                changes.append(self._add(entry))
            else:
                changes.append(Change("update", entry))
            entry.arguments, entry.arguments_text, entry.state = arguments, "", "pending"
        usage = event.usage or {}
        if usage.get("input_tokens"):
            self.usage.context_tokens = int(usage.get("input_tokens", 0)) + int(
                usage.get("output_tokens", 0)
            )
        self.usage.model = event.model or self.usage.model
        if event.cost_usd is None:
            self.usage.session_cost = None
        elif self.usage.session_cost is not None:
            self.usage.session_cost += float(event.cost_usd)
        return changes

    def _call(self, event: E.ToolCall) -> list[Change]:
        entry = self._tools.get(event.call_id)
        if entry is None:
            entry = ToolEntry(self._id(), event.call_id, event.name)
            self._tools[event.call_id] = entry
            changes = [self._add(entry)]
        else:
            changes = [Change("update", entry)]
            if entry.state == "running":
                # Sent again to a client resuming a server's stream, with all its output so
                # far after it: that output replaces what was shown.
                entry.live, entry.live_cut = "", False
        entry.arguments, entry.state, entry.started = event.arguments, "running", time.monotonic()
        return changes

    def _output(self, event: E.ToolOutput) -> list[Change]:
        entry = self._tools.get(event.call_id)
        if entry is None:
            return []
        live = entry.live + event.text
        if len(live) > LIVE_OUTPUT_CHARS:
            live, entry.live_cut = live[-LIVE_OUTPUT_CHARS:], True
        entry.live = live
        return [Change("update", entry)]

    def _result(self, event: E.ToolResult) -> list[Change]:
        entry = self._tools.get(event.call_id)
        changes: list[Change] = []
        if entry is None:
            entry = ToolEntry(self._id(), event.call_id, event.name)
            self._tools[event.call_id] = entry
            changes.append(self._add(entry))
        else:
            changes.append(Change("update", entry))
        entry.state, entry.is_error = "done", event.is_error
        entry.output, entry.meta = event.output, dict(event.meta)
        entry.duration_s, entry.started = event.duration_s, None
        plan = event.meta.get("plan") if event.name == "propose_plan" else None
        if isinstance(plan, dict) and event.call_id not in self._plans:
            self._plans.add(event.call_id)
            content = plan.get("content")
            changes.append(
                self._add(
                    PlanEntry(
                        self._id(),
                        event.call_id,
                        plan.get("path"),
                        content if isinstance(content, str) else None,
                    )
                )
            )
        if isinstance(plan, dict) and not event.is_error:
            for shown in reversed(self.entries):
                if isinstance(shown, PlanEntry) and shown.call_id == event.call_id:
                    shown.start_here_seq = event.seq
                    break
        return changes

    def _plan(self, event: E.PlanProposed) -> list[Change]:
        if event.call_id in self._plans:
            return []
        self._plans.add(event.call_id)
        return [self._add(PlanEntry(self._id(), event.call_id, event.path, event.content))]

    def _turn_end(self, event: E.TurnEnd) -> list[Change]:
        self.governor = None
        changes: list[Change] = []
        for entry_id in self._streaming:
            entry = self._find(entry_id)
            if isinstance(entry, AssistantEntry):
                entry.streaming = False
                changes.append(Change("update", entry))
        self._streaming.clear()
        for entry in self._tools.values():
            if entry.state in ("streaming", "pending", "running"):
                entry.state, entry.started = "missing", None
                changes.append(Change("update", entry))
        if event.error and not self._error_shown:
            changes.extend(self._error_entry(event.error))
        reason = event.reason
        if event.cause == "crash":
            changes.extend(self.note("the turn was cut short (xum stopped while it ran)", "warn"))
        elif reason == "interrupted":
            changes.extend(self.note("interrupted"))
        elif reason in _STOPS:
            changes.extend(self.note(_STOPS[reason], "warn"))
        self._error_shown = False
        return changes

    def _error(self, event: E.ErrorEvent) -> list[Change]:
        self._error_shown = True
        return self._error_entry(event.error_dict())

    def _error_entry(self, error: dict[str, Any]) -> list[Change]:
        return self.error(
            str(error.get("code", "error")),
            str(error.get("message", "")),
            error.get("hint"),
            self._last_user_text,
        )

    def _usage(self, event: E.UsageUpdate) -> list[Change]:
        self.usage.turn_cost = event.turn_cost_usd
        if event.session_cost_usd is not None or self.usage.session_cost is None:
            self.usage.session_cost = event.session_cost_usd
        return []

    def _retrying(self, event: E.Retrying) -> list[Change]:
        text = f"retrying in {event.delay_s:.1f} s (attempt {event.attempt}): {event.reason}"
        return self.note(text, "warn")

    def _stalled(self, event: E.ReplyStalled) -> list[Change]:
        return self.note(event.message, "warn")

    def _governor_wait(self, event: E.GovernorWait) -> list[Change]:
        self.governor = event
        # A held turn and a provider's pause are worth a line; a wait for a free slot only
        # shows in the status line (there can be one per request).
        return self.note(event.message, "warn") if event.reason in ("budget", "backoff") else []

    def _governor_wait_end(self, _event: E.GovernorWaitEnd) -> list[Change]:
        self.governor = None
        return []

    def _advisory(self, event: E.Advisory) -> list[Change]:
        return self.note(event.message, "warn")

    def _agent(self, event: E.AgentChanged) -> list[Change]:
        return self.note(f"agent: {event.agent}")

    def _compaction(self, event: E.Compaction) -> list[Change]:
        if event.trigger == "start_here":
            return self.note("Start Here: the model continues from that message alone")
        return self.note("the conversation was compacted; the model continues from a summary")

    def _reset(self, _event: E.ContextReset) -> list[Change]:
        return self.note("the model's context was cleared; the transcript keeps everything")

    def _damaged(self, _event: E.DamagedFrame) -> list[Change]:
        return self.note("a damaged record in the session log is skipped", "warn")

    def _task_status(self, event: E.SubagentStatus) -> list[Change]:
        entry = self._tasks.get(event.task_id)
        if entry is None:
            entry = TaskEntry(self._id(), event.task_id, event.title, event.status)
            self._tasks[event.task_id] = entry
            return [self._add(entry)]
        entry.title, entry.status = event.title or entry.title, event.status
        return [Change("update", entry)]

    def _task_report(self, event: E.SubagentReport) -> list[Change]:
        entry = self._tasks.get(event.task_id)
        if entry is None:
            entry = TaskEntry(self._id(), event.task_id, event.title or "", "reported")
            self._tasks[event.task_id] = entry
            entry.report = event.text
            return [self._add(entry)]
        entry.report = event.text
        return [Change("update", entry)]

    def _task_removed(self, event: E.SubagentRemoved) -> list[Change]:
        entry = self._tasks.get(event.task_id)
        if entry is None:
            return []
        entry.status = "removed"
        return [Change("update", entry)]

    def _init_line(self, event: E.InitOutput) -> list[Change]:
        if self._init is None:
            self._init = InitEntry(self._id())
            changes = [self._add(self._init)]
        else:
            changes = [Change("update", self._init)]
        self._init.lines = [*self._init.lines, event.line][-INIT_LINES:]
        return changes

    def _init_end(self, event: E.InitEnd) -> list[Change]:
        if self._init is None:
            self._init = InitEntry(self._id())
            changes = [self._add(self._init)]
        else:
            changes = [Change("update", self._init)]
        self._init.status, self._init.exit_code = event.status, event.exit_code
        return changes


_STOPS = {
    "budget": "stopped: the session's budget is spent",
    "max_steps": "stopped: the turn reached its step limit",
    "doom_loop": "stopped: the agent was repeating itself",
}


def _parse(text: str) -> Any:
    try:
        return json.loads(text) if text else {}
    except ValueError:
        return text


# Each handler takes the event class it is listed with.
_HANDLERS: dict[type[E.Event], Callable[[Transcript, Any], list[Change]]] = {
    E.UserMessage: Transcript._user,
    E.TurnStart: Transcript._turn_start,
    E.TextDelta: Transcript._text,
    E.ReasoningDelta: Transcript._reasoning,
    E.ToolCallStart: Transcript._call_start,
    E.ToolCallDelta: Transcript._call_delta,
    E.DiscardPartial: Transcript._discard,
    E.ModelFallback: Transcript._fallback,
    E.AssistantMessage: Transcript._assistant,
    E.ToolCall: Transcript._call,
    E.ToolOutput: Transcript._output,
    E.ToolResult: Transcript._result,
    E.PlanProposed: Transcript._plan,
    E.TurnEnd: Transcript._turn_end,
    E.ErrorEvent: Transcript._error,
    E.UsageUpdate: Transcript._usage,
    E.Retrying: Transcript._retrying,
    E.Advisory: Transcript._advisory,
    E.ReplyStalled: Transcript._stalled,
    E.GovernorWait: Transcript._governor_wait,
    E.GovernorWaitEnd: Transcript._governor_wait_end,
    E.AgentChanged: Transcript._agent,
    E.Compaction: Transcript._compaction,
    E.ContextReset: Transcript._reset,
    E.DamagedFrame: Transcript._damaged,
    E.SubagentStatus: Transcript._task_status,
    E.SubagentReport: Transcript._task_report,
    E.SubagentRemoved: Transcript._task_removed,
    E.InitOutput: Transcript._init_line,
    E.InitEnd: Transcript._init_end,
}
