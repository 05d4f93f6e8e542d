"""The provider history: the `list[Message]` the next request sends, derived from the log.

Rules, applied to whatever the log holds (damaged frames, a crash mid-turn, a hand edit):

* Only what follows the latest boundary counts: after a `compaction` the history restarts as one
  user message carrying its summary; after a `context_reset` it restarts empty.
* Damaged frames, lifecycle frames and unknown types contribute nothing.
* Every tool call of an assistant message gets a result in the tool messages right after it, in
  call order; a call the log has no result for gets a synthetic error result.
* A result whose call id is not one of those calls (orphaned, late, duplicated) is dropped.
* Empty assistant messages (and empty text parts in them) are dropped; so are repeated tool
  call ids within one message.

`HistoryProjection` does this incrementally: it remembers the last seq it consumed and, on the
next request, processes only the frames appended since, so its cost follows the new frames,
not the history length. `rebuild_history` is the straightforward whole-log version; tests check
the two agree.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import cast

from xum.core.messages import Message, Part
from xum.store import frame_types as ev
from xum.store.follower import FrameSource, LogFollower
from xum.store.frames import Frame

MISSING_RESULT_OUTPUT = "error: no result was recorded for this tool call"


class HistoryProjection(LogFollower):
    """Incremental provider history. `update(log)` before each request returns the messages.

    Nothing is copied per request: the messages are the log frames' own objects, and when every
    tool call has its result (the normal state before a request) the list returned is the
    projection's own, which later updates only ever append to (a boundary starts a new list).
    So a list handed out is never changed except by growing at the end; treat it and its
    messages as read-only, and take `list(...)` of it to keep a snapshot.
    """

    from_boundary = True

    def reset(self) -> None:
        super().reset()
        self._done: list[Message] = []  # settled history of the current segment
        # The last assistant message with tool calls, while its results may still arrive.
        self._open: Message | None = None
        self._calls: dict[str, str] = {}  # call id -> tool name, in call order
        self._results: dict[str, Message] = {}

    def update(self, log: FrameSource) -> list[Message]:
        """Consume what `log` published since the last call; return the history."""
        self.follow(log)
        return self.messages()

    def messages(self) -> list[Message]:
        if self._open is None:
            return self._done
        # Tool calls still waiting: a fresh list, with placeholders the real results replace.
        return [*self._done, self._open, *self._open_results()]

    # Internals -------------------------------------------------------------------------------

    def _apply(self, frame: Frame) -> None:
        kind = frame.type
        role = ev.MESSAGE_ROLES.get(kind)
        if role is not None:
            message = _message(frame, role)
            if message is None:
                return
            if kind == ev.TOOL_RESULT:
                self._add_results(message)
            elif kind == ev.ASSISTANT_MESSAGE:
                self._add_assistant(message)
            else:
                self._settle()
                self._done.append(message)
        elif kind == ev.CONTEXT_RESET:
            self._restart()
        elif kind == ev.COMPACTION:
            summary = ev.payload(frame, ev.COMPACTION).get("summary")
            if isinstance(summary, str):
                self._restart()
                self._done.append(ev.summary_message(summary))

    def _restart(self) -> None:
        self._done = []  # a new list: lists handed out earlier keep their contents
        self._open = None
        self._calls = {}
        self._results = {}

    def _add_assistant(self, message: Message) -> None:
        cleaned = clean_assistant(message)
        if cleaned is None:
            return  # empty: as if it were not there
        self._settle()
        calls = tool_calls(cleaned)
        if calls:
            self._open, self._calls, self._results = cleaned, calls, {}
        else:
            self._done.append(cleaned)

    def _add_results(self, message: Message) -> None:
        if self._open is None:
            return
        for call_id, result in result_messages(message):
            if call_id in self._calls and call_id not in self._results:
                self._results[call_id] = result
        if len(self._results) == len(self._calls):
            self._settle()  # complete: anything more for these calls would be dropped anyway

    def _open_results(self) -> list[Message]:
        return [
            self._results.get(call_id) or missing_result(call_id, name)
            for call_id, name in self._calls.items()
        ]

    def _settle(self) -> None:
        """A non-tool message arrived: the open tool calls get their results or error ones."""
        if self._open is None:
            return
        self._done.append(self._open)
        self._done.extend(self._open_results())
        self._open = None
        self._calls = {}
        self._results = {}


def rebuild_history(frames: Sequence[Frame]) -> list[Message]:
    """The provider history of the whole log, computed from scratch (no incremental state)."""
    intact = [f for f in frames if not f.damaged]
    out: list[Message] = []
    start = 0
    for index in range(len(intact) - 1, -1, -1):
        frame = intact[index]
        if frame.type == ev.CONTEXT_RESET:
            start = index + 1
            break
        if frame.type == ev.COMPACTION:
            summary = ev.payload(frame, ev.COMPACTION).get("summary")
            if isinstance(summary, str):
                out.append(ev.summary_message(summary))
                start = index + 1
                break

    entries: list[tuple[str, Message]] = []
    for frame in intact[start:]:
        role = ev.MESSAGE_ROLES.get(frame.type)
        message = _message(frame, role) if role is not None else None
        if message is None:
            continue
        if frame.type == ev.ASSISTANT_MESSAGE:
            message = clean_assistant(message)
            if message is None:
                continue
        entries.append((frame.type, message))

    index = 0
    while index < len(entries):
        kind, message = entries[index]
        index += 1
        if kind == ev.TOOL_RESULT:
            continue  # no assistant message with tool calls right before it
        calls = tool_calls(message) if kind == ev.ASSISTANT_MESSAGE else {}
        out.append(message)
        if not calls:
            continue
        results: dict[str, Message] = {}
        while index < len(entries) and entries[index][0] == ev.TOOL_RESULT:
            for call_id, result in result_messages(entries[index][1]):
                if call_id in calls and call_id not in results:
                    results[call_id] = result
            index += 1
        out.extend(results.get(c) or missing_result(c, name) for c, name in calls.items())
    return out


# Message helpers (shared by both versions) ------------------------------------------------------


def _message(frame: Frame, role: str) -> Message | None:
    message = frame.data.get("message")
    if (
        not isinstance(message, dict)
        or message.get("role") != role
        or not isinstance(message.get("content"), list)
    ):
        return None
    return cast(Message, message)


def clean_assistant(message: Message) -> Message | None:
    """`message` without empty text parts, unknown parts or repeated tool call ids; None when
    nothing is left. Returns the same object when nothing had to go (the common case)."""
    kept: list[Part] = []
    seen: set[str] = set()
    for part in message["content"]:
        if not isinstance(part, dict):
            continue
        kind = part.get("type")
        if kind in ("text", "reasoning"):
            if part.get("text") or part.get("state"):  # empty text with replay state stays
                kept.append(part)
        elif kind == "web_search":  # a provider-side search: the encoders decide what to resend
            kept.append(part)
        elif kind == "tool_call":
            call_id = part.get("id")
            if isinstance(call_id, str) and call_id and call_id not in seen:
                seen.add(call_id)
                kept.append(part)
    if not kept:
        return None
    if len(kept) == len(message["content"]):
        return message
    return {"role": "assistant", "content": kept}


def tool_calls(message: Message) -> dict[str, str]:
    """Call id -> tool name for the tool calls of an assistant message, in order. Reads any
    message leniently (parts that are not the expected shape are skipped), so the log's crash
    repair and the engine ask the same question the same way (`xum.store.turns`)."""
    calls: dict[str, str] = {}
    for part in message["content"]:
        if isinstance(part, dict) and part.get("type") == "tool_call":
            call_id, name = part.get("id"), part.get("name")
            if isinstance(call_id, str):
                calls[call_id] = name if isinstance(name, str) else ""
    return calls


def result_ids(message: Message) -> list[str]:
    """The call ids a tool message answers, in order (leniently, like `tool_calls`)."""
    return [call_id for call_id, _ in result_messages(message)]


def result_messages(message: Message) -> list[tuple[str, Message]]:
    """(call id, one-result tool message) for each tool result in a tool message."""
    content = message["content"]
    out: list[tuple[str, Message]] = []
    for part in content:
        if isinstance(part, dict) and part.get("type") == "tool_result":
            call_id = part.get("call_id")
            if isinstance(call_id, str):
                single: Message = (
                    message if len(content) == 1 else {"role": "tool", "content": [part]}
                )
                out.append((call_id, single))
    return out


def missing_result(call_id: str, name: str) -> Message:
    return ev.tool_result_message(call_id, name, MISSING_RESULT_OUTPUT, is_error=True)
