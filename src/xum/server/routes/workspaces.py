"""Workspaces: list, create, read, edit, rename, fork, archive, delete (with a preview), read
markers. Lifecycle operations go through `xum.workspaces.lifecycle`, the API every front-end
shares."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from xum.server.errors import ApiError
from xum.server.hosting import require_idle, workspace_or_404
from xum.server.routes.external_agents import checked_external_agent
from xum.server.routes.projects import existing_dir
from xum.server.schemas import Workspace, WorkspaceList, WorkspaceStatus, workspace_json
from xum.server.state import ServerState, get_state
from xum.store import registry
from xum.store.registry import WorkspaceRecord
from xum.workspaces.checkouts.protocol import RemovalKind
from xum.workspaces.listing import workspace_context as context_for

if TYPE_CHECKING:
    from xum.workspaces.checkouts.protocol import RemovalItem as PlannedRemoval

router = APIRouter(prefix="/api/workspaces", tags=["workspaces"])

AGENT_PATTERN = r"^[a-z0-9][a-z0-9_-]{0,63}$"
HOST_PATTERN = r"^[A-Za-z0-9_.@:\[\]-]{1,255}$"
IMAGE_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}$"  # runtime_spec.IMAGE_RE
CONFIG_PATTERN = r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$"  # devcontainer_configs.CONFIG_NAME_RE


class RuntimeSpec(BaseModel):
    type: Literal["local", "worktree", "ssh", "docker", "devcontainer"]
    host: str | None = Field(default=None, pattern=HOST_PATTERN)
    image: str | None = Field(default=None, pattern=IMAGE_PATTERN)
    # Dev Container: a named config (`.devcontainer/<name>/devcontainer.json`); none: the
    # unnamed or only one.
    config: str | None = Field(default=None, pattern=CONFIG_PATTERN)
    # Docker, Dev Container: "Share credentials" (the SSH agent, ~/.gitconfig, GH_TOKEN with gh).
    shareCredentials: bool = False


class CreateWorkspace(BaseModel):
    projectPath: str = Field(min_length=1, max_length=4096)
    runtime: RuntimeSpec = RuntimeSpec(type="worktree")
    name: str | None = Field(default=None, max_length=100)
    title: str | None = Field(default=None, max_length=300)
    model: str | None = Field(default=None, max_length=200)
    thinking: str | None = Field(default=None, max_length=20)
    agent: str | None = Field(default=None, pattern=AGENT_PATTERN)
    # An external ACP agent of config.json's `externalAgents`, the workspace's agent for life.
    externalAgent: str | None = Field(default=None, pattern=AGENT_PATTERN)


class EditWorkspace(BaseModel):
    title: str | None = Field(default=None, max_length=300)
    model: str | None = Field(default=None, max_length=200)
    thinking: str | None = Field(default=None, max_length=20)
    agent: str | None = Field(default=None, pattern=AGENT_PATTERN)
    # The permission mode; the running session applies it from its next tool call.
    permissions: Literal["auto", "ask", "read-only"] | None = None
    # "Notify on all responses" (docs/notifications.md): a notification when a response ends.
    notifyOnResponse: bool | None = None


class RenameBody(BaseModel):
    name: str = Field(min_length=1, max_length=80)


class ForkBody(BaseModel):
    name: str | None = Field(default=None, min_length=1, max_length=80)
    title: str | None = Field(default=None, max_length=300)


class AgentInfo(BaseModel):
    id: str
    name: str
    description: str
    color: str | None
    scope: str  # "built-in", "global" or "project": where the definition came from


class AgentList(BaseModel):
    agents: list[AgentInfo]


class ReadBody(BaseModel):
    seq: int = Field(ge=0, le=2**53)


class RemovalItem(BaseModel):
    kind: RemovalKind
    path: str | None = None
    name: str | None = None
    detail: str | None = None


class DeletionPreview(BaseModel):
    workspaceId: str
    removes: list[RemovalItem]
    keeps: list[str]
    warnings: list[str]
    dirtyFiles: list[str]


class Deleted(BaseModel):
    workspaceId: str
    removed: list[RemovalItem]
    branchDeleted: bool
    notes: list[str]


def as_json(state: ServerState, record: WorkspaceRecord) -> Workspace:
    return workspace_json(record, state.hub.status(record.id))


def checked_model(text: str | None) -> str | None:
    """A model string in canonical `provider:model` form; 422 when it cannot name one."""
    if text is None or not text.strip():
        return None
    from xum.core.errors import XumError
    from xum.llm import catalog

    try:
        provider, model_id = catalog.resolve_model_string(text)
    except XumError as exc:
        raise ApiError(422, "invalid_request", f"model: {exc.message}", exc.hint) from None
    return f"{provider}:{model_id}"


def checked_thinking(text: str | None, model: str | None) -> str | None:
    if text is None or not text.strip():
        return None
    from xum.core.errors import XumError
    from xum.llm.thinking import parse_thinking

    provider, _, model_id = (model or "").partition(":")
    try:
        return parse_thinking(text, provider or None, model_id or None)
    except XumError as exc:
        raise ApiError(422, "invalid_request", f"thinking: {exc.message}", exc.hint) from None


@router.get("", response_model=WorkspaceList)
async def list_workspaces(
    request: Request,
    project: str | None = Query(default=None, max_length=4096),
    archived: Literal["exclude", "include", "only"] = "exclude",
) -> WorkspaceList:
    state = get_state(request)
    records = await asyncio.to_thread(registry.list_workspaces, project)
    if archived == "exclude":
        records = [r for r in records if r.archived_at is None]
    elif archived == "only":
        records = [r for r in records if r.archived_at is not None]
    return WorkspaceList(workspaces=[as_json(state, r) for r in records])


@router.post("", response_model=Workspace, status_code=201)
async def create_workspace(body: CreateWorkspace, request: Request) -> Workspace:
    state = get_state(request)
    directory = existing_dir(body.projectPath)
    external: str | None = None
    if body.externalAgent is not None:
        external = await checked_external_agent(
            body.externalAgent,
            model=body.model,
            thinking=body.thinking,
            agent=body.agent,
        )
    model = checked_model(body.model)
    thinking = checked_thinking(body.thinking, model)
    spec: str = body.runtime.type
    fields: dict[str, Any] = {}
    if external is not None:
        fields["external_agent"] = external
    if spec == "ssh":
        if not body.runtime.host:
            raise ApiError(422, "invalid_request", "runtime.host: an SSH workspace needs a host")
        spec = f"ssh {body.runtime.host}"
    elif spec == "docker":
        if not body.runtime.image:
            raise ApiError(
                422, "invalid_request", "runtime.image: a Docker workspace needs an image"
            )
        spec = f"docker {body.runtime.image}"
        if body.runtime.shareCredentials:
            fields["extra"] = {"container_credentials": True}
    elif spec == "devcontainer":
        if body.runtime.config:
            spec = f"devcontainer {body.runtime.config}"
        if body.runtime.shareCredentials:
            fields["extra"] = {"container_credentials": True}
    title = (body.title or "").strip()
    name = (body.name or "").strip() or None
    hint = title or "workspace"
    from xum.workspaces.lifecycle import check_name

    exact: str | None = None
    if name is not None:
        try:
            exact = check_name(name)
        except Exception:
            hint = name  # not usable as given: a name is made from it instead
    # A worktree named after one of the project's branches checks that branch out (and leaves
    # it in place when the workspace is deleted) instead of making a new one.
    branch = None
    if name is not None and spec == "worktree":
        branch = await asyncio.to_thread(_existing_branch, directory, name)
    record = await state.hosts.create(
        directory,
        spec,
        name_hint=hint,
        title=title,
        name=exact,
        branch=branch,
        model=model,
        thinking=thinking,
        agent=body.agent or "exec",
        **fields,
    )
    state.hub.workspaces_changed()
    return as_json(state, record)


def _existing_branch(directory: Path, name: str) -> str | None:
    from xum.runtime import git

    top = git.toplevel(directory)
    if top is None or not git.is_valid_branch_name(top, name):
        return None
    return name if git.branch_exists(top, name) else None


@router.get("/{workspace_id}", response_model=Workspace)
async def get_workspace(workspace_id: str, request: Request) -> Workspace:
    return as_json(get_state(request), workspace_or_404(workspace_id))


async def selectable_agents(record: WorkspaceRecord) -> list[Any]:
    """The agents a user may pick in this workspace (enabled, resolvable, not `ui.hidden`)."""
    async with context_for(record) as context:
        agents: list[Any] = await context.list_agents()
        return agents


async def checked_agent(record: WorkspaceRecord, agent_id: str) -> str:
    """`agent_id` when this workspace's catalog has it enabled and resolvable; 422 otherwise.
    Hidden agents may be chosen here (they are only left out of the picker)."""
    from xum.context.agents import AgentError

    async with context_for(record) as context:
        catalog, _ = await context.agent_catalog()
    try:
        catalog.resolve(agent_id)
    except AgentError as exc:
        raise ApiError(422, "invalid_request", f"agent: {exc.message}", exc.hint) from None
    return agent_id


async def change_workspace(
    state: ServerState, record: WorkspaceRecord, changes: dict[str, object]
) -> WorkspaceRecord:
    """Store checked changes; a live session picks up a new model, thinking level or agent
    from its next turn (the host's `change_settings`)."""
    return await state.hosts.change_settings(record.id, **changes)


async def notify_setting(state: ServerState, record: WorkspaceRecord, on: bool) -> WorkspaceRecord:
    """Store "Notify on all responses"; the host reads it when a response ends."""
    from xum.host.notifications import set_notify_on_response

    await asyncio.to_thread(set_notify_on_response, record.id, on)
    state.hub.workspaces_changed()
    return registry.get_workspace(record.id) or record


async def fork(
    state: ServerState, workspace_id: str, name: str | None, title: str | None
) -> WorkspaceRecord:
    return await state.hosts.fork(workspace_id, name, title)


@router.get("/{workspace_id}/agents", response_model=AgentList)
async def list_agents(workspace_id: str) -> AgentList:
    """The agents the picker offers in this workspace."""
    from xum.context.agents import SCOPE_NAMES

    record = workspace_or_404(workspace_id)
    agents = await selectable_agents(record)
    return AgentList(
        agents=[
            AgentInfo(
                id=a.id,
                name=a.name,
                description=a.description,
                color=a.color,
                scope=SCOPE_NAMES.get(a.scope, "built-in"),
            )
            for a in agents
        ]
    )


@router.patch("/{workspace_id}", response_model=Workspace)
async def edit_workspace(workspace_id: str, body: EditWorkspace, request: Request) -> Workspace:
    state = get_state(request)
    record = workspace_or_404(workspace_id)
    changes: dict[str, object] = {}
    if body.title is not None:
        changes["title"] = body.title.strip()
    if body.model is not None:
        changes["model"] = checked_model(body.model)
    if body.thinking is not None:
        model = changes.get("model", record.model)
        changes["thinking"] = checked_thinking(
            body.thinking, model if isinstance(model, str) else None
        )
    if body.agent is not None and body.agent != record.agent:
        changes["agent"] = await checked_agent(record, body.agent)
    if body.permissions is not None:
        changes["permissions"] = body.permissions
    if body.notifyOnResponse is not None:
        record = await notify_setting(state, record, body.notifyOnResponse)
    if not changes:
        return as_json(state, record)
    return as_json(state, await change_workspace(state, record, changes))


@router.post("/{workspace_id}/rename", response_model=Workspace)
async def rename_workspace(workspace_id: str, body: RenameBody, request: Request) -> Workspace:
    from xum.workspaces.lifecycle import rename_workspace as rename

    state = get_state(request)
    workspace_or_404(workspace_id)
    require_idle(state.hosts, workspace_id, "rename")
    async with state.hosts.lock_for(workspace_id):
        await state.hosts.close_workspace(workspace_id)  # its checkout path may change
        record = await rename(workspace_id, body.name)
    state.hub.workspaces_changed()
    return as_json(state, record)


@router.post("/{workspace_id}/fork", response_model=Workspace, status_code=201)
async def fork_workspace(workspace_id: str, body: ForkBody, request: Request) -> Workspace:
    state = get_state(request)
    workspace_or_404(workspace_id)
    return as_json(state, await fork(state, workspace_id, body.name, body.title))


@router.post("/{workspace_id}/archive", response_model=Workspace)
async def archive_workspace(workspace_id: str, request: Request) -> Workspace:
    from xum.workspaces.lifecycle import archive_workspace as archive

    state = get_state(request)
    workspace_or_404(workspace_id)
    async with state.hosts.lock_for(workspace_id):
        await state.hosts.close_workspace(workspace_id)  # a running turn is interrupted
        record = await archive(workspace_id)
    state.hosts.inbox.forget(workspace_id)  # an archived workspace waits for nobody
    state.hosts.notifier.forget(workspace_id)
    state.hub.workspaces_changed()
    return as_json(state, record)


@router.post("/{workspace_id}/unarchive", response_model=Workspace)
async def unarchive_workspace(workspace_id: str, request: Request) -> Workspace:
    from xum.workspaces.lifecycle import unarchive_workspace as unarchive

    state = get_state(request)
    workspace_or_404(workspace_id)
    record = await unarchive(workspace_id)
    state.hub.workspaces_changed()
    return as_json(state, record)


BranchPolicy = Literal["merged", "always", "never"]


def _preview(record: WorkspaceRecord, branch: BranchPolicy) -> DeletionPreview:
    """The deletion preview, from the same code that deletes (`lifecycle.deletion_preview`)."""
    from xum.workspaces.lifecycle import deletion_preview

    plan = deletion_preview(record, branch)
    return DeletionPreview(
        workspaceId=record.id,
        removes=[_item(item) for item in plan.removes],
        keeps=plan.keeps,
        warnings=plan.warnings,
        dirtyFiles=plan.dirty,
    )


def _item(item: PlannedRemoval) -> RemovalItem:
    return RemovalItem(kind=item.kind, path=item.path, name=item.name, detail=item.detail)


@router.get("/{workspace_id}/deletion", response_model=DeletionPreview)
async def deletion_preview(workspace_id: str, branch: BranchPolicy = "merged") -> DeletionPreview:
    record = workspace_or_404(workspace_id)
    return await asyncio.to_thread(_preview, record, branch)


@router.delete("/{workspace_id}", response_model=Deleted)
async def delete_workspace(
    workspace_id: str,
    request: Request,
    force: bool = False,
    branch: BranchPolicy = "merged",
) -> Deleted:
    from xum.workspaces.lifecycle import delete_workspace as delete

    state = get_state(request)
    record = workspace_or_404(workspace_id)
    require_idle(state.hosts, workspace_id, "delete")
    preview = await asyncio.to_thread(_preview, record, branch)
    if preview.dirtyFiles and not force:
        raise ApiError(
            409,
            "workspace_dirty",
            f"workspace '{record.name}' has {len(preview.dirtyFiles)} uncommitted change(s)",
            "commit or discard them, or delete with ?force=true to lose them "
            "(GET .../deletion lists them)",
        )
    async with state.hosts.lock_for(workspace_id):
        await state.hosts.close_workspace(workspace_id)
        report = await delete(workspace_id, force=force, branch=branch)
        state.hub.forget(workspace_id)
    state.read_marks.forget(workspace_id)
    state.hosts.inbox.forget(workspace_id)
    state.hosts.notifier.forget(workspace_id)
    state.hub.workspaces_changed()
    return Deleted(
        workspaceId=workspace_id,
        removed=[_item(item) for item in report.removed],
        branchDeleted=report.branch_deleted,
        notes=report.notes,
    )


@router.post("/{workspace_id}/read", response_model=WorkspaceStatus)
async def mark_read(workspace_id: str, body: ReadBody, request: Request) -> WorkspaceStatus:
    state = get_state(request)
    workspace_or_404(workspace_id)
    read = state.read_marks.mark(workspace_id, body.seq)
    state.hosts.inbox.read(workspace_id, read)  # the notices it covers leave every inbox
    state.hub.status_changed(workspace_id)
    return WorkspaceStatus.model_validate(state.hub.status(workspace_id))
