"""Settings → Safety: the command sandbox, the read denylist and the remembered approvals.

All of it lives in `$XUM_ROOT/config.json` (user-global: nothing in a repository sets it), read
by every session on its next tool call, so a change here applies without a restart. Values are
checked with the same parsers the sessions use before they are written.
"""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from fastapi import APIRouter
from pydantic import BaseModel, Field

from xum.server.errors import ApiError

router = APIRouter(prefix="/api/settings/safety", tags=["settings"])


class SandboxSection(BaseModel):
    mode: Literal["auto", "workspace-write", "read-only", "off"] = "auto"
    egress: Literal["shared", "off"] = "shared"
    writable: list[str] = Field(default_factory=list, max_length=64)
    privateTmp: bool = False


class DenylistSection(BaseModel):
    sensitive: bool = False
    paths: list[str] = Field(default_factory=list, max_length=256)


class Backend(BaseModel):
    ok: bool
    detail: str  # which bubblewrap, or why none works and how to fix it
    effective: str  # what `sandbox.mode` amounts to here: workspace-write, read-only, off, refused


class Rule(BaseModel):
    project: str
    tool: str
    prefix: str
    addedAt: int | None


class SafetySettings(BaseModel):
    sandbox: SandboxSection
    readDenylist: DenylistSection
    backend: Backend
    rules: list[Rule]


class SafetyEdit(BaseModel):
    sandbox: SandboxSection | None = None
    readDenylist: DenylistSection | None = None


class ForgetRule(BaseModel):
    project: str = Field(min_length=1, max_length=4096)
    prefix: str = Field(min_length=1, max_length=1000)


def _read() -> SafetySettings:
    from xum.runtime.sandbox import local_backend
    from xum.store.config import load_config
    from xum.workspaces.safety.approvals import list_rules

    config = load_config()
    sandbox = config.get("sandbox")
    sandbox = sandbox if isinstance(sandbox, dict) else {}
    denylist = config.get("readDenylist")
    denylist = denylist if isinstance(denylist, dict) else {}
    backend = local_backend()
    section = SandboxSection.model_validate(_known(sandbox, SandboxSection))
    effective: str = section.mode
    if effective == "auto":
        effective = "workspace-write" if backend.ok else "off"
    elif effective != "off" and not backend.ok:
        effective = "refused"
    rules = [
        Rule(
            project=str(r.get("project", "")),
            tool=str(r.get("tool", "bash")),
            prefix=str(r.get("prefix", "")),
            addedAt=r.get("addedAt") if isinstance(r.get("addedAt"), int) else None,
        )
        for r in list_rules()
    ]
    return SafetySettings(
        sandbox=section,
        readDenylist=DenylistSection.model_validate(_known(denylist, DenylistSection)),
        backend=Backend(ok=backend.ok, detail=backend.detail, effective=effective),
        rules=rules,
    )


def _known(section: dict[str, Any], model: type[BaseModel]) -> dict[str, Any]:
    """The keys the form shows (a section xum cannot parse shows its defaults)."""
    try:
        return model.model_validate(section).model_dump()
    except ValueError:
        return {}


def _write(edit: SafetyEdit) -> None:
    from xum.runtime.sandbox import parse_settings
    from xum.store.config import update_config
    from xum.tools.denylist import parse_denylist

    sandbox = edit.sandbox.model_dump() if edit.sandbox is not None else None
    denylist = edit.readDenylist.model_dump() if edit.readDenylist is not None else None
    try:  # the sessions' own parsers: what is stored is what they accept
        if sandbox is not None:
            sandbox["writable"] = [p.strip() for p in sandbox["writable"] if p.strip()]
            parse_settings(sandbox)
        if denylist is not None:
            denylist["paths"] = [p.strip() for p in denylist["paths"] if p.strip()]
            parse_denylist(denylist)
    except ValueError as exc:
        raise ApiError(422, "invalid_request", str(exc)) from None

    def mutate(config: dict[str, Any]) -> None:
        if sandbox is not None:
            config["sandbox"] = sandbox
        if denylist is not None:
            config["readDenylist"] = denylist

    update_config(mutate)


@router.get("", response_model=SafetySettings)
async def get_safety() -> SafetySettings:
    return await asyncio.to_thread(_read)


@router.put("", response_model=SafetySettings)
async def put_safety(body: SafetyEdit) -> SafetySettings:
    await asyncio.to_thread(_write, body)
    return await asyncio.to_thread(_read)


@router.post("/rules/forget", response_model=SafetySettings)
async def forget(body: ForgetRule) -> SafetySettings:
    from xum.workspaces.safety.approvals import forget_rule

    if not await asyncio.to_thread(forget_rule, body.project, body.prefix):
        raise ApiError(404, "not_found", "no such remembered rule")
    return await asyncio.to_thread(_read)
