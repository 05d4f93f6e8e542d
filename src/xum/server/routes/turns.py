"""Sending messages, interrupting, the queue, and paged history."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from xum.core.errors import UsageError, XumError
from xum.core.images import MAX_IMAGES_PER_MESSAGE, ImageUpload
from xum.engine.derive import frame_event
from xum.server.errors import ApiError, from_xum_error
from xum.server.hosting import workspace_or_404
from xum.server.hostlink import question_message
from xum.server.schemas import Workspace
from xum.server.state import ServerState, get_state
from xum.store.blobs import SessionBlobs

if TYPE_CHECKING:
    from xum.host.commands import CommandResult

router = APIRouter(prefix="/api/workspaces", tags=["turns"])

MAX_MESSAGE_CHARS = 512 * 1024
MAX_PAGE = 500


class ImageRef(BaseModel):
    """An image uploaded first (`POST .../images`), named by its hash."""

    sha256: str = Field(min_length=64, max_length=64, pattern="^[0-9a-f]{64}$")
    name: str | None = Field(None, max_length=255)


class SendMessage(BaseModel):
    text: str = Field(max_length=MAX_MESSAGE_CHARS)
    when: Literal["step", "turn"] = "step"
    images: list[ImageRef] = Field(default_factory=list, max_length=MAX_IMAGES_PER_MESSAGE)


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
    from xum.host import commands

    state = get_state(request)
    record = workspace_or_404(workspace_id)
    if not body.text.strip() and not body.images:
        raise ApiError(422, "invalid_request", "text: the message is empty")
    images = _uploaded(record.id, body.images)
    try:
        command = commands.parse(body.text, "server")
        if command is not None and images:
            raise UsageError(
                "images cannot go with a chat command", hint="send them in a plain message"
            )
        if commands.is_workspace_command(command):
            return _sent(state, await commands.apply(state.hosts, record, command))
        if record.archived_at is not None:
            raise ApiError(
                409, "conflict", "this workspace is archived", "unarchive it to continue the chat"
            )
        disposition = await state.hosts.send(record, body.text, body.when, images)
    except XumError as exc:
        raise from_xum_error(exc) from None
    return Sent(disposition=disposition, when=body.when if disposition == "queued" else None)


def _uploaded(workspace_id: str, refs: list[ImageRef]) -> list[ImageUpload]:
    """The bytes of images uploaded to this workspace; 422 naming one that is not there."""
    blobs = SessionBlobs(workspace_id)
    out: list[ImageUpload] = []
    for ref in refs:
        data = blobs.read(ref.sha256)
        if data is None:
            raise ApiError(
                422,
                "invalid_request",
                f"images: no uploaded image {ref.sha256[:12]} in this workspace",
                "upload it first with POST /api/workspaces/{id}/images",
            )
        out.append(ImageUpload(data, ref.name))
    return out


def _sent(state: ServerState, result: CommandResult) -> Sent:
    """A workspace command's result (`/model`, `/fork`, `/idle`): nothing went to a model in
    this workspace."""
    from xum.server.routes.workspaces import as_json

    sent = Sent(disposition="command", when=None, command=result.command)
    if result.command == "idle":
        sent.idleHours = result.idle_hours
    if result.command == "fork":
        sent.forkMessage = result.fork_message
        error = result.fork_message_error
        api = from_xum_error(error) if error is not None else None
        sent.forkMessageError = {"code": api.code, "message": api.message} if api else None
    sent.workspace = as_json(state, result.record)
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
    try:
        return StartedHere(seq=await state.hosts.start_here(record, body.seq))
    except XumError as exc:
        raise from_xum_error(exc) from None


@router.post("/{workspace_id}/interrupt", response_model=Interrupted)
async def interrupt(workspace_id: str, request: Request) -> Interrupted:
    state = get_state(request)
    workspace_or_404(workspace_id)
    stopped, unsent = await state.hosts.interrupt(workspace_id)
    return Interrupted(interrupted=stopped, unsent=unsent)


@router.delete("/{workspace_id}/queue", response_model=Cleared)
async def clear_queue(workspace_id: str, request: Request) -> Cleared:
    state = get_state(request)
    workspace_or_404(workspace_id)
    unsent = await state.hosts.clear_queue(workspace_id)
    return Cleared(cleared=len(unsent), unsent=unsent)


@router.post("/{workspace_id}/answers", response_model=Accepted)
async def answer_question(workspace_id: str, body: AnswerBody, request: Request) -> Accepted:
    state = get_state(request)
    workspace_or_404(workspace_id)
    if body.answers is not None and (
        len(body.answers) > 16 or any(len(k) + len(v) > 16_384 for k, v in body.answers.items())
    ):
        raise ApiError(422, "invalid_request", "answers: too many or too long")
    if not state.hosts.questions.answer(workspace_id, body.questionId, body.answers):
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
    approvals = state.hosts.approvals
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
    waiting = state.hosts.approvals.requests_for(workspace_id)
    return PendingApprovals(approvals=[r.to_dict() for r in waiting])


@router.get("/{workspace_id}/question", response_model=PendingQuestionBody)
async def pending_question(workspace_id: str, request: Request) -> PendingQuestionBody:
    state = get_state(request)
    workspace_or_404(workspace_id)
    waiting = state.hosts.questions.pending(workspace_id)
    return PendingQuestionBody(question=question_message(waiting) if waiting else None)


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
    # Always brought up to date: during a turn the hub fills its subscribers' gaps from the
    # session's own log in memory, so its view of the log lags until someone reads it.
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
