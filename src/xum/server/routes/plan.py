"""A workspace's plan file, read and written from the browser's plan card (Edit).

The file is `$XUM_ROOT/plans/<project>/<workspace>.md` on the server's machine, for every kind of
workspace. A write is refused while a turn runs (the agent may be editing the plan) and when the
file changed since the editor read it (`expectedSha256`), so nobody's edit is lost silently. The
model learns of the change before its next request, as of any edit made outside its tools
(docs/plan-mode.md).
"""

from __future__ import annotations

import asyncio
import hashlib

from fastapi import APIRouter, Request
from pydantic import BaseModel, Field

from xum.context.plan import MAX_PLAN_BYTES
from xum.core.fsutil import atomic_write_text
from xum.core.paths import ensure_private_dir
from xum.server.errors import ApiError
from xum.server.hosting import require_idle, workspace_or_404
from xum.server.state import get_state
from xum.workspaces.state import plan_path

router = APIRouter(prefix="/api/workspaces", tags=["plan"])


class PlanFile(BaseModel):
    path: str
    exists: bool
    content: str  # "" when the file does not exist
    sha256: str  # of the content as read; "" when the file does not exist


class PlanEdit(BaseModel):
    content: str = Field(max_length=MAX_PLAN_BYTES)
    # The sha256 the editor read (GET); "" for a file that did not exist. Omitted: no check.
    expectedSha256: str | None = Field(default=None, max_length=64)


def _digest(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _read(workspace_id: str) -> PlanFile:
    path = plan_path(workspace_or_404(workspace_id))
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return PlanFile(path=str(path), exists=False, content="", sha256="")
    except OSError as exc:
        raise ApiError(500, "plan_unreadable", f"cannot read the plan file {path}: {exc}") from None
    if len(data) > MAX_PLAN_BYTES:
        raise ApiError(
            413,
            "plan_too_large",
            f"the plan file {path} is larger than {MAX_PLAN_BYTES // 1024} KiB",
            hint="edit it with an editor on the server's machine",
        )
    return PlanFile(
        path=str(path),
        exists=True,
        content=data.decode("utf-8", "replace"),
        sha256=_digest(data),
    )


def _write(workspace_id: str, body: PlanEdit) -> PlanFile:
    current = _read(workspace_id)
    if body.expectedSha256 is not None and body.expectedSha256 != current.sha256:
        raise ApiError(
            409,
            "plan_changed",
            "the plan file changed since it was opened for editing",
            hint="open it again to see the newer text, then redo the edit",
        )
    data = body.content.encode("utf-8")
    if len(data) > MAX_PLAN_BYTES:
        raise ApiError(
            413, "plan_too_large", f"a plan may hold at most {MAX_PLAN_BYTES // 1024} KiB"
        )
    path = plan_path(workspace_or_404(workspace_id))
    ensure_private_dir(path.parent)
    atomic_write_text(path, body.content)
    return PlanFile(path=str(path), exists=True, content=body.content, sha256=_digest(data))


@router.get("/{workspace_id}/plan", response_model=PlanFile)
async def read_plan(workspace_id: str) -> PlanFile:
    return await asyncio.to_thread(_read, workspace_id)


@router.put("/{workspace_id}/plan", response_model=PlanFile)
async def write_plan(workspace_id: str, body: PlanEdit, request: Request) -> PlanFile:
    state = get_state(request)
    workspace_or_404(workspace_id)
    require_idle(state.hosts, workspace_id, "edit the plan of")
    return await asyncio.to_thread(_write, workspace_id, body)
