"""MCP settings: the servers of `~/.xum/mcp.jsonc` and of a project's `.xum/mcp.jsonc`, tool
search, the Test button, and one workspace's overrides (`.xum/mcp.local.jsonc`).

Edits change the file in place (`xum.server.jsonc_edit`): comments, layout and other keys stay,
a file that does not parse is refused untouched, and the result must read back as a valid MCP
config. Environment and header values are write-only, like provider keys: listings name them
and never show them; an edit that sends `null` for one keeps its current value. A repository's
servers are listed whatever the trust, but the Test button runs one only in a trusted project.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from fastapi import APIRouter, Query, Request
from pydantic import BaseModel, Field

from xum.server.config_edit import edit_config_file
from xum.server.errors import ApiError, not_found
from xum.server.hosting import workspace_or_404
from xum.server.routes.projects import known_project
from xum.server.state import get_state
from xum.workspaces.mcp import config as mc
from xum.workspaces.mcp import paths as mp

router = APIRouter(tags=["mcp"])
Scope = Literal["global", "repo"]
MAX_PATH = 4096


class McpServerRow(BaseModel):
    name: str
    scope: Scope
    transport: Literal["stdio", "http"]
    command: str | None
    url: str | None
    envNames: list[str]  # values are write-only
    headerNames: list[str]
    timeoutSecs: float


class McpFile(BaseModel):
    path: str
    servers: list[McpServerRow]
    problems: list[str]  # parse errors (file:line:column) and skipped entries


class RepoMcpFile(McpFile):
    project: str
    trusted: bool


class McpSettings(BaseModel):
    toolSearch: bool
    globalConfig: McpFile
    repo: RepoMcpFile | None


class McpServerBody(BaseModel):
    name: str = Field(min_length=1, max_length=64)
    scope: Scope = "global"
    project: str | None = Field(default=None, max_length=MAX_PATH)
    command: str | None = Field(default=None, max_length=16384)
    url: str | None = Field(default=None, max_length=4096)
    env: dict[str, str | None] | None = None  # null value: keep the current one
    headers: dict[str, str | None] | None = None
    timeoutSecs: float | None = None


class ToolSearchBody(BaseModel):
    enabled: bool


class TestBody(BaseModel):
    name: str = Field(min_length=1, max_length=64)
    scope: Scope = "global"
    project: str | None = Field(default=None, max_length=MAX_PATH)


class TestTool(BaseModel):
    name: str
    description: str


class TestResult(BaseModel):
    ok: bool
    error: str | None = None
    tools: list[TestTool] = []
    prompts: list[str] = []


class OverrideRow(BaseModel):
    name: str
    scope: Scope
    enabled: bool
    allowedTools: list[str] | None  # None: every tool
    status: str | None  # the open session's view: ready, idle, failed, ... (None: no session)
    error: str | None
    tools: int | None


class OverrideEntry(BaseModel):
    enabled: bool | None = None
    allowedTools: list[str] | None = None


class WorkspaceMcp(BaseModel):
    path: str
    servers: list[OverrideRow]
    withheld: list[str]  # repo servers of an untrusted project
    problems: list[str]


class WorkspaceMcpBody(BaseModel):
    servers: dict[str, OverrideEntry]


# Reading --------------------------------------------------------------------------------------


def _rows(servers: dict[str, mc.ServerSpec]) -> list[McpServerRow]:
    return [
        McpServerRow(
            name=s.name,
            scope=s.scope,
            transport="http" if s.url is not None else "stdio",
            command=s.command,
            url=s.url,
            envNames=[k for k, _ in s.env],
            headerNames=[k for k, _ in s.headers],
            timeoutSecs=s.timeout_s,
        )
        for s in sorted(servers.values(), key=lambda s: s.name)
    ]


def _read_global() -> tuple[McpFile, bool, dict[str, mc.ServerSpec]]:
    path = mp.global_path()
    problems: list[str] = []
    data, problem = mc.read_file(path)
    if problem:
        problems.append(problem)
    servers, search = mc.parse_global(data, path=str(path), problems=problems)
    return McpFile(path=str(path), servers=_rows(servers), problems=problems), search, servers


def _read_repo(project: str) -> tuple[RepoMcpFile, dict[str, mc.ServerSpec]]:
    from xum.workspaces.safety.trust import project_automation_allowed

    path = mp.repo_path(project)
    problems: list[str] = []
    data, problem = mc.read_file(path)
    if problem:
        problems.append(problem)
    servers = mc.parse_repo(data, path=str(path), problems=problems)
    listing = RepoMcpFile(
        path=str(path),
        servers=_rows(servers),
        problems=problems,
        project=project,
        trusted=project_automation_allowed(project),
    )
    return listing, servers


def settings_now(project: str | None) -> McpSettings:
    listing, search, _ = _read_global()
    repo = _read_repo(known_project(project).path)[0] if project else None
    return McpSettings(toolSearch=search, globalConfig=listing, repo=repo)


def _file_for(scope: Scope, project: str | None) -> Path:
    if scope == "global":
        return mp.global_path()
    if not project:
        raise ApiError(422, "invalid_request", "project: required for a repo server")
    return mp.repo_path(known_project(project).path)


# Editing --------------------------------------------------------------------------------------


def change_file(path: Path, edit: Callable[[Any], str], check: Callable[[str], None]) -> None:
    edit_config_file(path, edit, check, purpose="mcp config write")


def _entry(body: McpServerBody, current: mc.ServerSpec | None) -> Any:
    """The JSON value to store for `body`, keeping write-only values sent as null."""

    def merged(given: dict[str, str | None] | None, old: tuple[tuple[str, str], ...]) -> Any:
        known = dict(old)
        out: dict[str, str] = {}
        for key, value in (given or {}).items():
            if value is not None:
                out[key] = value
            elif key in known:
                out[key] = known[key]
            else:
                raise ApiError(422, "invalid_request", f"{key}: a new value needs a value")
        return out

    if (body.command is None) == (body.url is None):
        raise ApiError(422, "invalid_request", "give exactly one of command (stdio) or url (HTTP)")
    keep = (
        current
        if current is not None
        and current.transport == ("http" if body.url is not None else "stdio")
        else None
    )
    value: dict[str, Any]
    if body.url is not None:
        value = {"url": body.url}
        headers = merged(body.headers, keep.headers if keep else ())
        if headers:
            value["headers"] = headers
    else:
        env = merged(body.env, keep.env if keep else ())
        if not env and body.timeoutSecs is None:
            return body.command  # the plain form the docs show
        value = {"command": body.command}
        if env:
            value["env"] = env
    if body.timeoutSecs is not None:
        value["timeoutSecs"] = _seconds(body.timeoutSecs)
    return value


def _seconds(value: float) -> int | float:
    """A whole number of seconds as an integer: the request's `30` arrives as 30.0 (the body's
    type is float) and must be written back as the user wrote it."""
    return int(value) if value.is_integer() else value


def _checker(scope: Scope, path: Path) -> Callable[[str], None]:
    def check(text: str) -> None:
        from xum.core.jsonc import parse_jsonc

        problems: list[str] = []
        data = parse_jsonc(text, path=str(path))
        if scope == "global":
            mc.parse_global(data, path=str(path), problems=problems)
        else:
            mc.parse_repo(data, path=str(path), problems=problems)
        if problems:
            raise ApiError(422, "config_error", "; ".join(problems))

    return check


@router.get("/api/settings/mcp", response_model=McpSettings)
async def get_mcp(
    project: str | None = Query(default=None, min_length=1, max_length=MAX_PATH),
) -> McpSettings:
    return await asyncio.to_thread(settings_now, project)


@router.put("/api/settings/mcp/servers", response_model=McpSettings)
async def put_server(body: McpServerBody) -> McpSettings:
    if not mc.NAME_RE.match(body.name):
        raise ApiError(422, "invalid_request", "name: 1-64 letters, digits, '_', '-' or '.'")

    def work() -> McpSettings:
        path = _file_for(body.scope, body.project)
        current = (
            _read_global()[2] if body.scope == "global" else _read_repo(str(path.parents[1]))[1]
        ).get(body.name)
        value = _entry(body, current)
        try:
            mc.parse_entry(body.name, value, body.scope)
        except ValueError as exc:
            raise ApiError(422, "invalid_request", str(exc)) from None
        change_file(
            path, lambda doc: doc.set(["servers", body.name], value), _checker(body.scope, path)
        )
        return settings_now(body.project)

    return await asyncio.to_thread(work)


@router.delete("/api/settings/mcp/servers", response_model=McpSettings)
async def delete_server(
    name: str = Query(min_length=1, max_length=64),
    scope: Scope = "global",
    project: str | None = Query(default=None, max_length=MAX_PATH),
) -> McpSettings:
    def work() -> McpSettings:
        path = _file_for(scope, project)
        data, problem = mc.read_file(path)
        if problem:
            raise ApiError(422, "config_error", problem, "fix the file by hand first")
        servers = data.get("servers") if isinstance(data, dict) else None
        if not isinstance(servers, dict) or name not in servers:
            raise not_found(f"no {scope} MCP server named {name!r}")
        change_file(path, lambda doc: doc.delete(["servers", name]), _checker(scope, path))
        return settings_now(project)

    return await asyncio.to_thread(work)


@router.put("/api/settings/mcp/tool-search", response_model=McpSettings)
async def put_tool_search(body: ToolSearchBody) -> McpSettings:
    def work() -> McpSettings:
        path = mp.global_path()
        change_file(
            path, lambda doc: doc.set(["toolSearch"], body.enabled), _checker("global", path)
        )
        return settings_now(None)

    return await asyncio.to_thread(work)


@router.post("/api/settings/mcp/test", response_model=TestResult)
async def test_server(body: TestBody) -> TestResult:
    """Start the saved server, list what it offers and stop it; the error is the answer's."""
    from xum.core.ownsecrets import without_own_secrets
    from xum.workspaces.mcp.probe import probe_server
    from xum.workspaces.safety.masking import SecretMasker
    from xum.workspaces.wiring import project_secrets

    def find() -> tuple[mc.ServerSpec, str, dict[str, str]]:
        if body.scope == "global":
            servers = _read_global()[2]
            cwd = known_project(body.project).path if body.project else str(Path.home())
        else:
            listing, servers = _read_repo(known_project(body.project or "").path)
            if not listing.trusted:
                raise ApiError(
                    409,
                    "untrusted_project",
                    "this project is not trusted, so its MCP servers do not run",
                    "review .xum/mcp.jsonc, then trust the project (xum trust)",
                )
            cwd = listing.project
        spec = servers.get(body.name)
        if spec is None:
            raise not_found(f"no {body.scope} MCP server named {body.name!r}")
        secrets = project_secrets(cwd) if body.project else {}
        return spec, cwd, secrets

    spec, cwd, secrets = await asyncio.to_thread(find)
    # As in a session: xum's environment less its own keys and token, then the project's
    # secrets (the entry's own `env` is laid over both by the probe).
    env = {**without_own_secrets(os.environ), **secrets}
    result = await probe_server(spec, cwd=cwd, env=env, mask=SecretMasker(secrets).mask)
    return TestResult(**result)


