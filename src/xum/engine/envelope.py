"""The turn envelope: what every turn of a session is wrapped in, whatever it does inside.

A user's turn, a goal continuation and a compaction turn differ in their body (steps with tools,
or one summarization request) and share everything around it, which lives here once:

- **the running flag** (`running`, `current`): one turn at a time; the turn's model, client and
  thinking level are fixed when it opens (`Turn`), so a per-turn override (`TurnOverride`, a
  one-shot `/alias+level` message) is a value the turn carries, never a change to the session;
- **interrupts**: `interrupt()` cancels what runs under `cancellable` (the stream, the tool
  calls) and `check_interrupt` honours one that arrived in between;
- **the writer lock**: taken when the turn opens, released when it closes (`write_lock` takes
  it the same way for a write that is not a turn: a goal frame, `/clear`, Start Here);
- **the error mapping** (`guarded`): an interrupt ends the turn `interrupted`, the budget
  `budget`, a provider error `error` (with an error event); a cancellation from outside closes
  the turn at once and goes on up; anything unexpected ends it as an internal error;
- **the durable close**: the step in flight, the turn's boundary frames (a compaction's summary)
  and the `turn_end`, in one batch, so a crash leaves all of them or none.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Coroutine
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal, TypeVar

from xum.engine import events as E
from xum.engine.commits import INTERRUPTED_TOOL_OUTPUT, Commits
from xum.engine.events import EventSink
from xum.engine.ledger import BudgetExceeded
from xum.engine.recorder import FrameSpec, Recorder
from xum.engine.records import Interrupted, TurnResult
from xum.engine.route import ModelRoute
from xum.llm.client import LLMClient, open_client
from xum.llm.errors import LLMError
from xum.llm.types import ThinkingLevel

if TYPE_CHECKING:
    from xum.engine.userinput import TurnOverride

T = TypeVar("T")

# "agent": a turn the user's message (or a queued one) started; "continuation": a goal's
# synthetic message; "compaction": a summarization turn.
TurnKind = Literal["agent", "continuation", "compaction"]


@dataclass(frozen=True, slots=True)
class ModelChoice:
    """The model a session's turns use: the route, the client that speaks to its endpoint, and
    the thinking level."""

    route: ModelRoute
    client: LLMClient
    thinking: ThinkingLevel


@dataclass(frozen=True, slots=True)
class ModelChange:
    """A change of model, thinking level or agent for the turns to come (`configure`); None
    keeps what is there."""

    route: ModelRoute | None
    client: LLMClient | None
    thinking: ThinkingLevel | None
    agent: str | None


@dataclass(slots=True)
class Turn:
    """The turn that runs now: its result (filled in as it goes) and the model it runs with."""

    result: TurnResult
    kind: TurnKind
    model: ModelChoice
    # Frames the durable close appends before the turn_end, in the same batch.
    boundary: list[FrameSpec] = field(default_factory=list)
    # The models that refused in this turn, in order (the first is the model the turn started
    # with): a refusal moves `model` to the next one of its chain (`xum.engine.fallback`).
    refused: list[str] = field(default_factory=list)
    # Clients the turn opened for another endpoint (a fallback's), closed with the turn.
    clients: list[LLMClient] = field(default_factory=list)


class TurnEnvelope:
    def __init__(self, recorder: Recorder, commits: Commits, emit: EventSink) -> None:
        self.recorder = recorder
        self.commits = commits
        self.emit = emit
        self.current: Turn | None = None
        self._interrupt_requested = False
        self._task: asyncio.Task[Any] | None = None

    @property
    def running(self) -> bool:
        return self.current is not None

    # Interrupts ------------------------------------------------------------------------------

    def interrupt(self) -> None:
        """Stop the running turn (no-op between turns): what runs under `cancellable` is
        cancelled, and the next `check_interrupt` or `cancellable` raises Interrupted."""
        if self.current is None:
            return
        self._interrupt_requested = True
        if self._task is not None and not self._task.done():
            self._task.cancel()

    def check_interrupt(self) -> None:
        if self._interrupt_requested:
            raise Interrupted()

    async def cancellable(self, coro: Coroutine[Any, Any, T]) -> T:
        """Run `coro` so that `interrupt()` can cancel it. An interrupt that arrived while
        nothing was cancellable (a reply being committed, a result being written) is honoured
        here, before the stream or the tools start."""
        if self._interrupt_requested:
            coro.close()
            raise Interrupted()
        task: asyncio.Task[T] = asyncio.ensure_future(coro)
        self._task = task
        try:
            return await task
        except asyncio.CancelledError:
            if self._interrupt_requested:
                raise Interrupted() from None
            raise
        finally:
            self._task = None

    # Opening and closing ---------------------------------------------------------------------

    @asynccontextmanager
    async def open(
        self,
        result: TurnResult,
        kind: TurnKind,
        model: ModelChoice,
        override: TurnOverride | None = None,
    ) -> AsyncIterator[Turn]:
        """Mark a turn running with `model` (or `override`'s route and thinking for this turn
        only; a client for another endpoint is opened and closed with the turn) and take the
        writer lock. Whatever the body raises goes up; it has written nothing durable yet, or
        it runs under `guarded`."""
        own_client: LLMClient | None = None
        if override is not None:
            client = model.client
            if override.route.endpoint != model.route.endpoint:
                client = own_client = open_client(override.route.endpoint)
            model = ModelChoice(override.route, client, override.thinking)
        turn = Turn(result, kind, model)
        self.current = turn
        self._interrupt_requested = False
        self.commits.steps.clear()
        try:
            # Off the loop: other sessions (the server's, a parent's) share it.
            await self.recorder.begin_turn(result.turn_id)
            try:
                yield turn
            finally:
                await self.recorder.end_turn_off_loop()
        finally:
            self.current = None
            self._task = None
            for opened in [*turn.clients, *([own_client] if own_client is not None else [])]:
                await opened.aclose()

    @asynccontextmanager
    async def guarded(self, turn: Turn) -> AsyncIterator[None]:
        """The body of an open turn, after its `turn_start`: however it ends, the turn ends
        durably (see the module docstring). Only a cancellation from outside goes on up."""
        result = turn.result
        try:
            yield
        except Interrupted:
            result.reason = "interrupted"
        except BudgetExceeded:
            result.reason = "budget"
        except LLMError as exc:
            result.reason = "error"
            result.error = exc.to_dict()
            self.emit(E.ErrorEvent.from_dict(result.error))
        except asyncio.CancelledError:
            # Cancelled from outside (not by interrupt()): still close the turn durably.
            self.commits.close_turn_now(result, "interrupted", INTERRUPTED_TOOL_OUTPUT)
            raise
        except Exception as exc:
            # A bug (in xum, a middleware, an event sink): the turn ends as an error, and the log
            # stays valid for the next turn. If even that cannot be written, the original error
            # goes up.
            self.commits.fail_turn(result, exc)
            return
        await self.commits.end_turn(result, result.reason, turn.boundary)

    @asynccontextmanager
    async def write_lock(self, purpose: str) -> AsyncIterator[None]:
        """The writer lock for a write that is not a turn (a goal frame, `/clear`, Start
        Here); taken again re-entrantly inside a running turn or a session hold."""
        await self.recorder.begin_turn(purpose)
        try:
            yield
        finally:
            self.recorder.end_turn()
