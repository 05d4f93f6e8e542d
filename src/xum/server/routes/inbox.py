"""The attention inbox over REST (docs/inbox.md, docs/api.md): the list, and answering an item
by its id without opening its workspace. Every answer goes through the host's own answer paths
(the same the per-workspace approval and question routes use), so an item answered here leaves
every client's inbox, and one answered there leaves this list."""

from __future__ import annotations

from typing import Any, Literal

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from xum.host.inbox import InboxError, InboxItem
from xum.server.errors import ApiError
from xum.server.state import ServerState, get_state

router = APIRouter(prefix="/api/inbox", tags=["inbox"])


class InboxList(BaseModel):
    items: list[dict[str, Any]]  # InboxItem (docs/api.md)


class ApproveBody(BaseModel):
    decision: Literal["once", "always", "deny"]
    reason: str | None = Field(default=None, max_length=2000)


class AnswerBody(BaseModel):
    # Keyed by question text (multi-select: labels joined with ", "); null dismisses.
    answers: dict[str, str] | None


class Accepted(BaseModel):
    accepted: bool


@router.get("", response_model=InboxList)
async def list_inbox(request: Request) -> InboxList:
    state = get_state(request)
    return InboxList(items=[item.to_json() for item in state.hosts.inbox.items()])


@router.post("/{item_id}/approve", response_model=Accepted)
async def approve(item_id: str, body: ApproveBody, request: Request) -> Accepted:
    state = get_state(request)
    _item(state, item_id)
    try:
        done = state.hosts.inbox.approve(item_id, body.decision, body.reason)
    except InboxError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from None
    return _accepted(done)


@router.post("/{item_id}/answer", response_model=Accepted)
async def answer(item_id: str, body: AnswerBody, request: Request) -> Accepted:
    state = get_state(request)
    _item(state, item_id)
    if body.answers is not None and (
        len(body.answers) > 16 or any(len(k) + len(v) > 16_384 for k, v in body.answers.items())
    ):
        raise ApiError(422, "invalid_request", "answers: too many or too long")
    try:
        done = state.hosts.inbox.answer(item_id, body.answers)
    except InboxError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from None
    return _accepted(done)


@router.post("/{item_id}/dismiss", response_model=Accepted)
async def dismiss(item_id: str, request: Request) -> Accepted:
    state = get_state(request)
    _item(state, item_id)
    try:
        done = state.hosts.inbox.dismiss(item_id)
    except InboxError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from None
    return _accepted(done)


@router.post("/{item_id}/read", response_model=Accepted)
async def mark_read(item_id: str, request: Request) -> Accepted:
    """Mark the item's workspace read up to the item (as `POST /api/workspaces/{id}/read`
    does): the notices it covers leave, and the sidebar's unread dot goes with them."""
    state = get_state(request)
    item = _item(state, item_id)
    ws = item.workspace_id
    read = state.read_marks.mark(ws, item.seq)
    state.hosts.inbox.read(ws, read)
    state.hub.status_changed(ws)
    return Accepted(accepted=True)


def _item(state: ServerState, item_id: str) -> InboxItem:
    item = state.hosts.inbox.get(item_id)
    if item is None:
        raise _gone()
    return item


def _accepted(done: bool) -> Accepted:
    if not done:
        raise _gone()
    return Accepted(accepted=True)


def _gone() -> ApiError:
    return ApiError(
        404,
        "not_found",
        "no such item is waiting in the inbox",
        "it may have been answered already (here or in another client); GET /api/inbox lists "
        "what still waits",
    )