# One workspace's overrides --------------------------------------------------------------------


def _workspace_mcp(workspace_id: str, request: Request) -> WorkspaceMcp:
    from xum.core.pathtext import checkout_root
    from xum.workspaces.safety.trust import project_automation_allowed

    record = workspace_or_404(workspace_id)
    workspace = record.path
    root = checkout_root(workspace, record.project_path)
    config = mc.load_config(
        mp.global_path(),
        mp.repo_path(root),
        mp.local_path(workspace),
        trusted=project_automation_allowed(record.project_path),
    )
    host = get_state(request).hosts.get(workspace_id)
    manager = host.parts.mcp if host is not None and host.parts is not None else None
    states = {s.name: s for s in manager.states()} if manager is not None else {}
    rows = []
    for spec, enabled in [
        *((s, True) for s in config.servers),
        *((s, False) for s in config.disabled),
    ]:
        override = config.overrides.get(spec.name)
        state = states.get(spec.name)
        rows.append(
            OverrideRow(
                name=spec.name,
                scope=spec.scope,
                enabled=enabled,
                allowedTools=list(override.allowed_tools)
                if override is not None and override.allowed_tools is not None
                else None,
                status=state.status if state is not None else None,
                error=state.error if state is not None else None,
                tools=state.tools if state is not None else None,
            )
        )
    rows.sort(key=lambda r: r.name)
    return WorkspaceMcp(
        path=str(mp.local_path(workspace)),
        servers=rows,
        withheld=list(config.withheld),
        problems=list(config.problems),
    )


