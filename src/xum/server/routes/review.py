"""Per-workspace git status and diff, and costs."""

from __future__ import annotations

from typing import Any

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel

from xum.runtime.ssh import SshError
from xum.server.errors import ApiError
from xum.server.hosting import workspace_or_404
from xum.server.state import get_state
from xum.store import frame_types as ev
from xum.store.registry import WorkspaceRecord
from xum.workspaces import gitinfo
from xum.workspaces.review import parent_branch as _parent_branch
from xum.workspaces.review import workspace_runtime as _runtime_of

router = APIRouter(prefix="/api/workspaces", tags=["review"])

MAX_TURNS = 500


class BaseRef(BaseModel):
    ref: str
    sha: str


class StatusEntry(BaseModel):
    path: str
    origPath: str | None = None
    index: str
    worktree: str


class GitStatus(BaseModel):
    isGit: bool
    branch: str | None
    base: BaseRef | None
    ahead: int
    behind: int
    entries: list[StatusEntry]
    truncated: bool


class DiffFile(BaseModel):
    path: str
    additions: int
    deletions: int
    binary: bool
    untracked: bool


class GitDiff(BaseModel):
    isGit: bool
    base: BaseRef | None
    files: list[DiffFile]
    diff: str
    truncated: bool


class Tokens(BaseModel):
    inputTokens: int
    outputTokens: int
    cacheReadTokens: int
    cacheWriteTokens: int
    reasoningTokens: int


class TurnCost(BaseModel):
    turnId: str | None
    startSeq: int | None
    endSeq: int | None
    reason: str | None
    model: str | None
    usage: Tokens
    costUsd: float | None
    steps: int


class LastRequest(BaseModel):
    inputTokens: int  # the prompt of the latest reply, cached part included
    contextWindow: int | None  # of its model, when known


class ModelCost(BaseModel):
    model: str  # `provider:model-id`: the model that wrote the replies
    usage: Tokens
    costUsd: float | None  # None: one of its replies had no known price


class Costs(BaseModel):
    usage: Tokens
    cacheHitRatio: float | None
    costUsd: float | None
    turns: list[TurnCost]
    lastRequest: LastRequest | None
    byModel: list[ModelCost]  # what each model's replies cost (a refused one included)


def _unreachable(record: WorkspaceRecord, exc: SshError) -> ApiError:
    return ApiError(
        400,
        "ssh_error",
        f"cannot run git on the SSH host {record.host}: {exc}",
        hint=f"check that `ssh {record.host} true` works without a prompt",
    )


@router.get("/{workspace_id}/git/status", response_model=GitStatus)
async def git_status(workspace_id: str) -> GitStatus:
    record = workspace_or_404(workspace_id)
    try:
        async with _runtime_of(record) as runtime:
            st = await gitinfo.status(runtime)
            if not st.is_git:
                return GitStatus(
                    isGit=False,
                    branch=None,
                    base=None,
                    ahead=0,
                    behind=0,
                    entries=[],
                    truncated=False,
                )
            base = await gitinfo.find_base(runtime, _parent_branch(record))
            ahead, behind = await gitinfo.ahead_behind(runtime, base) if base else (0, 0)
    except SshError as exc:
        raise _unreachable(record, exc) from None
    return GitStatus(
        isGit=True,
        branch=st.branch,
        base=BaseRef(ref=base.ref, sha=base.sha) if base else None,
        ahead=ahead,
        behind=behind,
        entries=[
            StatusEntry(path=e.path, origPath=e.orig_path, index=e.index, worktree=e.worktree)
            for e in st.entries
        ],
        truncated=st.truncated,
    )


@router.get("/{workspace_id}/git/diff", response_model=GitDiff)
async def git_diff(
    workspace_id: str, path: str | None = Query(default=None, min_length=1, max_length=4096)
) -> GitDiff:
    record = workspace_or_404(workspace_id)
    if path is not None and ("\0" in path or path.startswith("/") or ".." in path.split("/")):
        raise ApiError(422, "invalid_request", "path: must be a relative path inside the workspace")
    try:
        async with _runtime_of(record) as runtime:
            if not await gitinfo.is_git_dir(runtime):
                return GitDiff(isGit=False, base=None, files=[], diff="", truncated=False)
            base = await gitinfo.find_base(runtime, _parent_branch(record))
            if base is None:  # no commit yet: nothing to compare against
                return GitDiff(isGit=True, base=None, files=[], diff="", truncated=False)
            d = await gitinfo.diff(runtime, base, path)
    except SshError as exc:
        raise _unreachable(record, exc) from None
    return GitDiff(
        isGit=True,
        base=BaseRef(ref=base.ref, sha=base.sha),
        files=[
            DiffFile(
                path=f.path,
                additions=f.additions,
                deletions=f.deletions,
                binary=f.binary,
                untracked=f.untracked,
            )
            for f in d.files
        ],
        diff=d.diff,
        truncated=d.truncated,
    )


