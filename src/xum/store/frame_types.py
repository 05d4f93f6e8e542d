"""The event vocabulary of the session log: frame types and the shape of their `data`.

Three families:

* Messages that go into the provider history; `data["message"]` is an `xum.core.messages.Message`:
  `user_message` (role user), `assistant_message` (role assistant, plus `usage`,
  `finish_reason`, `model`), `tool_result` (role tool, exactly one `tool_result` part) and
  `synthetic_message` (role user: notes xum itself adds, such as "AGENTS.md changed").
* Context boundaries: `compaction` (the history restarts as one user message carrying
  `data["summary"]`, exactly the text the provider sees) and `context_reset` (the history
  restarts empty). The transcript still shows everything above a boundary; only the provider
  history forgets it. A boundary is one frame, so a crash leaves the old context or the new
  one, never a mix.
* Lifecycle frames the provider never sees: `turn_start`, `step_start`, `request_header`,
  `turn_end`, `context_frozen` (the exact system prompt and tools of a context segment, see
  `xum.context.frozen`), `plan_snapshot` (the plan file as the model last knew it),
  `compaction_start` (a summarization pass began; its `compaction` frame follows unless it
  failed or the process died), `goal` (a goal was set, completed or cleared, see
  `xum.engine.goals`) and `model_fallback` (a model refused and the turn went on with the next
  model of its fallback chain; the refused reply is kept there, out of the provider history). The engine may add more types; projections keep and ignore types they do
  not know.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final, Literal, NewType, NotRequired, TypedDict, overload

from xum.core.messages import Message
from xum.store.frames import Frame

USER_MESSAGE: Final = "user_message"
ASSISTANT_MESSAGE: Final = "assistant_message"
TOOL_RESULT: Final = "tool_result"
SYNTHETIC_MESSAGE: Final = "synthetic_message"
COMPACTION: Final = "compaction"
CONTEXT_RESET: Final = "context_reset"
TURN_START: Final = "turn_start"
STEP_START: Final = "step_start"
REQUEST_HEADER: Final = "request_header"
TURN_END: Final = "turn_end"
CONTEXT_FROZEN: Final = "context_frozen"
PLAN_SNAPSHOT: Final = "plan_snapshot"
COMPACTION_START: Final = "compaction_start"
GOAL: Final = "goal"
MODEL_FALLBACK: Final = "model_fallback"

# The role `data["message"]` must have for each message type.
MESSAGE_ROLES: Final[dict[str, str]] = {
    USER_MESSAGE: "user",
    ASSISTANT_MESSAGE: "assistant",
    TOOL_RESULT: "tool",
    SYNTHETIC_MESSAGE: "user",
}
BOUNDARY_TYPES: Final = frozenset({COMPACTION, CONTEXT_RESET})

TurnEndReason = Literal["completed", "interrupted", "error", "budget", "max_steps", "doom_loop"]

# What crash recovery writes for a tool call whose turn died under it.
INTERRUPTED_OUTPUT: Final = "interrupted: the session ended before this tool finished"
CRASH_CAUSE: Final = "crash"

# The payload (`data`) of each frame kind, as the writers write it today. A frame read back from
# disk is not checked against these (an older xum or a hand edit may have left other shapes), so
# readers still look values up defensively; the types hold the writers to one shape and tell
# readers which keys exist. A new kind or field is added here first: `spec()` refuses the rest
# under mypy. tests/golden/ holds logs written by earlier versions that must keep opening.

UsageDict = dict[str, int]  # `xum.core.messages.Usage.to_dict()`
JsonObject = dict[str, Any]


class UserMessageData(TypedDict):
    message: Message  # role user
    queued: NotRequired[bool]  # sent while a turn ran, delivered after its step
    typed: NotRequired[str]  # a slash command: what the user typed
    slash: NotRequired[JsonObject | None]  # ... and what the command was


class PlanSnapshotData(TypedDict):
    path: str
    exists: bool
    mtime_ns: int  # 0 when the file does not exist
    sha256: str  # "" when the file does not exist
    content: str | None  # None when the plan is too large to keep


class SyntheticNote(TypedDict, total=False):
    """What a synthetic message says about itself besides its text."""

    kind: str  # what prompted it: "context_update", "goal_continuation"
    goal_id: str  # a goal continuation: its goal


class SyntheticMessageData(SyntheticNote):
    message: Message  # role user: a note xum itself adds
    digests: NotRequired[dict[str, str]]  # a context update: the changed sections' digests
    changed: NotRequired[list[str]]  # ... and their names
    plan: NotRequired[PlanSnapshotData]  # ... and the plan file as it is now


class AssistantMessageData(TypedDict):
    message: Message
    usage: UsageDict
    finish_reason: str
    raw_finish_reason: NotRequired[str | None]  # the provider's own word for it
    model: str
    cost_usd: float | None  # None: the provider reported no usage, so the price is unknown
    step: int


class ToolResultData(TypedDict):
    message: Message  # role tool, exactly one tool_result part
    meta: NotRequired[JsonObject]  # what the tool reports besides its output (exit code, ...)
    duration_s: NotRequired[float]
    synthetic: NotRequired[bool]  # written by xum (crash recovery), not by the tool


CompactionTrigger = Literal["manual", "auto", "force", "idle", "start_here"]


class CompactionData(TypedDict):
    summary: str  # what the provider sees from here on (lead-in included)
    through_seq: int  # the last frame the summary covers
    trigger: CompactionTrigger
    model: NotRequired[str]  # the model that wrote it (absent for Start Here)
    usage: NotRequired[UsageDict]  # of the summarization request
    cost_usd: NotRequired[float | None]
    source_seq: NotRequired[int]  # Start Here: the frame whose text became the context


class CompactionStartData(TypedDict):
    turn_id: str
    trigger: CompactionTrigger
    model: str


class GoalData(TypedDict):
    """`xum.engine.goals.Goal.to_json()`: goalId, objective, status, budgetCents, turnCap,
    source, baseUsd, and summary / reason when they apply."""

    goal: JsonObject


class ContextResetData(TypedDict):
    reason: str  # "clear" for /clear and /clear --soft
    hard: NotRequired[bool]  # /clear: the transcript also starts over from here


class TurnStartData(TypedDict):
    turn_id: str
    model: NotRequired[str]
    kind: NotRequired[Literal["compaction"]]  # absent: a turn that runs the agent


class StepStartData(TypedDict):
    turn_id: str
    step: int
    # A forced choice (`xum.llm.types.ToolChoice`): "none", "required", {"name": "<tool>"}.
    tool_choice: NotRequired[Literal["auto", "required", "none"] | dict[str, str]]


class RequestHeaderData(TypedDict):
    """Written when the shape of a request changes (`xum.engine.replay.request_shape`), so a
    replay rebuilds every request. The system prompt and tools are either inline or, when they
    are the segment's frozen ones, found in the `context_frozen` frame at `frozen_seq`."""

    system_sha256: str
    tools_sha256: str
    model: str
    model_id: str
    thinking: str
    max_output_tokens: int | None
    params: JsonObject
    cache_key: str | None
    cache: bool
    web_search: NotRequired[JsonObject]  # the provider's own search (xum.engine.native_search)
    frozen_seq: NotRequired[int]
    system: NotRequired[str]
    tools: NotRequired[list[JsonObject]]


