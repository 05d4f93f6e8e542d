"""What the two kinds of ACP session have in common.

`xum.acp.session.BridgeSession` runs its workspace in this process (over `xum.host.Hosts`);
`xum.acp.remote_session.RemoteBridgeSession` has a running `xum server` run it (over
`RemoteHosts`). Both speak the same ACP surface to the editor, so the parts that do not depend on
where the workspace runs live here: the JSON-RPC errors, the update pump and translator, the
editor's questions and approvals, the prompt's bookkeeping (one at a time, `cancelled` after a
cancel), the stop reason of a finished turn, the title from the first prompt, the config options
and the close. A subclass says how a prompt is sent, interrupted and stored, and where its
settings and slash commands come from.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from abc import ABC, abstractmethod
from collections.abc import Coroutine, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from acp import RequestError
from acp.helpers import update_available_commands
from acp.schema import (
    AvailableCommand,
    AvailableCommandInput,
    ConfigOptionUpdate,
    SessionInfoUpdate,
    UnstructuredCommandInput,
)

from xum.acp import options as opts
from xum.acp.permissions import EditorApprover
from xum.acp.pump import UpdatePump
from xum.acp.questions import EditorQuestions
from xum.acp.updates import SessionUpdate, UpdateTranslator, note
from xum.core.errors import UsageError, XumError
from xum.core.images import ImageUpload

if TYPE_CHECKING:
    from acp.interfaces import Client

    from xum.engine import events as E
    from xum.host.pending import PendingQuestion
    from xum.store.registry import WorkspaceRecord

log = logging.getLogger("xum.acp")

StopReason = Literal["end_turn", "max_tokens", "max_turn_requests", "refusal", "cancelled"]
CLOSE_WAIT_S = 10.0  # how long closing waits for an interrupted turn to end durably


def invalid(message: str) -> RequestError:
    """A request the bridge cannot carry out as asked: the message is what the editor shows."""
    return RequestError(-32602, message, {"message": message})


def request_error(exc: XumError) -> RequestError:
    """A xum error as a JSON-RPC error the editor shows: the message, then what to do. An error
    a server reported comes back as a plain `XumError` with its code, hence the code check."""
    text = f"{exc.message} (hint: {exc.hint})" if exc.hint else exc.message
    code = -32602 if isinstance(exc, UsageError) or exc.code == "usage_error" else -32603
    return RequestError(code, text, exc.to_dict())


def command_entry(name: str, description: str, hint: str | None) -> AvailableCommand:
    """One slash command as the editor lists it (`name` without its `/`)."""
    return AvailableCommand(
        name=name,
        description=description,
        input=AvailableCommandInput(UnstructuredCommandInput(hint=hint)) if hint else None,
    )


class SessionBase(ABC):
    """One ACP session on one xum workspace, whatever hosts it (see the module docstring)."""

    def __init__(self, client: Client, record: WorkspaceRecord) -> None:
        self.client = client
        self.id = record.id
        self.record = record
        self.translator = UpdateTranslator(record.path)
        self.pump = UpdatePump(self._send)
        self.questions = EditorQuestions(
            client, self.id, self.pump.drain, lambda: self.translator.question_call
        )
        self.approver = EditorApprover(client, self.id, self.pump.drain)
        self._running = False
        self._cancel_requested = False
        self._asking: set[asyncio.Task[None]] = set()
        self._finished = asyncio.Event()
        self._finished.set()

    # What differs --------------------------------------------------------------------------

    @property
    @abstractmethod
    def mode(self) -> str: ...

    @property
    @abstractmethod
    def model(self) -> str: ...

    @property
    @abstractmethod
    def thinking(self) -> str: ...

    @abstractmethod
    async def available_commands(self) -> list[AvailableCommand]: ...

    @abstractmethod
    async def set_mode(self, mode: str) -> None: ...

    @abstractmethod
    async def set_model(self, model: str) -> str: ...

    @abstractmethod
    async def set_thinking(self, level: str) -> None: ...

    @abstractmethod
    async def _run_prompt(self, text: str, images: Sequence[ImageUpload] = ()) -> StopReason:
        """Send the prompt (or carry out its command) and wait until the workspace is idle."""

    @abstractmethod
    async def _answer_question(
        self, pending: PendingQuestion, answers: Mapping[str, str] | None
    ) -> None: ...

    @abstractmethod
    async def _store_title(self, title: str) -> WorkspaceRecord: ...

    @abstractmethod
    def cancel(self) -> None: ...

    @abstractmethod
    async def _release(self) -> None:
        """The last step of `close`: what holds the workspace for this session lets go."""

    def _raise_failure(self) -> None:
        """A failure the host reported outside the turn's events (in-process only)."""
        return None

    def _prompt_started(self) -> None:
        """State a subclass resets when a prompt starts."""
        return None

    # Plumbing ----------------------------------------------------------------------------

    async def _send(self, update: SessionUpdate) -> None:
        await self.client.session_update(session_id=self.id, update=update)

    def push(self, *updates: SessionUpdate) -> None:
        self.pump.push(updates)

    def on_question(self, pending: PendingQuestion) -> None:
        self._spawn(self._ask(pending))

    async def _ask(self, pending: PendingQuestion) -> None:
        answers = await self.questions(pending.questions)
        await self._answer_question(pending, answers)

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.ensure_future(coro)
        self._asking.add(task)
        task.add_done_callback(self._asking.discard)

    # Settings ----------------------------------------------------------------------------

    async def config_options(self) -> list[opts.ConfigOption]:
        model = self.model
        models = await asyncio.to_thread(opts.model_choices, model)
        return opts.config_options(self.mode, model, self.thinking, models)

    async def announce_commands(self) -> None:
        self.push(update_available_commands(await self.available_commands()))

    @staticmethod
    def _check_mode(mode: str) -> None:
        if mode not in opts.MODE_IDS:
            raise invalid(f"unknown mode '{mode}'; the modes are {', '.join(opts.MODE_IDS)}")

    # Prompts -----------------------------------------------------------------------------

    async def prompt(self, text: str, images: Sequence[ImageUpload] = ()) -> StopReason:
        if self._running:
            raise invalid("a prompt is already running in this session; cancel it first")
        self._running = True
        self._cancel_requested = False
        self._prompt_started()
        self._finished.clear()
        try:
            return await self._run_prompt(text, images)
        finally:
            self._running = False
            self._finished.set()

    def _stop_reason_after(self, end: E.TurnEnd | None) -> StopReason:
        """How the prompt answers, from the last turn it ran."""
        if self._cancel_requested or (end is not None and end.reason == "interrupted"):
            return "cancelled"
        self._raise_failure()
        if end is not None and end.reason == "error":
            error = end.error or {}
            message = str(error.get("message") or "the turn failed")
            if error.get("hint"):
                message += f" (hint: {error['hint']})"
            raise RequestError(-32603, message, error)
        if end is not None and end.reason == "max_steps":
            return "max_turn_requests"
        if self.translator.last_finish in ("refusal", "content_filter"):
            return "refusal"
        if self.translator.last_finish == "length":
            return "max_tokens"
        return "end_turn"

    async def _model_switched(self, model: str) -> None:
        """`/model` without a turn: say so, and show the new value in the editor's picker."""
        self.push(
            note(f"the model is now {model}, from the next message on"),
            ConfigOptionUpdate(
                session_update="config_option_update",
                config_options=await self.config_options(),
            ),
        )

    def _idle_set(self, hours: float | None) -> None:
        """`/idle`: the project's idle compaction as it is now."""
        self.push(
            note("idle compaction is off for this project")
            if hours is None
            else note(f"idle compaction after {hours:g} idle hours in this project")
        )

    async def _title_from(self, text: str) -> None:
        """A workspace made in the editor is titled by its first prompt."""
        if self.record.title:
            return
        title = " ".join(text.split())[:80]
        if not title:
            return
        self.record = await self._store_title(title)
        self.push(SessionInfoUpdate(session_update="session_info_update", title=title))

    # Closing -----------------------------------------------------------------------------

    async def close(self) -> None:
        """The editor went away: stop a running turn (it ends durably, as interrupted) and
        release everything."""
        self.cancel()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._finished.wait(), CLOSE_WAIT_S)
        for task in list(self._asking):
            task.cancel()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(self.pump.close(), 2.0)
        await self._release()
