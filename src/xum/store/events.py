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
  failed or the process died) and `goal` (a goal was set, completed or cleared, see
  `xum.engine.goals`). The engine may add more types; projections keep and ignore types they do
  not know.
"""

from __future__ import annotations

from typing import Any, Final, Literal, NotRequired, TypedDict

from xum.core.messages import Message

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

# The role `data["message"]` must have for each message type.
MESSAGE_ROLES: Final[dict[str, str]] = {
    USER_MESSAGE: "user",
    ASSISTANT_MESSAGE: "assistant",
    TOOL_RESULT: "tool",
    SYNTHETIC_MESSAGE: "user",
}
BOUNDARY_TYPES: Final = frozenset({COMPACTION, CONTEXT_RESET})

TurnEndReason = Literal["completed", "interrupted", "error", "budget", "max_steps"]

# What crash recovery writes for a tool call whose turn died under it.
INTERRUPTED_OUTPUT: Final = "interrupted: the session ended before this tool finished"
CRASH_CAUSE: Final = "crash"


class UserMessageData(TypedDict):
    message: Message


class AssistantMessageData(TypedDict):
    message: Message
    usage: dict[str, int]  # `xum.core.messages.Usage.to_dict()`
    finish_reason: str
    model: str


class ToolResultData(TypedDict):
    message: Message  # role tool, exactly one tool_result part
    synthetic: NotRequired[bool]  # written by xum (crash recovery), not by the tool


class SyntheticMessageData(TypedDict):
    message: Message  # role user
    kind: NotRequired[str]  # what prompted it, e.g. "agents_md_changed"


CompactionTrigger = Literal["manual", "auto", "force", "idle", "start_here"]


class CompactionData(TypedDict):
    summary: str  # what the provider sees from here on (lead-in included)
    through_seq: NotRequired[int]  # the last frame the summary covers
    trigger: NotRequired[CompactionTrigger]
    model: NotRequired[str]  # the model that wrote it (absent for Start Here)
    usage: NotRequired[dict[str, int]]  # of the summarization request
    cost_usd: NotRequired[float | None]
    source_seq: NotRequired[int]  # Start Here: the frame whose text became the context


class CompactionStartData(TypedDict):
    turn_id: str
    trigger: CompactionTrigger
    model: str


class GoalData(TypedDict):
    """`xum.engine.goals.Goal.to_json()`: goalId, objective, status, budgetCents, turnCap,
    source, baseUsd, and summary / reason when they apply."""

    goal: dict[str, Any]


class ContextResetData(TypedDict):
    reason: NotRequired[str]  # "clear" for /clear and /clear --soft
    hard: NotRequired[bool]  # /clear: the transcript also starts over from here


class TurnStartData(TypedDict):
    turn_id: str
    model: NotRequired[str]
    kind: NotRequired[Literal["compaction"]]  # absent: a turn that runs the agent


class StepStartData(TypedDict):
    turn_id: str
    step: int


class RequestHeaderData(TypedDict):
    """Recorded when the system prompt or the tool set changes, so a restart replays them."""

    system_sha256: str
    tools_sha256: str
    system: NotRequired[str]
    tools: NotRequired[list[dict[str, Any]]]


class ContextFrozenData(TypedDict):
    """The frozen sections of a context segment (`xum.context.frozen.frozen_frame_data`)."""

    reason: str  # "start", "compaction", "context_reset" or "tool_set_changed"
    agent: str
    mode: str
    model: str
    system: str
    tools: list[dict[str, Any]]  # name, description, parameters: exactly as sent
    tool_identity: str
    digests: dict[str, str]  # section or "tool:<name>" -> digest of its text
    system_sha256: str
    tools_sha256: str


class PlanSnapshotData(TypedDict):
    path: str
    exists: bool
    mtime_ns: int
    sha256: str
    content: str | None  # None when the plan is too large to keep


class TurnEndData(TypedDict):
    turn_id: str
    reason: TurnEndReason
    cause: NotRequired[str]


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