class ContextFrozenData(TypedDict):
    """The frozen sections of a context segment (`xum.context.frozen.frozen_frame_data`)."""

    reason: str  # "start", "compaction", "context_reset" or "tool_set_changed"
    agent: str
    mode: str
    model: str
    system: str
    tools: list[JsonObject]  # name, description, parameters: exactly as sent
    tool_identity: str
    digests: dict[str, str]  # section or "tool:<name>" -> digest of its text
    system_sha256: str
    tools_sha256: str


class ModelFallbackData(TypedDict):
    """A model refused (a reply that ended in a refusal, or a provider's content-policy error)
    and the turn went on with the next model of its chain (`xum.engine.fallback`). The refused
    reply lives here, not in an `assistant_message`, so no later request carries it."""

    turn_id: str
    step: int  # the refused step; the next step is the retry on `to_model`
    from_model: str  # the model that refused
    to_model: str  # the model the turn continues with
    message: Message  # the refused reply (role assistant; empty for an error)
    finish_reason: str  # "refusal", or the error's kind ("refused")
    raw_finish_reason: NotRequired[str | None]
    category: NotRequired[str]  # the provider's refusal category, when it gave one
    explanation: NotRequired[str]  # ... and its explanation
    # The refused reply's usage and cost, priced as `from_model` (absent for an error: the
    # provider bills nothing for a request it rejected). `cost_usd` None: unknown.
    usage: NotRequired[UsageDict]
    cost_usd: NotRequired[float | None]


class TurnEndData(TypedDict):
    turn_id: str
    reason: TurnEndReason
    usage: NotRequired[UsageDict]
    cost_usd: NotRequired[float | None]
    steps: NotRequired[int]
    error: NotRequired[JsonObject]  # `xum.core.errors` to_dict() of what ended the turn
    cause: NotRequired[str]  # "crash": closed by recovery, not by the turn


FrameKind = Literal[
    "user_message",
    "synthetic_message",
    "assistant_message",
    "tool_result",
    "compaction",
    "compaction_start",
    "context_reset",
    "turn_start",
    "step_start",
    "request_header",
    "turn_end",
    "context_frozen",
    "plan_snapshot",
    "goal",
    "model_fallback",
]

# Every frame kind the engine writes, with the type of its payload.
FRAME_KINDS: Final[dict[str, type]] = {
    USER_MESSAGE: UserMessageData,
    SYNTHETIC_MESSAGE: SyntheticMessageData,
    ASSISTANT_MESSAGE: AssistantMessageData,
    TOOL_RESULT: ToolResultData,
    COMPACTION: CompactionData,
    COMPACTION_START: CompactionStartData,
    CONTEXT_RESET: ContextResetData,
    TURN_START: TurnStartData,
    STEP_START: StepStartData,
    REQUEST_HEADER: RequestHeaderData,
    TURN_END: TurnEndData,
    CONTEXT_FROZEN: ContextFrozenData,
    PLAN_SNAPSHOT: PlanSnapshotData,
    GOAL: GoalData,
    MODEL_FALLBACK: ModelFallbackData,
}

