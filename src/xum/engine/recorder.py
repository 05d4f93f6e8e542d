"""The recorder: the one way the engine writes to a session log.

Each append is durable (write, fdatasync, manifest) and is followed by the events derived from
the frames just written (`xum.engine.derive.frame_event`), so what a live client sees is exactly
what a replay of the log shows. The recorder also owns the log's writer lock: the turn envelope
(`xum.engine.envelope`) takes it (`begin_turn`) and lets it go (`end_turn`); a front-end that runs one session for the whole life
of a process (`xum run`) may keep it from the first turn to `close` (`hold_for_session`).
Nobody else takes or releases that lock on the engine's log.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, TypeVar

from xum.core.messages import Message, text_message
from xum.engine.derive import frame_event
from xum.engine.events import EventSink
from xum.engine.extensions import ToolCall
from xum.engine.records import TurnReason, TurnResult
from xum.store import frame_types as ev
from xum.store.frames import Frame
from xum.store.sessionlog import SessionLog
from xum.store.turns import open_turn

if TYPE_CHECKING:
    from xum.core.images import ImagePart
    from xum.engine.userinput import PreparedMessage

FrameSpec = ev.FrameSpec

_LOG_EXECUTOR: ThreadPoolExecutor | None = None


def _log_executor() -> ThreadPoolExecutor:
    """Threads for durable log appends, shared by every session of the process (fsync releases
    the GIL, and parallel syncs let the filesystem commit them together)."""
    global _LOG_EXECUTOR
    if _LOG_EXECUTOR is None:
        _LOG_EXECUTOR = ThreadPoolExecutor(max_workers=8, thread_name_prefix="xum-log")
    return _LOG_EXECUTOR


_T = TypeVar("_T")


async def _on_log_thread(fn: Callable[..., _T], *args: Any) -> _T:
    """`fn(*args)` on a log thread. A cancellation takes effect once it is done: a log write or
    a lock release is never abandoned half-way."""
    future = asyncio.get_running_loop().run_in_executor(_log_executor(), fn, *args)
    try:
        return await asyncio.shield(future)
    except asyncio.CancelledError:
        while not future.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.shield(future)
        raise


class Recorder:
    def __init__(self, log: SessionLog, emit: EventSink) -> None:
        self.log = log
        self.emit = emit
        self._session_hold = False

    # Appending -----------------------------------------------------------------------------

    async def append(self, specs: Sequence[FrameSpec]) -> list[Frame]:
        """Append durably on a worker thread, so one session's disk syncs do not stall every
        other session sharing the event loop, then emit the frames' events. A cancellation
        takes effect once the write is done: it cannot be abandoned half-way, and the log has
        one writer at a time."""
        frames = await _on_log_thread(self.log.append_many, specs)
        self.publish(frames)
        return frames

    def append_now(self, specs: Sequence[FrameSpec], *, guarded: bool = False) -> list[Frame]:
        """Append on this thread, without awaiting anything (a turn that broke off must still
        close). `guarded`: a failing event sink cannot undo the write, so its errors are
        swallowed."""
        frames = self.log.append_many(specs)
        if guarded:
            with contextlib.suppress(Exception):
                self.publish(frames)
        else:
            self.publish(frames)
        return frames

    def publish(self, frames: Sequence[Frame]) -> None:
        for frame in frames:
            event = frame_event(frame)
            if event is not None:
                self.emit(event)

    # The writer lock -----------------------------------------------------------------------

    async def begin_turn(self, turn_id: str) -> None:
        """Take the writer lock for a turn, off the loop (taking it reads what other processes
        appended and heals the log)."""
        # The holder is named by what opened the log ("xum run", "xum tui", ...): that is what
        # another front-end tells its user is using the session.
        await self.log.begin_write_off_loop(self.log.purpose or f"turn {turn_id}")

    def end_turn(self) -> None:
        self.log.end_write()

    async def end_turn_off_loop(self) -> None:
        """`end_turn` on a log thread: letting go of the lock truncates the holder file, a
        metadata write that can wait on the filesystem's journal, and a server's event loop
        is shared by every session it runs. Done (even if cancelled meanwhile) on return."""
        await _on_log_thread(self.log.end_write)

    async def hold_for_session(self, purpose: str) -> None:
        """Keep the lock from now until `close` (turns take it again, re-entrantly)."""
        if not self._session_hold:
            await self.log.begin_write_off_loop(purpose)
            self._session_hold = True

    def close(self) -> None:
        """Let go of a session hold; the log object stays the caller's to close."""
        if self._session_hold:
            self._session_hold = False
            self.log.end_write()

    # Calls without a result ----------------------------------------------------------------

    def unanswered(self, calls: Sequence[ToolCall] | None = None) -> list[ToolCall]:
        """The calls of the open turn that have no result in the log yet (of `calls`, when
        given; else every one the turn made)."""
        turn = open_turn(self.log.frames)
        missing = turn.calls if turn is not None else {}
        if calls is None:
            return [ToolCall(call_id, name, "") for call_id, name in missing.items()]
        return [call for call in calls if call.id in missing]


# Frame builders ------------------------------------------------------------------------------


def result_frame(
    call: ToolCall,
    output: str,
    *,
    is_error: bool,
    meta: dict[str, Any],
    seconds: float,
    images: Sequence[ImagePart] = (),
) -> FrameSpec:
    message: Message = ev.tool_result_message(call.id, call.name, output, is_error=is_error)
    if images:
        part = message["content"][0]
        assert part["type"] == "tool_result"
        part["images"] = list(images)  # references; the bytes are in the session's blobs
    return ev.spec(
        ev.TOOL_RESULT, {"message": message, "meta": meta, "duration_s": round(seconds, 4)}
    )


def closing_frames(calls: Sequence[ToolCall], output: str) -> list[FrameSpec]:
    """An error result (`output`: why it never ran) for each of `calls`."""
    return [result_frame(c, output, is_error=True, meta={}, seconds=0.0) for c in calls]


def turn_end_frame(result: TurnResult, reason: TurnReason) -> FrameSpec:
    data: ev.TurnEndData = {
        "turn_id": result.turn_id,
        "reason": reason,
        "usage": result.usage.to_dict(),
        "cost_usd": result.cost_usd,
        "steps": result.steps,
    }
    if result.error:
        data["error"] = result.error
    return ev.spec(ev.TURN_END, data)


def user_frame(
    text: str,
    prepared: PreparedMessage | None,
    synthetic: ev.SyntheticNote | None,
    images: Sequence[ImagePart] = (),
) -> FrameSpec:
    """The frame that opens a turn: the user's message, or xum's own (`synthetic`). `images`
    follow the text as references to the session's stored images, never their bytes."""
    message = text_message("user", text)
    message["content"].extend(images)
    if synthetic is not None:
        note: ev.SyntheticMessageData = {"message": message}
        if "kind" in synthetic:
            note["kind"] = synthetic["kind"]
        if "goal_id" in synthetic:
            note["goal_id"] = synthetic["goal_id"]
        return ev.spec(ev.SYNTHETIC_MESSAGE, note)
    user: ev.UserMessageData = {"message": message}
    if prepared is not None and prepared.slash is not None:
        # A slash command's message keeps what was typed and what the command was.
        user["typed"], user["slash"] = prepared.typed, prepared.slash
    return ev.spec(ev.USER_MESSAGE, user)
