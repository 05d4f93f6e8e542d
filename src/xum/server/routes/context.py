"""How full a workspace's context is, and the per-model auto-compaction threshold
(docs/compaction.md): what the Costs tab's Context bar and the composer's warning show."""

from __future__ import annotations

import asyncio

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from xum.engine.contextmeter import ContextMeter, known_window
from xum.llm import catalog
from xum.server.errors import ApiError
from xum.server.hosting import workspace_or_404
from xum.server.state import get_state
from xum.store import compaction_config as cc
from xum.store.registry import WorkspaceRecord

router = APIRouter(prefix="/api", tags=["context"])


class ContextUsage(BaseModel):
    tokens: int | None  # what the next request would carry; null before any message
    estimated: bool  # no reply of this context has reported its usage yet
    model: str | None  # the workspace's model (its window and threshold apply)
    window: int | None  # the model's known context window; null: not known
    threshold: int  # percent of the window; 100 is off
    autoCompact: bool  # usage-based compaction runs for this model
    idleHours: float | None  # the project's idle compaction (null: off)


class ThresholdBody(BaseModel):
    model: str = Field(min_length=1, max_length=300)
    threshold: float = Field(ge=1, le=100)


class Threshold(BaseModel):
    model: str
    threshold: int  # as saved and applied (enabled values are capped at 90)


def _model_of(record: WorkspaceRecord) -> str | None:
    """The workspace's model string, or the default model (None when no provider is set)."""
    if record.model:
        return record.model
    try:
        from xum.engine.route import resolve_route

        return resolve_route(None).model_string
    except Exception:
        return None


@router.get("/workspaces/{workspace_id}/context", response_model=ContextUsage)
async def context_usage(workspace_id: str, request: Request) -> ContextUsage:
    state = get_state(request)
    record = workspace_or_404(workspace_id)
    channel = await state.hub.channel(workspace_id)
    state.hub.poll_one(channel)  # the hub's view lags during a turn (see the history route)
    meter = ContextMeter()
    tokens = await asyncio.to_thread(meter.update, channel.log)
    model = await asyncio.to_thread(_model_of, record)
    window = None
    threshold = cc.DEFAULT_THRESHOLD
    if model is not None:
        provider, model_id = catalog.resolve_model_string(model)
        window = known_window(provider, model_id)
        threshold = cc.threshold_for(f"{provider}:{model_id}")
    return ContextUsage(
        tokens=tokens if meter.messages else None,
        estimated=meter.estimated,
        model=model,
        window=window,
        threshold=threshold,
        autoCompact=window is not None and threshold < cc.THRESHOLD_OFF,
        idleHours=cc.idle_hours(record.project_path),
    )


@router.put("/settings/auto-compaction", response_model=Threshold)
async def set_threshold(body: ThresholdBody) -> Threshold:
    """Save `model`'s threshold (100: off; 91-99 are saved as 90)."""
    try:
        provider, model_id = catalog.resolve_model_string(body.model)
    except Exception as exc:
        raise ApiError(422, "invalid_request", f"model: {exc}") from None
    model = f"{provider}:{model_id}"
    applied = await asyncio.to_thread(cc.set_threshold, model, body.threshold)
    return Threshold(model=model, threshold=applied)
