"""The project and workspace registry, kept in `$XUM_ROOT/config.json`.

Only this module mints workspace ids and names; callers use what it returns. Every change is a
locked read-modify-write with an atomic replace (see `xum.store.config`), so several xum
processes can share one `$XUM_ROOT` without losing each other's records.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Mapping
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Literal

from xum.core.clock import now_ms
from xum.core.errors import XumError
from xum.core.ids import random_suffix, workspace_id, workspace_name
from xum.core.portblock import PortBlock
from xum.store.config import load_config, read_config, update_config
from xum.store.port_alloc import allocate, port_settings, stored_blocks

RuntimeName = Literal["local", "worktree", "ssh", "docker", "devcontainer"]


class RegistryError(XumError):
    code = "registry_error"


@dataclass
class ProjectRecord:
    """A registered project (`config.json` `projects`)."""

    path: str  # absolute: the git toplevel, or the directory itself
    name: str
    added_at: int = 0
    trusted: bool = False
    trusted_at: int | None = None  # when `xum trust` (or the UI) last granted trust


class NameTakenError(RegistryError):
    code = "name_taken"


@dataclass
class WorkspaceRecord:
    """A workspace (`config.json` `workspaces`); unknown keys are kept in `extra`."""

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
    # The `.xum/init` hook: None (none ran), "running", "succeeded", "failed", "timed_out",
    # "cancelled"; and its exit code once it ended.
    init_status: str | None = None
    init_exit_code: int | None = None
    # The permission mode its sessions run in (`auto`, `ask`, `read-only`); None: auto.
    permissions: str | None = None
    # Its block of TCP ports (`xum.store.port_alloc`); None: none given (the feature is off, or
    # the workspace predates it and was not opened since).
    ports: PortBlock | None = None
    # The external ACP agent (config.json `externalAgents`) that is the workspace's agent for
    # its whole life; None: xum's own engine.
    external_agent: str | None = None
    # That agent's ACP session id, kept so a restart resumes it (`session/load`).
    external_session: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> WorkspaceRecord:
        known = {f for f in cls.__dataclass_fields__}
        values = {k: v for k, v in data.items() if k in known and k != "extra"}
        if not isinstance(values.get("ports"), PortBlock):
            values["ports"] = PortBlock.from_json(values.get("ports"))
        record = cls(**values)
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


def _project_record(path: str, entry: dict[str, Any]) -> ProjectRecord:
    trusted_at = entry.get("trustedAt")
    return ProjectRecord(
        path=path,
        name=str(entry.get("name") or project_name(path)),
        added_at=int(entry.get("addedAt", 0)),
        trusted=entry.get("trusted") is True,
        trusted_at=int(trusted_at) if isinstance(trusted_at, int) else None,
    )


def _ensure_entry(config: dict[str, Any], path: str) -> dict[str, Any]:
    projects = _projects(config)
    entry = projects.get(path)
    if not isinstance(entry, dict):
        entry = {"name": project_name(path), "addedAt": now_ms(), "trusted": False}
        projects[path] = entry
    return entry


def ensure_project(path: str) -> ProjectRecord:
    """Register `path` as a project if it is not one yet; return its record."""
    return update_config(lambda config: _project_record(path, _ensure_entry(config, path)))


def get_project(path: str) -> ProjectRecord | None:
    entry = read_config().get("projects", {}).get(path)
    if not isinstance(entry, dict):
        return None
    return _project_record(path, entry)


def list_projects() -> list[ProjectRecord]:
    projects = load_config().get("projects", {})
    if not isinstance(projects, dict):
        return []
    return [_project_record(p, e) for p, e in sorted(projects.items()) if isinstance(e, dict)]


def set_project_trust(path: str, trusted: bool) -> tuple[ProjectRecord, bool]:
    """Record (or revoke) trust for a project, registering it if new. Returns the record and
    whether the project was registered by this call."""

    def mutate(config: dict[str, Any]) -> tuple[ProjectRecord, bool]:
        new = not isinstance(_projects(config).get(path), dict)
        entry = _ensure_entry(config, path)
        entry["trusted"] = trusted
        if trusted:
            entry["trustedAt"] = now_ms()
        else:
            entry.pop("trustedAt", None)
        return _project_record(path, entry), new

    return update_config(mutate)


def create_workspace(
    *,
    project_path: str,
    runtime: RuntimeName,
    name_hint: str,
    path_for: Any = None,
    title: str = "",
    exact_name: str | None = None,
    register_project: bool = False,
    **fields: Any,
) -> WorkspaceRecord:
    """Mint an id and a unique `<slug>-<suffix>` name, record the workspace, return the record.

    `path_for(name)` gives the workspace directory for a name (worktrees live under
    `$XUM_ROOT/src/<project>/<name>`); without it the workspace runs in the project directory.
    `exact_name` (a name the user chose, as in `/fork <name>`) is used as given, and refused with
    NameTakenError when another workspace of the project already has it. `register_project`
    registers the project too (`ensure_project`), in the same write. The workspace gets a free
    block of ports in the same write (so concurrent creates never share one) unless `fields`
    names its `ports` (a sub-agent sharing its parent's checkout shares its block too).
    """

    def mutate(config: dict[str, Any]) -> WorkspaceRecord:
        if register_project:
            _ensure_entry(config, project_path)
        workspaces = _workspaces(config)
        taken = _taken_names(workspaces)
        if exact_name is not None:
            if (project_path, exact_name) in taken:
                raise _name_taken(exact_name)
            name = exact_name
        else:
            for _ in range(100):
                name = workspace_name(name_hint, random_suffix())
                if (project_path, name) not in taken:
                    break
            else:  # pragma: no cover - 32^4 suffixes
                raise RegistryError(f"could not find a free workspace name for '{name_hint}'")
        new_id = workspace_id()
        while new_id in workspaces:  # pragma: no cover - 40 random bits
            new_id = workspace_id()
        given = dict(fields)
        if "ports" not in given:
            given["ports"] = allocate(port_settings(config), stored_blocks(workspaces))
        record = WorkspaceRecord(
            id=new_id,
            name=name,
            project_path=project_path,
            runtime=runtime,
            path=str(path_for(name)) if path_for else project_path,
            title=title,
            created_at=now_ms(),
            **given,
        )
        workspaces[new_id] = _to_config(record)
        return record

    return update_config(mutate)


def _taken_names(workspaces: dict[str, Any], *, but: str | None = None) -> set[tuple[Any, Any]]:
    return {
        (w.get("projectPath"), w.get("name"))
        for ws_id, w in workspaces.items()
        if isinstance(w, dict) and ws_id != but
    }


def _name_taken(name: str) -> NameTakenError:
    return NameTakenError(
        f"this project already has a workspace named '{name}'",
        hint="pick another name (`xum sessions` lists the workspaces)",
    )


def _to_config(record: WorkspaceRecord) -> dict[str, Any]:
    data = record.to_dict()
    # camelCase on disk, like the rest of config.json
    return {_camel(k): v for k, v in data.items()}


def _camel(key: str) -> str:
    head, *rest = key.split("_")
    return head + "".join(p.title() for p in rest)


@functools.lru_cache(maxsize=512)
def _snake(key: str) -> str:
    # Cached: every registry read converts every key of every record (a server lists the
    # workspaces of a project on each tool step of a local workspace).
    return "".join("_" + c.lower() if c.isupper() else c for c in key)


def _from_config(data: Mapping[str, Any]) -> WorkspaceRecord:
    record = WorkspaceRecord.from_dict({_snake(k): v for k, v in data.items()})
    if record.extra:  # keys of newer versions: the caller's own copy, not the shared snapshot's
        record.extra = copy.deepcopy(record.extra)
    return record


# The readers take the shared snapshot (`read_config`: parsed once per change of the file); the
# records they build are the caller's to change.
def get_workspace(ws_id: str) -> WorkspaceRecord | None:
    data = read_config().get("workspaces", {}).get(ws_id)
    return _from_config(data) if isinstance(data, dict) else None


def list_workspaces(project_path: str | None = None) -> list[WorkspaceRecord]:
    out = []
    for data in read_config().get("workspaces", {}).values():
        # Only the project's records are built: building one costs far more than this test.
        if isinstance(data, dict) and (
            project_path is None or data.get(_camel("project_path")) == project_path
        ):
            out.append(_from_config(data))
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


def rename_workspace(ws_id: str, new_name: str, **changes: Any) -> WorkspaceRecord:
    """Give a workspace a new name (and any other changed fields) in one locked update, refused
    with NameTakenError when another workspace of the same project holds the name."""

    def mutate(config: dict[str, Any]) -> WorkspaceRecord:
        workspaces = _workspaces(config)
        data = workspaces.get(ws_id)
        if not isinstance(data, dict):
            raise RegistryError(f"no workspace with id '{ws_id}'")
        record = _from_config(data)
        if (record.project_path, new_name) in _taken_names(workspaces, but=ws_id):
            raise _name_taken(new_name)
        record.name = new_name
        for key, value in changes.items():
            if not hasattr(record, key):
                raise RegistryError(f"unknown workspace field '{key}'")
            setattr(record, key, value)
        workspaces[ws_id] = _to_config(record)
        return record

    return update_config(mutate)


def assign_ports(ws_id: str) -> WorkspaceRecord:
    """Give a workspace that has no port block one, in one locked update (workspaces made
    before the feature, or while it was off, get theirs when next opened). A workspace that
    shares its parent's checkout takes the parent's block when the parent has one. Returns the
    record as stored; unchanged when it has a block or the feature is off."""

    def mutate(config: dict[str, Any]) -> WorkspaceRecord:
        workspaces = _workspaces(config)
        data = workspaces.get(ws_id)
        if not isinstance(data, dict):
            raise RegistryError(f"no workspace with id '{ws_id}'")
        record = _from_config(data)
        settings = port_settings(config)
        if record.ports is not None or not settings.enabled:
            return record
        parent = workspaces.get(record.parent_id) if record.parent_id else None
        if isinstance(parent, dict) and parent.get("path") == record.path:
            record.ports = PortBlock.from_json(parent.get("ports"))
        if record.ports is None:
            record.ports = allocate(settings, stored_blocks(workspaces, but=ws_id))
        if record.ports is not None:
            workspaces[ws_id] = _to_config(record)
        return record

    return update_config(mutate)


def remove_workspace(ws_id: str) -> None:
    update_config(lambda config: _workspaces(config).pop(ws_id, None))
