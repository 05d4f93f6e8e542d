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

from collections.abc import Callable
from typing import Any, ClassVar, dataclass_transform

JsonDict = dict[str, Any]


@dataclass_transform(kw_only_default=True, frozen_default=True)
class Event:
    """The base of every event: an immutable record with keyword-only fields.

    Subclasses declare fields as annotations (with defaults where a field is optional), like a
    frozen dataclass; type checkers treat them as one. The records are built here rather than
    with `dataclasses` because these ~35 classes are defined on every start of `xum run`, where
    `@dataclass` costs about 0.7 ms per class (it compiles methods with `exec`) and this costs
    next to nothing.
    """

    type: ClassVar[str] = ""
    _keep_none: ClassVar[frozenset[str]] = frozenset()
    _fields: ClassVar[tuple[str, ...]] = ()
    _defaults: ClassVar[dict[str, Any]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        fields = list(cls._fields)
        defaults = dict(cls._defaults)
        # This class's own annotations (not inherited ones), as strings: `inspect` is not needed.
        for name, annotation in vars(cls).get("__annotations__", {}).items():
            if str(annotation).startswith("ClassVar"):
                continue
            if name not in fields:
                fields.append(name)
            if name in cls.__dict__:
                defaults[name] = cls.__dict__[name]
            else:
                defaults.pop(name, None)
        cls._fields = tuple(fields)
        cls._defaults = defaults

    def __init__(self, **values: Any) -> None:
        fields = self._fields
        for name in values:
            if name not in fields:
                raise TypeError(f"{type(self).__name__} has no field {name!r}")
        for name in fields:
            if name in values:
                value = values[name]
            elif name in self._defaults:
                value = self._defaults[name]
            else:
                raise TypeError(f"{type(self).__name__} needs {name!r}")
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError(f"{type(self).__name__} is immutable")

    def __eq__(self, other: object) -> bool:
        return type(other) is type(self) and self.to_dict() == other.to_dict()

    def __hash__(self) -> int:
        return hash((type(self), tuple(repr(getattr(self, n)) for n in self._fields)))

    def __repr__(self) -> str:
        shown = ", ".join(f"{n}={getattr(self, n)!r}" for n in self._fields)
        return f"{type(self).__name__}({shown})"

    def to_dict(self) -> JsonDict:
        """The JSON object front-ends receive: `type` first, absent fields left out."""
        out: JsonDict = {"type": self.type}
        keep = self._keep_none
        for name in self._fields:
            value = getattr(self, name)
            if value is not None or name in keep:
                out[name] = value
        return out


EventSink = Callable[[Event], None]


def null_sink(_event: Event) -> None:
    return None


# Committed events (a frame of the session log) ---------------------------------------------------


class Committed(Event):
    """An event that stands for one frame: its sequence number and timestamp (ms)."""

    seq: int | None  # None only for a damaged frame whose position cannot be told
    ts: int


class TurnStart(Committed):
    type: ClassVar[str] = "turn-start"
    turn_id: str
    model: str | None = None  # the model the turn started with (older logs lack it)
    kind: str | None = None  # "compaction": a summarization turn, not the agent's


class UserMessage(Committed):
    type: ClassVar[str] = "user-message"
    text: str  # what the model received
    queued: bool | None = None  # sent while a turn ran, delivered after a step
    typed: str | None = None  # a slash command: what the user typed
    slash: JsonDict | None = None  # and what the command was
    synthetic: bool | None = None  # a row xum added (context changes)
    kind: str | None = None
    changed: list[str] | None = None
    # Images the message carries: references (sha256, media_type, size, name, width, height)
    # to the session's stored images, which the server serves by hash.
    images: list[JsonDict] | None = None


class ContextFrozen(Committed):
    type: ClassVar[str] = "context-frozen"
    reason: str | None
    agent: str | None
    mode: str | None
    tools: list[str]


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
    # The provider's own web searches in this reply (`query`, `results`: `title`, `url`;
    # `error`) and the pages its text cites (`title`, `url`); absent when there are none.
    web_searches: list[JsonDict] | None = None
    citations: list[JsonDict] | None = None


class ToolResult(Committed):
    type: ClassVar[str] = "tool-result"
    call_id: str
    name: str
    is_error: bool
    output: str
    meta: JsonDict
    duration_s: float | None = None


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
        out = super().to_dict()
        if self.usage is not None:
            out["cost_usd"] = self.cost_usd
        return out


class CompactionStart(Committed):
    """A summarization pass began (its `compaction` follows, or the turn ends without one)."""

    type: ClassVar[str] = "compaction-start"
    turn_id: str | None
    trigger: str | None  # manual, auto, force, idle
    model: str | None


class Compaction(Committed):
    type: ClassVar[str] = "compaction"
    summary: str  # what the provider sees from here on
    trigger: str | None = None  # manual, auto, force, idle, start_here
    model: str | None = None
    through_seq: int | None = None
    source_seq: int | None = None  # Start Here: the message it restarted from
    usage: JsonDict | None = None
    cost_usd: float | None = None


class ContextReset(Committed):
    type: ClassVar[str] = "context-reset"
    reason: str | None = None
    hard: bool | None = None  # /clear: the transcript starts over here too


class GoalUpdate(Committed):
    """A goal was set, or reached a final status, by a front-end (`xum run --goal`, `/goal`,
    the end of a goal run); the goal tools' changes are in their `tool-result`s' `meta.goal`."""

    type: ClassVar[str] = "goal"
    goal: JsonDict  # goalId, objective, status, budgetCents, turnCap, source, summary, reason


class ModelFallback(Committed):
    """A model refused and the turn went on with the next model of its fallback chain (config
    `modelFallbacks`): what streamed of the refused reply is thrown away, the retry follows."""

    type: ClassVar[str] = "model-fallback"
    turn_id: str | None
    step: int | None
    from_model: str  # the model that refused
    to_model: str  # the model the turn continues with
    message: str  # one line for a transcript: "X refused; continued with Y"
    text: str = ""  # what the refused reply said (often nothing)
    category: str | None = None  # the provider's refusal category, when it gave one
    usage: JsonDict | None = None  # of the refused reply (absent for a content-policy error)
    cost_usd: float | None = None  # ... priced as `from_model`; null: unknown

    def to_dict(self) -> JsonDict:
        out = super().to_dict()
        if self.usage is not None:
            out["cost_usd"] = self.cost_usd  # with a usage, null says "unknown"
        return out


class DamagedFrame(Committed):
    type: ClassVar[str] = "damaged-frame"
    raw: str  # the start of the line as it is on disk


# Streaming and informational events ----------------------------------------------------------


class StepStart(Event):
    type: ClassVar[str] = "step-start"
    step: int
    turn_id: str


class TextDelta(Event):
    type: ClassVar[str] = "text-delta"
    text: str


class ReasoningDelta(Event):
    type: ClassVar[str] = "reasoning-delta"
    text: str


class ToolCallStart(Event):
    type: ClassVar[str] = "tool-call-start"
    index: int
    call_id: str
    name: str


class ToolCallDelta(Event):
    type: ClassVar[str] = "tool-call-delta"
    index: int
    call_id: str
    arguments: str  # a fragment of the JSON text


class ToolCall(Event):
    """A call starts running (its arguments parsed, or the raw text when not valid JSON)."""

    type: ClassVar[str] = "tool-call"
    _keep_none: ClassVar[frozenset[str]] = frozenset({"arguments"})
    call_id: str
    name: str
    arguments: Any


class ToolOutput(Event):
    """Live output of a running call (bash, a hook), secrets masked; bounded and coalesced."""

    type: ClassVar[str] = "tool-output"
    call_id: str
    stream: str
    text: str


class UsageUpdate(Event):
    type: ClassVar[str] = "usage"
    _keep_none: ClassVar[frozenset[str]] = frozenset({"turn_cost_usd", "session_cost_usd"})
    turn: JsonDict
    turn_cost_usd: float | None
    session_cost_usd: float | None


class Retrying(Event):
    type: ClassVar[str] = "retrying"
    attempt: int
    delay_s: float
    reason: str


class ReplyStalled(Event):
    """The model's reply has brought nothing that counts (a whole event) for `silent_s` seconds,
    a quarter of the idle limit `idle_s`: a notice, so a user sees why nothing moves. The
    attempt ends at `idle_s` of silence and is retried within the retry budget. `began`: part of
    the reply had arrived (else the silence follows the response headers)."""

    type: ClassVar[str] = "reply-stalled"
    silent_s: float
    idle_s: float
    began: bool
    message: str


class DiscardPartial(Event):
    """The connection dropped mid-reply: throw away this step's deltas; the reply restarts."""

    type: ClassVar[str] = "discard-partial"


class AgentChanged(Event):
    type: ClassVar[str] = "agent-changed"
    agent: str


class PlanProposed(Event):
    type: ClassVar[str] = "plan-proposed"
    _keep_none: ClassVar[frozenset[str]] = frozenset({"path", "content", "mtime_ns"})
    call_id: str
    path: str | None
    content: str | None  # null for plans too large to keep
    mtime_ns: int | None


class Notification(Event):
    """The agent asked to notify the user (the `notify` tool, docs/notifications.md): live only,
    so a replay never notifies again; the call's `tool-result` (`meta.notification`) keeps it."""

    type: ClassVar[str] = "notification"
    _keep_none: ClassVar[frozenset[str]] = frozenset({"message"})
    call_id: str
    title: str
    message: str | None


class Advisory(Event):
    type: ClassVar[str] = "advisory"
    kind: str
    message: str
    call_id: str | None = None
    workspace_id: str | None = None


class GovernorWait(Event):
    """Something of this workspace waits for the process's governor (docs/governor.md):
    `reason` is `concurrency` (the provider's or model's cap of requests in flight is reached),
    `backoff` (the provider answered 429 or overloaded and asked every session to wait until
    `retry_at`), `subagents` (the process's cap of running sub-agents is reached) or `budget`
    (the fleet's daily budget is spent: a new turn is held until it is raised or the UTC day
    ends). `since` and `retry_at` are Unix times in seconds. A `governor-wait-end` follows."""

    type: ClassVar[str] = "governor-wait"
    reason: str
    message: str
    since: float
    provider: str | None = None
    model: str | None = None
    retry_at: float | None = None


class GovernorWaitEnd(Event):
    """The wait announced by the last `governor-wait` of this workspace is over."""

    type: ClassVar[str] = "governor-wait-end"
    reason: str
    waited_s: float


class ApprovalRequest(Event):
    """A tool call waits for a person: approve it once, always (a command prefix, or an MCP
    tool, in this project), or deny it. Every front-end answers it its own way (the browser's card, `xum run
    --approval`); the decision is on record in the call's `tool-result` (`meta.approval`)."""

    type: ClassVar[str] = "approval-request"
    request_id: str
    call_id: str
    tool: str
    kind: str  # command | critical | escalation | write | mcp
    subject: str  # the command, the path, or an MCP call's arguments (JSON)
    why: str  # what needs the approval, in xum's words
    reason: str | None = None  # the model's own reason (a sandbox escalation)
    prefix: str | None = None  # what "always" would remember; absent: not offered


class ApprovalResolved(Event):
    type: ClassVar[str] = "approval-resolved"
    request_id: str
    call_id: str
    decision: str  # once | always | deny
    by: str  # user | policy (nobody could be asked) | interrupted
    reason: str | None = None  # a denial's reason


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


class InitOutput(Event):
    """One line of the workspace's `.xum/init` output, secrets masked."""

    type: ClassVar[str] = "init-output"
    line: str


class InitEnd(Event):
    type: ClassVar[str] = "init-end"
    _keep_none: ClassVar[frozenset[str]] = frozenset({"exit_code"})
    status: str
    exit_code: int | None


class SubagentStatus(Event):
    type: ClassVar[str] = "subagent-status"
    _keep_none: ClassVar[frozenset[str]] = frozenset({"header"})
    task_id: str
    title: str
    status: str
    header: JsonDict | None


class SubagentReport(Event):
    type: ClassVar[str] = "subagent-report"
    _keep_none: ClassVar[frozenset[str]] = frozenset({"title"})
    task_id: str
    title: str | None
    text: str


class SubagentRemoved(Event):
    type: ClassVar[str] = "subagent-removed"
    task_id: str


# Background processes (docs/events.md, "Background processes").


class BackgroundWake(Event):
    """A monitored background process printed lines it watches for, or ended: the workspace is
    woken with a turn (now if idle, else after the running drive)."""

    type: ClassVar[str] = "background-wake"
    task_id: str
    process_id: str
    display_name: str
    reason: str  # "output": matching lines; "exit": the process ended
    status: str  # the process's status then (running, exited, killed, timed_out, failed)
    lines: list[str]  # the matching lines (bounded)
    exit_code: int | None = None
    retired: bool | None = None  # true: its monitor reached max_events


class BackgroundProcesses(Event):
    """The workspace's background processes after one started or ended (the newest last)."""

    type: ClassVar[str] = "background-processes"
    processes: list[JsonDict]


# Goal runs (docs/events.md, "Goal runs"); the field names are the CLI page's.


class GoalAdopted(Event):
    """A plain `xum run` adopts the goal its agent set; it now continues like `--goal`."""

    type: ClassVar[str] = "goal-adopted"
    _keep_none: ClassVar[frozenset[str]] = frozenset({"budgetCents", "turnCap"})
    goalId: str
    objective: str
    status: str
    budgetCents: int | None
    turnCap: int | None


class GoalContinuing(Event):
    type: ClassVar[str] = "goal-continuing"
    _keep_none: ClassVar[frozenset[str]] = frozenset({"turnCap", "budgetCents", "spentCents"})
    goalId: str
    turn: int  # the continuation about to run (1 for the first)
    turnCap: int | None
    spentCents: int | None
    budgetCents: int | None
    wrapUp: bool  # the goal budget is spent: the last turn, to wrap up


class GoalCompleted(Event):
    type: ClassVar[str] = "goal-completed"
    _keep_none: ClassVar[frozenset[str]] = frozenset({"summary", "spentCents"})
    goalId: str
    objective: str
    summary: str | None
    turns: int
    spentCents: int | None


class GoalIncomplete(Event):
    type: ClassVar[str] = "goal-incomplete"
    _keep_none: ClassVar[frozenset[str]] = frozenset({"spentCents", "budgetCents", "turnCap"})
    goalId: str
    objective: str
    reason: str  # goal_budget, goal_turns, session_budget, error, interrupted
    turns: int
    spentCents: int | None
    budgetCents: int | None
    turnCap: int | None


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
