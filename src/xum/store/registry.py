"""The project and workspace registry, kept in `$XUM_ROOT/config.json`.

Only this module mints workspace ids and names; callers use what it returns. Every change is a
locked read-modify-write with an atomic replace (see `xum.store.config`), so several xum
processes can share one `$XUM_ROOT` without losing each other's records.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from xum.core.clock import now_ms
from xum.core.errors import XumError
from xum.core.ids import random_suffix, workspace_id, workspace_name
from xum.store.config import load_config, update_config

RuntimeName = Literal["local", "worktree", "ssh"]


class RegistryError(XumError):
    code = "registry_error"


@dataclass
class ProjectRecord:
    path: str  # absolute: the git toplevel, or the directory itself
    name: str
    added_at: int = 0
    trusted: bool = False


@dataclass
class WorkspaceRecord:
    id: str
    name: str
    project_path: str
    runtime: RuntimeName
    path: str  # the workspace directory (the project dir for local)
    title: str = ""
    branch: str | None = None
    host: str | None = None  # ssh only
    agent: str = "exec"
    model: str | None = None
    thinking: str | None = None
    parent_id: str | None = None
    created_at: int = 0
    archived_at: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorkspaceRecord:
        known = {f for f in cls.__dataclass_fields__}
        record = cls(**{k: v for k, v in data.items() if k in known and k != "extra"})
        record.extra = {k: v for k, v in data.items() if k not in known}
        return record

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        extra = data.pop("extra")
        data.update(extra)
        return data


def project_name(path: str) -> str:
    return Path(path).name or "root"


def _projects(config: dict[str, Any]) -> dict[str, Any]:
    projects = config.setdefault("projects", {})
    if not isinstance(projects, dict):
        raise RegistryError('config.json: "projects" must be an object')
    return projects


def _workspaces(config: dict[str, Any]) -> dict[str, Any]:
    workspaces = config.setdefault("workspaces", {})
    if not isinstance(workspaces, dict):
        raise RegistryError('config.json: "workspaces" must be an object')
    return workspaces


def ensure_project(path: str) -> ProjectRecord:
    """Register `path` as a project if it is not one yet; return its record."""

    def mutate(config: dict[str, Any]) -> ProjectRecord:
        projects = _projects(config)
        entry = projects.get(path)
        if not isinstance(entry, dict):
            entry = {"name": project_name(path), "addedAt": now_ms(), "trusted": False}
            projects[path] = entry
        return ProjectRecord(
            path=path,
            name=str(entry.get("name") or project_name(path)),
            added_at=int(entry.get("addedAt", 0)),
            trusted=bool(entry.get("trusted", False)),
        )

    return update_config(mutate)


def get_project(path: str) -> ProjectRecord | None:
    entry = load_config().get("projects", {}).get(path)
    if not isinstance(entry, dict):
        return None
    return ProjectRecord(
        path=path,
        name=str(entry.get("name") or project_name(path)),
        added_at=int(entry.get("addedAt", 0)),
        trusted=bool(entry.get("trusted", False)),
    )


def create_workspace(
    *,
    project_path: str,
    runtime: RuntimeName,
    name_hint: str,
    path_for: Any = None,
    title: str = "",
    **fields: Any,
) -> WorkspaceRecord:
    """Mint an id and a unique `<slug>-<suffix>` name, record the workspace, return the record.

    `path_for(name)` gives the workspace directory for a name (worktrees live under
    `$XUM_ROOT/src/<project>/<name>`); without it the workspace runs in the project directory.
    """

    def mutate(config: dict[str, Any]) -> WorkspaceRecord:
        workspaces = _workspaces(config)
        taken = {
            (w.get("projectPath"), w.get("name"))
            for w in workspaces.values()
            if isinstance(w, dict)
        }
        for _ in range(100):
            name = workspace_name(name_hint, random_suffix())
            if (project_path, name) not in taken:
                break
        else:  # pragma: no cover - 32^4 suffixes
            raise RegistryError(f"could not find a free workspace name for '{name_hint}'")
        new_id = workspace_id()
        while new_id in workspaces:  # pragma: no cover - 40 random bits
            new_id = workspace_id()
        record = WorkspaceRecord(
            id=new_id,
            name=name,
            project_path=project_path,
            runtime=runtime,
            path=str(path_for(name)) if path_for else project_path,
            title=title,
            created_at=now_ms(),
            **fields,
        )
        workspaces[new_id] = _to_config(record)
        return record

    return update_config(mutate)


def _to_config(record: WorkspaceRecord) -> dict[str, Any]:
    data = record.to_dict()
    # camelCase on disk, like the rest of config.json
    return {_camel(k): v for k, v in data.items()}


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(p.title() for p in rest)


def _snake(key: str) -> str:
    return "".join("_" + c.lower() if c.isupper() else c for c in key)


def _from_config(data: dict[str, Any]) -> WorkspaceRecord:
    return WorkspaceRecord.from_dict({_snake(k): v for k, v in data.items()})


def get_workspace(ws_id: str) -> WorkspaceRecord | None:
    data = load_config().get("workspaces", {}).get(ws_id)
    return _from_config(data) if isinstance(data, dict) else None


def list_workspaces(project_path: str | None = None) -> list[WorkspaceRecord]:
    out = []
    for data in load_config().get("workspaces", {}).values():
        if isinstance(data, dict):
            record = _from_config(data)
            if project_path is None or record.project_path == project_path:
                out.append(record)
    out.sort(key=lambda r: r.created_at, reverse=True)
    return out


def update_workspace(ws_id: str, **changes: Any) -> WorkspaceRecord:
    def mutate(config: dict[str, Any]) -> WorkspaceRecord:
        workspaces = _workspaces(config)
        data = workspaces.get(ws_id)
        if not isinstance(data, dict):
            raise RegistryError(
                f"no workspace with id '{ws_id}'", hint="`xum sessions --all` lists them"
            )
        record = _from_config(data)
        for key, value in changes.items():
            if not hasattr(record, key):
                raise RegistryError(f"unknown workspace field '{key}'")
            setattr(record, key, value)
        workspaces[ws_id] = _to_config(record)
        return record

    return update_config(mutate)


def remove_workspace(ws_id: str) -> None:
    update_config(lambda config: _workspaces(config).pop(ws_id, None))
