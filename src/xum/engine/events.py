"""The event vocabulary: one typed stream for every front-end.

Every event is a frozen dataclass with a kebab-case `type`. `xum run --json` writes each one as an
NDJSON line, the server sends the same objects over its WebSocket, and `xum session --json`
prints the committed ones of a log: all three call `to_dict()` on the same classes, so they
cannot drift apart. docs/events.md documents every type and field.

Two families:

* Committed events stand for a frame of the session log and carry its `seq` and `ts`. The
  engine never builds them by hand: it appends the frame and derives the event from the frame
  it just wrote (`xum.engine.derive.frame_event`), the same function a replay uses. So a live
  event and its replay are identical by construction.
* Streaming and informational events (deltas, progress, advisories) carry no `seq`: they are not
  stored one by one. What the deltas add up to is committed as an `assistant-message`.

Serialization leaves out a field whose value is None ("absent": a field the frame does not
have, or that does not apply), except for the fields a class lists in `_keep_none`, where null
is a value (a reply with no known price has `cost_usd: null`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, ClassVar

JsonDict = dict[str, Any]


@dataclass(frozen=True, slots=True, kw_only=True)
class Event:
    """The base of every event."""

    type: ClassVar[str] = ""
    _keep_none: ClassVar[frozenset[str]] = frozenset()

    def to_dict(self) -> JsonDict:
        """The JSON object front-ends receive: `type` first, absent fields left out."""
        out: JsonDict = {"type": self.type}
        keep = self._keep_none
        for name in _field_names(type(self)):
            value = getattr(self, name)
            if value is not None or name in keep:
                out[name] = value
        return out


_FIELDS: dict[type[Event], tuple[str, ...]] = {}


def _field_names(cls: type[Event]) -> tuple[str, ...]:
    names = _FIELDS.get(cls)
    if names is None:
        names = _FIELDS[cls] = tuple(f.name for f in dataclasses.fields(cls))
    return names


EventSink = Callable[[Event], None]


def null_sink(_event: Event) -> None:
    return None


# Committed events (a frame of the session log) ---------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Committed(Event):
    """An event that stands for one frame: its sequence number and timestamp (ms)."""

    seq: int | None  # None only for a damaged frame whose position cannot be told
    ts: int


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnStart(Committed):
    type: ClassVar[str] = "turn-start"
    turn_id: str
    model: str | None = None  # the model the turn started with (older logs lack it)


@dataclass(frozen=True, slots=True, kw_only=True)
class UserMessage(Committed):
    type: ClassVar[str] = "user-message"
    text: str  # what the model received
    queued: bool | None = None  # sent while a turn ran, delivered after a step
    typed: str | None = None  # a slash command: what the user typed
    slash: JsonDict | None = None  # and what the command was
    synthetic: bool | None = None  # a row xum added (context changes)
    kind: str | None = None
    changed: list[str] | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextFrozen(Committed):
    type: ClassVar[str] = "context-frozen"
    reason: str | None
    agent: str | None
    mode: str | None
    tools: list[str]


@dataclass(frozen=True, slots=True, kw_only=True)
class AssistantMessage(Committed):
    type: ClassVar[str] = "assistant-message"
    _keep_none: ClassVar[frozenset[str]] = frozenset({"cost_usd", "finish_reason", "usage"})
    text: str
    reasoning: str
    tool_calls: list[JsonDict]  # id, name, arguments (raw JSON text)
    finish_reason: str | None
    usage: JsonDict | None
    cost_usd: float | None  # null: the model has no known price
    model: str | None = None
    step: int | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolResult(Committed):
    type: ClassVar[str] = "tool-result"
    call_id: str
    name: str
    is_error: bool
    output: str
    meta: JsonDict
    duration_s: float | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TurnEnd(Committed):
    type: ClassVar[str] = "turn-end"
    turn_id: str | None
    reason: str | None
    # A turn crash recovery closed (cause "crash"), or one from an older log, has no usage, and
    # then no cost or steps either; otherwise all three are there (a null cost is unknown).
    usage: JsonDict | None = None
    cost_usd: float | None = None
    steps: int | None = None
    error: JsonDict | None = None
    cause: str | None = None

    def to_dict(self) -> JsonDict:
        out = Event.to_dict(self)
        if self.usage is not None:
            out["cost_usd"] = self.cost_usd
        return out


@dataclass(frozen=True, slots=True, kw_only=True)
class Compaction(Committed):
    type: ClassVar[str] = "compaction"
    summary: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ContextReset(Committed):
    type: ClassVar[str] = "context-reset"


@dataclass(frozen=True, slots=True, kw_only=True)
class DamagedFrame(Committed):
    type: ClassVar[str] = "damaged-frame"
    raw: str  # the start of the line as it is on disk


# Streaming and informational events ----------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class StepStart(Event):
    type: ClassVar[str] = "step-start"
    step: int
    turn_id: str


@dataclass(frozen=True, slots=True, kw_only=True)
class TextDelta(Event):
    type: ClassVar[str] = "text-delta"
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ReasoningDelta(Event):
    type: ClassVar[str] = "reasoning-delta"
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallStart(Event):
    type: ClassVar[str] = "tool-call-start"
    index: int
    call_id: str
    name: str


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCallDelta(Event):
    type: ClassVar[str] = "tool-call-delta"
    index: int
    call_id: str
    arguments: str  # a fragment of the JSON text


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolCall(Event):
    """A call starts running (its arguments parsed, or the raw text when not valid JSON)."""

    type: ClassVar[str] = "tool-call"
    _keep_none: ClassVar[frozenset[str]] = frozenset({"arguments"})
    call_id: str
    name: str
    arguments: Any


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolOutput(Event):
    """Live output of a running call (bash, a hook), secrets masked; bounded and coalesced."""

    type: ClassVar[str] = "tool-output"
    call_id: str
    stream: str
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class UsageUpdate(Event):
    type: ClassVar[str] = "usage"
    _keep_none: ClassVar[frozenset[str]] = frozenset({"turn_cost_usd", "session_cost_usd"})
    turn: JsonDict
    turn_cost_usd: float | None
    session_cost_usd: float | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Retrying(Event):
    type: ClassVar[str] = "retrying"
    attempt: int
    delay_s: float
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True)
class DiscardPartial(Event):
    """The connection dropped mid-reply: throw away this step's deltas; the reply restarts."""

    type: ClassVar[str] = "discard-partial"