@router.get("/api/workspaces/{workspace_id}/mcp", response_model=WorkspaceMcp)
async def get_workspace_mcp(workspace_id: str, request: Request) -> WorkspaceMcp:
    return await asyncio.to_thread(_workspace_mcp, workspace_id, request)


@router.put("/api/workspaces/{workspace_id}/mcp", response_model=WorkspaceMcp)
async def put_workspace_mcp(
    workspace_id: str, body: WorkspaceMcpBody, request: Request
) -> WorkspaceMcp:
    """Replace the workspace's overrides; the file is added to `.git/info/exclude`. The open
    session picks the change up with the next message (hot reload)."""
    import orjson

    from xum.workspaces.mcp.overrides import write_overrides

    record = workspace_or_404(workspace_id)
    servers: dict[str, Any] = {}
    for name, entry in sorted(body.servers.items()):
        if not mc.NAME_RE.match(name):
            raise ApiError(422, "invalid_request", f"servers.{name}: not a server name")
        value: dict[str, Any] = {}
        if entry.enabled is not None:
            value["enabled"] = entry.enabled
        if entry.allowedTools is not None:
            value["allowedTools"] = entry.allowedTools
        if value:
            servers[name] = value
    text = (
        "// This workspace's MCP settings (written by xum; not committed).\n"
        + orjson.dumps({"servers": servers}, option=orjson.OPT_INDENT_2).decode()
        + "\n"
    )
    await asyncio.to_thread(write_overrides, record.path, text)
    return await asyncio.to_thread(_workspace_mcp, workspace_id, request)
