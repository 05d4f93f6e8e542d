"""The last turn of a log, and the tool calls in it that still have no result.

One scan serves everyone who needs it: the log's crash repair (a writer that died mid-turn left
calls without results and no `turn_end`), the engine closing a turn that broke off (an
interrupt, a budget stop, an internal error), and `xum doctor`'s report. It reads leniently,
through the projection's message helpers (which pair calls with results for the provider
history): frames may be hand-edited or damaged, so anything that is not the expected shape is
skipped.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import cast

from xum.core.messages import Message
from xum.store import frame_types as ev
from xum.store.frames import Frame
from xum.store.projection import result_ids, tool_calls


@dataclass(frozen=True, slots=True)
class OpenTurn:
    """A turn with no `turn_end` yet."""

    turn_id: str
    calls: dict[str, str]  # call id -> tool name of the calls without a result, in call order


def open_turn(frames: Sequence[Frame]) -> OpenTurn | None:
    """The last turn of `frames` when it has no `turn_end`, else None. Costs O(frames of that
    turn): it walks back to the turn's start only."""
    start = len(frames) - 1
    while start >= 0:
        frame = frames[start]
        if not frame.damaged and frame.type in (ev.TURN_START, ev.TURN_END):
            break
        start -= 1
    if start < 0 or frames[start].type != ev.TURN_START:
        return None
    turn_id = frames[start].data.get("turn_id")
    calls: dict[str, str] = {}
    for frame in frames[start + 1 :]:
        if frame.damaged or frame.type not in (ev.ASSISTANT_MESSAGE, ev.TOOL_RESULT):
            continue
        message = frame.data.get("message")
        if not isinstance(message, dict) or not isinstance(message.get("content"), list):
            continue
        if frame.type == ev.ASSISTANT_MESSAGE:
            calls.update(tool_calls(cast(Message, message)))
        else:
            for call_id in result_ids(cast(Message, message)):
                calls.pop(call_id, None)
    return OpenTurn(turn_id if isinstance(turn_id, str) else "", calls)