def _tokens(u: dict[str, Any]) -> Tokens:
    return Tokens(
        inputTokens=int(u.get("input_tokens", 0)),
        outputTokens=int(u.get("output_tokens", 0)),
        cacheReadTokens=int(u.get("cache_read_tokens", 0)),
        cacheWriteTokens=int(u.get("cache_write_tokens", 0)),
        reasoningTokens=int(u.get("reasoning_tokens", 0)),
    )


_KEYS = (
    "input_tokens",
    "output_tokens",
    "cache_read_tokens",
    "cache_write_tokens",
    "reasoning_tokens",
)


@router.get("/{workspace_id}/costs", response_model=Costs)
async def costs(workspace_id: str, request: Request) -> Costs:
    state = get_state(request)
    workspace_or_404(workspace_id)
    channel = await state.hub.channel(workspace_id)
    total = dict.fromkeys(_KEYS, 0)
    total_cost: float | None = 0.0
    turns: list[dict[str, Any]] = []
    current: dict[str, Any] | None = None
    last: tuple[int, str | None] | None = None
    by_model: dict[str, dict[str, Any]] = {}
    state.hub.poll_one(channel)
    for frame in channel.log.frames:
        if frame.damaged:
            continue
        data = frame.data
        if frame.type == ev.TURN_START:
            current = {
                "turnId": data.get("turn_id"),
                "startSeq": frame.seq,
                "endSeq": None,
                "reason": None,
                "model": None,
                "usage": dict.fromkeys(_KEYS, 0),
                "costUsd": 0.0,
                "steps": 0,
            }
            turns.append(current)
        elif frame.type == ev.ASSISTANT_MESSAGE or (
            # A summarization is billed too, and so is a reply a model refused (a model_fallback
            # frame; one for a content-policy error has no usage and costs nothing).
            frame.type in (ev.COMPACTION, ev.MODEL_FALLBACK) and "usage" in data
        ):
            usage = data.get("usage") or {}
            cost = data.get("cost_usd")
            model = data.get("model") or data.get("from_model")
            if frame.type == ev.ASSISTANT_MESSAGE:
                last = (int(usage.get("input_tokens", 0) or 0), model)
            per_model = by_model.setdefault(
                str(model or "unknown"), {"usage": dict.fromkeys(_KEYS, 0), "costUsd": 0.0}
            )
            for key in _KEYS:
                value = int(usage.get(key, 0) or 0)
                total[key] += value
                per_model["usage"][key] += value
                if current is not None:
                    current["usage"][key] += value
            if cost is None:
                total_cost = None
                per_model["costUsd"] = None
            else:
                if total_cost is not None:
                    total_cost += float(cost)
                if per_model["costUsd"] is not None:
                    per_model["costUsd"] += float(cost)
            if current is not None:
                current["steps"] += 1
                current["model"] = model
                if cost is None:
                    current["costUsd"] = None
                elif current["costUsd"] is not None:
                    current["costUsd"] += float(cost)
        elif frame.type == ev.TURN_END and current is not None:
            current["endSeq"] = frame.seq
            current["reason"] = data.get("reason")
            current = None
    ratio = total["cache_read_tokens"] / total["input_tokens"] if total["input_tokens"] else None
    last_request = None
    if last is not None:
        window = None
        if isinstance(last[1], str) and ":" in last[1]:
            from xum.llm.catalog import context_window

            provider, _, model_id = last[1].partition(":")
            window = context_window(provider, model_id)
        last_request = LastRequest(inputTokens=last[0], contextWindow=window)
    return Costs(
        usage=_tokens(total),
        cacheHitRatio=round(ratio, 4) if ratio is not None else None,
        costUsd=total_cost,
        turns=[
            TurnCost(**{**t, "usage": _tokens(t["usage"])}) for t in reversed(turns[-MAX_TURNS:])
        ],
        lastRequest=last_request,
        byModel=[
            ModelCost(model=m, usage=_tokens(c["usage"]), costUsd=c["costUsd"])
            for m, c in by_model.items()
        ],
    )
