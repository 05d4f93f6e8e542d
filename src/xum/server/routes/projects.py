"""Projects: list, add, trust, project secrets (names only ever leave the server), and the
devcontainer configs a project offers (the Dev Container runtime's choice)."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from fastapi import APIRouter, Query, Request, Response
from pydantic import BaseModel, Field

from xum.server.errors import ApiError, not_found
from xum.server.schemas import Project, ProjectList, project_json
from xum.server.state import get_state
from xum.store import registry

router = APIRouter(prefix="/api/projects", tags=["projects"])

MAX_PATH = 4096


class AddProject(BaseModel):
    path: str = Field(min_length=1, max_length=MAX_PATH)


class TrustBody(BaseModel):
    path: str = Field(min_length=1, max_length=MAX_PATH)
    trusted: bool


class SecretBody(BaseModel):
    path: str = Field(min_length=1, max_length=MAX_PATH)
    name: str = Field(min_length=1, max_length=200, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$")
    value: str = Field(max_length=64 * 1024)


class SecretNames(BaseModel):
    names: list[str]


def existing_dir(path: str) -> Path:
    """The directory `path` names: absolute, or `~/...` in the server user's home."""
    if "\0" not in path and (path == "~" or path.startswith("~/")):
        path = os.path.expanduser(path)
    if "\0" in path or not os.path.isabs(path):
        raise ApiError(
            422, "invalid_request", "path: must be an absolute directory path (or start with ~/)"
        )
    directory = Path(path)
    if not directory.is_dir():
        raise ApiError(422, "invalid_request", f"path: {path} is not an existing directory")
    return directory


def known_project(path: str) -> registry.ProjectRecord:
    if "\0" in path:
        raise not_found("no such project")
    record = registry.get_project(path)
    if record is None:
        raise not_found(f"no project at '{path[:300]}'", "GET /api/projects lists them")
    return record


def add_project_now(path: str) -> tuple[registry.ProjectRecord, bool]:
    from xum.workspaces.checkouts.shared import project_root

    root = str(project_root(existing_dir(path)))
    existed = registry.get_project(root) is not None
    return registry.ensure_project(root), not existed


@router.get("", response_model=ProjectList)
async def list_projects() -> ProjectList:
    records = await asyncio.to_thread(registry.list_projects)
    return ProjectList(projects=[project_json(r) for r in records])


@router.post("", response_model=Project, status_code=201)
async def add_project(body: AddProject, request: Request, response: Response) -> Project:
    record, new = await asyncio.to_thread(add_project_now, body.path)
    if new:
        get_state(request).hub.workspaces_changed()
    else:
        response.status_code = 200
    return project_json(record)


@router.post("/trust", response_model=Project)
async def set_trust(body: TrustBody, request: Request) -> Project:
    from xum.workspaces.safety.trust import set_trusted

    existing_dir(body.path)
    record, _new = await asyncio.to_thread(set_trusted, body.path, body.trusted)
    get_state(request).hub.workspaces_changed()
    return project_json(record)


class DevcontainerConfigInfo(BaseModel):
    name: str | None  # a named config's folder; null for the unnamed one
    path: str  # relative to the project


class DevcontainerConfigs(BaseModel):
    configs: list[DevcontainerConfigInfo]


@router.get("/devcontainers", response_model=DevcontainerConfigs)
async def devcontainer_configs(
    path: str = Query(min_length=1, max_length=MAX_PATH),
) -> DevcontainerConfigs:
    """The project's devcontainer.json files: the Dev Container runtime is offered only when
    this list is not empty."""
    from xum.workspaces.devcontainer_configs import find_configs

    record = known_project(path)
    found = await asyncio.to_thread(find_configs, record.path)
    return DevcontainerConfigs(
        configs=[DevcontainerConfigInfo(name=c.name, path=c.path) for c in found]
    )


@router.get("/secrets", response_model=SecretNames)
async def secret_names(path: str = Query(min_length=1, max_length=MAX_PATH)) -> SecretNames:
    from xum.store.secrets import load_project_secrets

    record = known_project(path)
    secrets = await asyncio.to_thread(load_project_secrets, record.path)
    return SecretNames(names=sorted(secrets))


@router.put("/secrets", response_model=SecretNames)
async def set_secret(body: SecretBody) -> SecretNames:
    from xum.store.secrets import load_project_secrets, set_project_secret

    record = known_project(body.path)

    def write() -> list[str]:
        set_project_secret(record.path, body.name, body.value)
        return sorted(load_project_secrets(record.path))

    return SecretNames(names=await asyncio.to_thread(write))


@router.delete("/secrets", response_model=SecretNames)
async def delete_secret(
    path: str = Query(min_length=1, max_length=MAX_PATH),
    name: str = Query(min_length=1, max_length=200, pattern=r"^[A-Za-z_][A-Za-z0-9_]*$"),
) -> SecretNames:
    from xum.store.secrets import load_project_secrets, set_project_secret

    record = known_project(path)

    def write() -> list[str]:
        set_project_secret(record.path, name, None)
        return sorted(load_project_secrets(record.path))

    return SecretNames(names=await asyncio.to_thread(write))