@dataclass(frozen=True, slots=True, kw_only=True)
class AgentChanged(Event):
    type: ClassVar[str] = "agent-changed"
    agent: str


@dataclass(frozen=True, slots=True, kw_only=True)
class PlanProposed(Event):
    type: ClassVar[str] = "plan-proposed"
    _keep_none: ClassVar[frozenset[str]] = frozenset({"path", "content", "mtime_ns"})
    call_id: str
    path: str | None
    content: str | None  # null for plans too large to keep
    mtime_ns: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Advisory(Event):
    type: ClassVar[str] = "advisory"
    kind: str
    message: str
    call_id: str | None = None
    workspace_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorEvent(Event):
    """A turn is ending on an error (the `turn-end` that follows carries the same object), or
    the server could not run a message."""

    type: ClassVar[str] = "error"
    code: str
    message: str
    hint: str | None = None
    kind: str | None = None

    @classmethod
    def from_dict(cls, error: JsonDict) -> ErrorEvent:
        return cls(
            code=str(error.get("code", "error")),
            message=str(error.get("message", "")),
            hint=error.get("hint"),
            kind=error.get("kind"),
        )

    def error_dict(self) -> JsonDict:
        return {k: v for k, v in self.to_dict().items() if k != "type"}


@dataclass(frozen=True, slots=True, kw_only=True)
class InitOutput(Event):
    """One line of the workspace's `.xum/init` output, secrets masked."""

    type: ClassVar[str] = "init-output"
    line: str


@dataclass(frozen=True, slots=True, kw_only=True)
class InitEnd(Event):
    type: ClassVar[str] = "init-end"
    _keep_none: ClassVar[frozenset[str]] = frozenset({"exit_code"})
    status: str
    exit_code: int | None


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentStatus(Event):
    type: ClassVar[str] = "subagent-status"
    _keep_none: ClassVar[frozenset[str]] = frozenset({"header"})
    task_id: str
    title: str
    status: str
    header: JsonDict | None


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentReport(Event):
    type: ClassVar[str] = "subagent-report"
    _keep_none: ClassVar[frozenset[str]] = frozenset({"title"})
    task_id: str
    title: str | None
    text: str


@dataclass(frozen=True, slots=True, kw_only=True)
class SubagentRemoved(Event):
    type: ClassVar[str] = "subagent-removed"
    task_id: str


def event_types() -> dict[str, type[Event]]:
    """Every event class by its `type` (docs and tests check the vocabulary against it)."""
    out: dict[str, type[Event]] = {}
    pending: list[type[Event]] = [Event]
    while pending:
        cls = pending.pop()
        pending.extend(cls.__subclasses__())
        if cls.type:
            out[cls.type] = cls
    return out
