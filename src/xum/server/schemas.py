"""Response shapes shared by several routes (docs/api.md, "Shapes")."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, SerializerFunctionWrapHandler, model_serializer

from xum.store.registry import ProjectRecord, WorkspaceRecord, project_name
from xum.workspaces.ports import block_for


class Project(BaseModel):
    path: str
    name: str
    addedAt: int
    trusted: bool
    isGit: bool


class QueuedMessage(BaseModel):
    when: Literal["step", "turn"]
    text: str  # the first 500 characters
    truncated: bool  # the message is longer than `text`


class QueuedCounts(BaseModel):
    step: int
    turn: int
    # The waiting messages in the order they will run ("step" ones first), at most 20.
    messages: list[QueuedMessage] = []


class WorkspaceStatus(BaseModel):
    state: Literal["idle", "streaming", "waiting", "error"]
    phase: Literal["model", "tools", "compacting"] | None
    queued: QueuedCounts
    lastSeq: int
    readSeq: int
    unread: bool
    busyElsewhere: bool
    error: dict[str, Any] | None


class RuntimeInfo(BaseModel):
    type: Literal["local", "worktree", "ssh", "docker", "devcontainer"]
    host: str | None = None
    image: str | None = None  # docker: the container image

    @model_serializer(mode="wrap")
    def _shape(self, handler: SerializerFunctionWrapHandler) -> dict[str, Any]:
        # `image` appears only on Docker workspaces: the other runtimes keep their shape.
        data: dict[str, Any] = handler(self)
        if data.get("image") is None:
            data.pop("image", None)
        return data


class InitHook(BaseModel):
    status: str | None  # None (none ran), running, succeeded, failed, timed_out, cancelled
    exitCode: int | None


class PortRange(BaseModel):
    first: int
    last: int
    count: int


class Workspace(BaseModel):
    id: str
    name: str
    title: str
    projectPath: str
    projectName: str
    runtime: RuntimeInfo
    path: str
    branch: str | None
    agent: str
    model: str | None
    thinking: str | None
    parentId: str | None
    createdAt: int
    archivedAt: int | None
    init: InitHook
    status: WorkspaceStatus
    # The log's last seq when an idle compaction finished: while `status.lastSeq` is still
    # that, the workspace shows the idle-compacted badge.
    idleCompactedSeq: int | None = None
    permissions: Literal["auto", "ask", "read-only"]  # the permission mode (docs/security.md)
    # The workspace's own ports (`XUM_PORT`..): null when it has none (docs/workspaces.md).
    ports: PortRange | None = None
    # "Notify on all responses" (docs/notifications.md).
    notifyOnResponse: bool = False
    # A scratch chat: no project, a private folder, no git (docs/workspaces.md).
    scratch: bool = False
    # The external ACP agent that is this workspace's agent (config.json `externalAgents`);
    # null: xum's own engine.
    externalAgent: str | None = None


class WorkspaceList(BaseModel):
    workspaces: list[Workspace]


class ProjectList(BaseModel):
    projects: list[Project]


def project_json(record: ProjectRecord) -> Project:
    return Project(
        path=record.path,
        name=record.name,
        addedAt=record.added_at,
        trusted=record.trusted,
        isGit=(Path(record.path) / ".git").exists(),
    )


def workspace_json(record: WorkspaceRecord, status: dict[str, Any]) -> Workspace:
    return Workspace(
        id=record.id,
        name=record.name,
        title=record.title,
        projectPath=record.project_path,
        projectName=project_name(record.project_path),
        runtime=RuntimeInfo(
            type=record.runtime, host=record.host, image=record.extra.get("container_image")
        ),
        path=record.path,
        branch=record.branch,
        agent=record.agent,
        model=record.model,
        thinking=record.thinking,
        parentId=record.parent_id,
        createdAt=record.created_at,
        archivedAt=record.archived_at,
        init=InitHook(
            status=record.init_status,
            exitCode=record.init_exit_code,
        ),
        status=WorkspaceStatus.model_validate(status),
        idleCompactedSeq=_opt_int(record.extra.get("idle_compacted_seq")),
        permissions=_permissions(record.permissions),
        ports=_ports(record),
        notifyOnResponse=record.extra.get("notify_on_response") is True,
        scratch=record.extra.get("scratch") is True and record.parent_id is None,
        externalAgent=record.external_agent,
    )


def _ports(record: WorkspaceRecord) -> PortRange | None:
    block = block_for(record)
    if block is None:
        return None
    return PortRange(first=block.first, last=block.last, count=block.count)


def _opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _permissions(stored: str | None) -> Literal["auto", "ask", "read-only"]:
    if stored == "ask":
        return "ask"
    return "read-only" if stored == "read-only" else "auto"
