"""Sending messages, interrupting, the queue, and paged history."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from xum.core.errors import XumError
from xum.engine.derive import frame_event
from xum.server.errors import ApiError, from_xum_error
from xum.server.schemas import Workspace
from xum.server.sessions import workspace_or_404
from xum.server.state import ServerState, get_state
from xum.store import registry
from xum.store.registry import WorkspaceRecord

router = APIRouter(prefix="/api/workspaces", tags=["turns"])

MAX_MESSAGE_CHARS = 512 * 1024
MAX_PAGE = 500


class SendMessage(BaseModel):
    text: str = Field(max_length=MAX_MESSAGE_CHARS)
    when: Literal["step", "turn"] = "step"


class Sent(BaseModel):
    # "command": a workspace command (`/model`, `/fork`, `/idle`) was carried out; nothing went
    # to a model in this workspace. (`/compact`, `/clear`, `/goal` run in the session.)
    disposition: Literal["started", "queued", "command"]
    when: Literal["step", "turn"] | None
    command: Literal["model", "fork", "idle"] | None = None
    # /model: this workspace as changed; /fork: the new fork.
    workspace: Workspace | None = None
    # /fork with a message: what became of it in the fork ("started"), or why it did not start.
    forkMessage: Literal["started"] | None = None
    forkMessageError: dict[str, str] | None = None
    # /idle: the project's idle compaction now (hours; null: off).
    idleHours: float | None = None


class Interrupted(BaseModel):
    interrupted: bool
    unsent: list[str]


class Cleared(BaseModel):
    cleared: int
    unsent: list[str]


class AnswerBody(BaseModel):
    questionId: str = Field(min_length=1, max_length=64)
    # Answers keyed by question text (multi-select: labels joined with ", "); null dismisses.
    answers: dict[str, str] | None


class Accepted(BaseModel):
    accepted: bool


class PendingQuestionBody(BaseModel):
    question: dict[str, Any] | None


class SlashCommand(BaseModel):
    name: str  # "/model", "/deploy", "/opus", "/+"
    description: str
    usage: str  # what follows the command
    kind: Literal["command", "skill", "override"]


class SlashCommands(BaseModel):
    commands: list[SlashCommand]


class HistoryPage(BaseModel):
    events: list[dict[str, Any]]
    firstSeq: int | None
    lastSeq: int | None
    hasMore: bool
    logLastSeq: int


# Unset fields stay out: a plain message answers {"disposition", "when"} only.
@router.post(
    "/{workspace_id}/messages",
    response_model=Sent,
    status_code=202,
    response_model_exclude_unset=True,
)
async def send_message(workspace_id: str, body: SendMessage, request: Request) -> Sent:
    state = get_state(request)
    record = workspace_or_404(workspace_id)
    if not body.text.strip():
        raise ApiError(422, "invalid_request", "text: the message is empty")
    command = _chat_command(body.text)
    if command is not None and not _is_session_command(command):
        return await _run_command(state, record, command)
    if record.archived_at is not None:
        raise ApiError(
            409, "conflict", "this workspace is archived", "unarchive it to continue the chat"
        )
    disposition, when = await state.sessions.send(record, body.text, body.when)
    return Sent(disposition=disposition, when=when)


def _is_session_command(command: Any) -> bool:
    """`/compact`, `/clear` and `/goal` run in the session, like a message."""
    from xum.context.slash import ClearCommand, CompactCommand, GoalCommand

    return isinstance(command, CompactCommand | ClearCommand | GoalCommand)


def _chat_command(text: str) -> Any:
    from xum.context.slash import SlashError, parse_command

    try:
        return parse_command(text)
    except SlashError as exc:
        raise ApiError(422, "usage_error", str(exc)) from None


async def _run_command(state: ServerState, record: WorkspaceRecord, command: Any) -> Sent:
    """`/model`, `/fork` and `/idle`, carried out here (the first two exactly as PATCH and POST
    .../fork do); nothing is sent to a model in this workspace (whether a turn runs in it or
    not)."""
    from xum.context.slash import IdleCommand, ModelCommand
    from xum.server.routes.workspaces import as_json, change_workspace, checked_model, fork

    if isinstance(command, IdleCommand):
        from xum.store.compaction_config import set_idle_hours

        try:
            set_idle_hours(record.project_path, command.hours)
        except XumError as exc:
            raise from_xum_error(exc) from None
        state.hub.workspaces_changed()
        return Sent(
            disposition="command",
            when=None,
            command="idle",
            idleHours=command.hours,
            workspace=as_json(state, record),
        )
    if isinstance(command, ModelCommand):
        if command.model is None:
            raise ApiError(
                422,
                "usage_error",
                "/model needs a model: an alias or provider:model (e.g. /model sonnet)",
                "GET /api/settings/models lists them",
            )
        changed = await change_workspace(state, record, {"model": checked_model(command.model)})
        return Sent(
            disposition="command", when=None, command="model", workspace=as_json(state, changed)
        )
    if command.name is not None and len(command.name) > 80:
        raise ApiError(422, "usage_error", "/fork: a workspace name is at most 80 characters")
    new = await fork(state, record.id, command.name, None)
    sent = Sent(
        disposition="command",
        when=None,
        command="fork",
        forkMessage=None,
        forkMessageError=None,
    )
    if command.message is not None:
        try:
            await state.sessions.send(new, command.message, "step")
            sent.forkMessage = "started"
        except (ApiError, XumError) as exc:
            # The fork exists either way (a turn that failed to start shows the error in it).
            error = exc if isinstance(exc, ApiError) else from_xum_error(exc)
            sent.forkMessageError = {"code": error.code, "message": error.message}
    latest = registry.get_workspace(new.id) or new
    sent.workspace = as_json(state, latest)
    return sent


class StartHereBody(BaseModel):
    seq: int = Field(ge=1, le=2**53)


class StartedHere(BaseModel):
    seq: int  # the new boundary


@router.post("/{workspace_id}/start-here", response_model=StartedHere)
async def start_here(workspace_id: str, body: StartHereBody, request: Request) -> StartedHere:
    """Make the final reply or plan at `seq` the whole context (docs/compaction.md)."""
    state = get_state(request)
    record = workspace_or_404(workspace_id)
    if record.archived_at is not None:
        raise ApiError(409, "conflict", "this workspace is archived", "unarchive it first")
    return StartedHere(seq=await state.sessions.start_here(record, body.seq))


@router.post("/{workspace_id}/interrupt", response_model=Interrupted)
async def interrupt(workspace_id: str, request: Request) -> Interrupted:
    state = get_state(request)
    workspace_or_404(workspace_id)
    stopped, unsent = await state.sessions.interrupt(workspace_id)
    return Interrupted(interrupted=stopped, unsent=unsent)


@router.delete("/{workspace_id}/queue", response_model=Cleared)
async def clear_queue(workspace_id: str, request: Request) -> Cleared:
    state = get_state(request)
    workspace_or_404(workspace_id)
    unsent = await state.sessions.clear_queue(workspace_id)
    return Cleared(cleared=len(unsent), unsent=unsent)


@router.post("/{workspace_id}/answers", response_model=Accepted)
async def answer_question(workspace_id: str, body: AnswerBody, request: Request) -> Accepted:
    state = get_state(request)
    workspace_or_404(workspace_id)
    if body.answers is not None and (
        len(body.answers) > 16 or any(len(k) + len(v) > 16_384 for k, v in body.answers.items())
    ):
        raise ApiError(422, "invalid_request", "answers: too many or too long")
    if not state.sessions.questions.answer(workspace_id, body.questionId, body.answers):
        raise ApiError(
            404,
            "not_found",
            "no such question is waiting for an answer",
            "it may have been answered already, dismissed, or the turn was stopped",
        )
    return Accepted(accepted=True)


class ApprovalBody(BaseModel):
    decision: Literal["once", "always", "deny"]
    reason: str | None = Field(default=None, max_length=2000)  # a denial's, for the model


class PendingApprovals(BaseModel):
    approvals: list[dict[str, Any]]  # `approval-request` events (docs/events.md)


@router.post("/{workspace_id}/approvals/{request_id}", response_model=Accepted)
async def answer_approval(
    workspace_id: str, request_id: str, body: ApprovalBody, request: Request
) -> Accepted:
    """Approve a waiting tool call once, always (its command prefix, in this project), or deny
    it (with a reason the model is told)."""
    state = get_state(request)
    workspace_or_404(workspace_id)
    approvals = state.sessions.approvals
    if not approvals.answer(workspace_id, request_id, body.decision, body.reason):
        raise ApiError(
            404,
            "not_found",
            "no such approval request is waiting",
            "it may have been answered already, or its turn was stopped",
        )
    return Accepted(accepted=True)


@router.get("/{workspace_id}/approvals", response_model=PendingApprovals)
async def pending_approvals(workspace_id: str, request: Request) -> PendingApprovals:
    state = get_state(request)
    workspace_or_404(workspace_id)
    waiting = state.sessions.approvals.requests_for(workspace_id)
    return PendingApprovals(approvals=[r.to_dict() for r in waiting])


@router.get("/{workspace_id}/question", response_model=PendingQuestionBody)
async def pending_question(workspace_id: str, request: Request) -> PendingQuestionBody:
    state = get_state(request)
    workspace_or_404(workspace_id)
    return PendingQuestionBody(question=state.sessions.questions.message_for(workspace_id))


@router.get("/{workspace_id}/slash", response_model=SlashCommands)
async def slash_commands(workspace_id: str) -> SlashCommands:
    """What `/` offers in this workspace: the chat commands, its user-invocable skills, model
    aliases and the thinking-only override."""
    from xum.workspaces.listing import slash_suggestions

    record = workspace_or_404(workspace_id)
    # An SSH workspace's skills are read from the project directory it was copied from.
    found = await slash_suggestions(record)
    return SlashCommands(
        commands=[
            SlashCommand(
                name=s.name,
                description=s.description,
                usage=s.argument_hint,
                kind=s.kind,
            )
            for s in found
        ]
    )


@router.get("/{workspace_id}/history", response_model=HistoryPage)
async def history(
    workspace_id: str,
    request: Request,
    afterSeq: int | None = Query(default=None, ge=0, le=2**53),
    beforeSeq: int | None = Query(default=None, ge=0, le=2**53),
    limit: int = Query(default=200, ge=1, le=MAX_PAGE),
) -> HistoryPage:
    state = get_state(request)
    workspace_or_404(workspace_id)
    if afterSeq is not None and beforeSeq is not None:
        raise ApiError(422, "invalid_request", "pass afterSeq or beforeSeq, not both")
    channel = await state.hub.channel(workspace_id)
    if not state.sessions.is_running(workspace_id):
        state.hub.poll_one(channel)
    log = channel.log
    events: list[dict[str, Any]] = []
    has_more = False
    if beforeSeq is None:
        for frame in log.frames_after(afterSeq or 0):
            event = frame_event(frame)
            if event is None:
                continue
            if len(events) == limit:
                has_more = True
                break
            events.append(event.to_dict())
    else:
        # Walk back from the end: the newest `limit` events before `beforeSeq`.
        frames = log.frames
        i = len(frames) - 1
        while i >= 0:
            seq = frames[i].seq
            if seq is not None and seq < beforeSeq:
                break
            i -= 1
        while i >= 0:
            event = frame_event(frames[i])
            i -= 1
            if event is None:
                continue
            if len(events) == limit:
                has_more = True
                break
            events.append(event.to_dict())
        events.reverse()
    return HistoryPage(
        events=events,
        firstSeq=events[0]["seq"] if events else None,
        lastSeq=events[-1]["seq"] if events else None,
        hasMore=has_more,
        logLastSeq=log.last_seq,
    )