# A frame to append: its kind and payload. Only `spec` makes one, so every frame a writer
# appends went through the type check of its kind.
FrameSpec = NewType("FrameSpec", tuple[str, Mapping[str, Any]])


# fmt: off
@overload
def spec(kind: Literal["user_message"], payload: UserMessageData) -> FrameSpec: ...
@overload
def spec(kind: Literal["synthetic_message"], payload: SyntheticMessageData) -> FrameSpec: ...
@overload
def spec(kind: Literal["assistant_message"], payload: AssistantMessageData) -> FrameSpec: ...
@overload
def spec(kind: Literal["tool_result"], payload: ToolResultData) -> FrameSpec: ...
@overload
def spec(kind: Literal["compaction"], payload: CompactionData) -> FrameSpec: ...
@overload
def spec(kind: Literal["compaction_start"], payload: CompactionStartData) -> FrameSpec: ...
@overload
def spec(kind: Literal["context_reset"], payload: ContextResetData) -> FrameSpec: ...
@overload
def spec(kind: Literal["turn_start"], payload: TurnStartData) -> FrameSpec: ...
@overload
def spec(kind: Literal["step_start"], payload: StepStartData) -> FrameSpec: ...
@overload
def spec(kind: Literal["request_header"], payload: RequestHeaderData) -> FrameSpec: ...
@overload
def spec(kind: Literal["turn_end"], payload: TurnEndData) -> FrameSpec: ...
@overload
def spec(kind: Literal["context_frozen"], payload: ContextFrozenData) -> FrameSpec: ...
@overload
def spec(kind: Literal["plan_snapshot"], payload: PlanSnapshotData) -> FrameSpec: ...
@overload
def spec(kind: Literal["goal"], payload: GoalData) -> FrameSpec: ...
@overload
def spec(kind: Literal["model_fallback"], payload: ModelFallbackData) -> FrameSpec: ...
# fmt: on
def spec(kind: FrameKind, payload: Mapping[str, Any]) -> FrameSpec:
    """A frame to append, its payload checked by mypy against the kind's type."""
    return FrameSpec((kind, payload))


def unchecked(kind: str, payload: Mapping[str, Any]) -> FrameSpec:
    """A frame whose payload is not checked against a type: a copy of a frame some writer
    already wrote (a fork copies a log, kinds it does not know included), or a frame a test
    makes by hand. Writers of new frames use `spec`."""
    return FrameSpec((kind, payload))


# fmt: off
@overload
def payload(frame: Frame, kind: Literal["user_message"]) -> UserMessageData: ...
@overload
def payload(frame: Frame, kind: Literal["synthetic_message"]) -> SyntheticMessageData: ...
@overload
def payload(frame: Frame, kind: Literal["assistant_message"]) -> AssistantMessageData: ...
@overload
def payload(frame: Frame, kind: Literal["tool_result"]) -> ToolResultData: ...
@overload
def payload(frame: Frame, kind: Literal["compaction"]) -> CompactionData: ...
@overload
def payload(frame: Frame, kind: Literal["compaction_start"]) -> CompactionStartData: ...
@overload
def payload(frame: Frame, kind: Literal["context_reset"]) -> ContextResetData: ...
@overload
def payload(frame: Frame, kind: Literal["turn_start"]) -> TurnStartData: ...
@overload
def payload(frame: Frame, kind: Literal["step_start"]) -> StepStartData: ...
@overload
def payload(frame: Frame, kind: Literal["request_header"]) -> RequestHeaderData: ...
@overload
def payload(frame: Frame, kind: Literal["turn_end"]) -> TurnEndData: ...
@overload
def payload(frame: Frame, kind: Literal["context_frozen"]) -> ContextFrozenData: ...
@overload
def payload(frame: Frame, kind: Literal["plan_snapshot"]) -> PlanSnapshotData: ...
@overload
def payload(frame: Frame, kind: Literal["goal"]) -> GoalData: ...
@overload
def payload(frame: Frame, kind: Literal["model_fallback"]) -> ModelFallbackData: ...
# fmt: on
def payload(frame: Frame, kind: FrameKind) -> Mapping[str, Any]:
    """The payload of `frame`, typed for `kind`; ValueError when the frame is of another kind.
    The type names the keys a writer puts there; the values come from disk and are not checked,
    so a reader still treats each one as possibly missing or of another type."""
    if frame.type != kind:
        raise ValueError(f"frame {frame.seq} is a {frame.type!r} frame, not {kind!r}")
    return frame.data


def tool_result_message(call_id: str, name: str, output: str, *, is_error: bool) -> Message:
    return {
        "role": "tool",
        "content": [
            {
                "type": "tool_result",
                "call_id": call_id,
                "name": name,
                "output": output,
                "is_error": is_error,
            }
        ],
    }


def summary_message(summary: str) -> Message:
    """The one user message a compaction leaves at the start of the provider history."""
    return {"role": "user", "content": [{"type": "text", "text": summary}]}
