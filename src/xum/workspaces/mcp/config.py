"""The MCP config files: what servers a workspace has, and the overrides that narrow them.

Three files, all JSONC (comments and trailing commas allowed; a parse error names
file:line:column):

* `$XUM_ROOT/mcp.jsonc` (global): `{"servers": {...}, "toolSearch": true}`.
* `<checkout>/.xum/mcp.jsonc` (repo): `{"servers": {...}}`, read only when the project is
  trusted (a repository must not start processes on a checkout nobody vouched for). A server
  named here replaces the global server of the same name.
* `<workspace>/.xum/mcp.local.jsonc` (this workspace only):
  `{"servers": {"<name>": {"enabled": false, "allowedTools": ["tool", ...]}}}`. It can only turn
  servers off or narrow their tools, so it is read whatever the trust.

A server entry is a shell command (a string: a stdio server speaking newline-delimited JSON-RPC),
or an object: `{"command": "...", "env": {"NAME": "value"}}` for a stdio server with extra
environment, `{"url": "http(s)://...", "headers": {"Name": "value"}}` for a streamable-HTTP
server with static headers; both object forms take `"timeoutSecs"` (how long one tool call may
take, default 300). Server names are 1-64 characters of letters, digits, `_`, `-` and `.`.

A file that does not parse is ignored as a whole and reported; one bad entry is skipped and
reported while the others work. `load()` re-reads only the files whose stat signature changed,
so calling it before every request costs a few `stat` calls.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xum.core.errors import ConfigError
from xum.tools.mcp_host import ServerScope
from xum.workspaces.mcp.paths import global_path, local_path, repo_path

DEFAULT_CALL_TIMEOUT_S = 300.0
MAX_CALL_TIMEOUT_S = 24 * 3600.0
NAME_RE = re.compile(r"^[A-Za-z0-9_.-]{1,64}$")
_GLOBAL_KEYS = frozenset({"servers", "toolSearch", "enabledPluginServers"})
_REPO_KEYS = frozenset({"servers"})
_STDIO_KEYS = frozenset({"command", "env", "timeoutSecs"})
_HTTP_KEYS = frozenset({"url", "headers", "timeoutSecs"})
_OVERRIDE_KEYS = frozenset({"enabled", "allowedTools"})


@dataclass(frozen=True, slots=True)
class ServerSpec:
    """One configured server. Equal specs mean the running process can be kept."""

    name: str
    scope: ServerScope
    command: str | None = None  # stdio: run with bash -c in the workspace directory
    env: tuple[tuple[str, str], ...] = ()
    url: str | None = None  # streamable HTTP
    headers: tuple[tuple[str, str], ...] = ()
    timeout_s: float = DEFAULT_CALL_TIMEOUT_S

    @property
    def transport(self) -> str:
        return "http" if self.url is not None else "stdio"

    def describe(self) -> str:
        """What runs, for the UI (header and environment values are not shown)."""
        return self.url if self.url is not None else (self.command or "")


@dataclass(frozen=True, slots=True)
class Override:
    """What `.xum/mcp.local.jsonc` says about one server."""

    enabled: bool | None = None
    allowed_tools: tuple[str, ...] | None = None  # None: every tool


@dataclass(frozen=True, slots=True)
class McpConfig:
    """The merged view of the three files for one workspace."""

    servers: tuple[ServerSpec, ...] = ()  # enabled servers, by name
    disabled: tuple[ServerSpec, ...] = ()  # turned off by the workspace's overrides
    withheld: tuple[str, ...] = ()  # repo servers not started: the project is not trusted
    overrides: Mapping[str, Override] = field(default_factory=dict)
    tool_search: bool = True
    problems: tuple[str, ...] = ()  # one line each, naming the file

    @property
    def empty(self) -> bool:
        return not self.servers and not self.disabled and not self.withheld


EMPTY_CONFIG = McpConfig()


# Parsing ---------------------------------------------------------------------------------------


def read_file(path: Path) -> tuple[Any, str | None]:
    """(the parsed document or None, the problem or None). Missing or blank: (None, None)."""
    from xum.core.jsonc import load_jsonc_file

    try:
        return load_jsonc_file(path), None
    except ConfigError as exc:
        return None, exc.message


def parse_servers(
    data: Any, *, path: str, scope: ServerScope, problems: list[str]
) -> dict[str, ServerSpec]:
    """The `servers` object of a global or repo file; bad entries are skipped and reported."""
    if data is None:
        return {}
    if not isinstance(data, dict):
        problems.append(f"{path}: `servers` must be an object mapping names to commands")
        return {}
    out: dict[str, ServerSpec] = {}
    for name, entry in data.items():
        where = f"{path}: servers.{name}"
        if not NAME_RE.match(name):
            problems.append(
                f"{where}: a server name is 1-64 letters, digits, '_', '-' or '.'; skipped"
            )
            continue
        try:
            out[name] = parse_entry(name, entry, scope)
        except ValueError as exc:
            problems.append(f"{where}: {exc}; skipped")
    return out


def parse_entry(name: str, entry: Any, scope: ServerScope) -> ServerSpec:
    """One server entry; ValueError says what is wrong with it."""
    if isinstance(entry, str):
        if not entry.strip():
            raise ValueError("the command is empty")
        return ServerSpec(name, scope, command=entry)
    if not isinstance(entry, dict):
        raise ValueError(
            'expected a shell command string, {"command": ..., "env": {...}} or '
            '{"url": ..., "headers": {...}}'
        )
    timeout = _timeout(entry.get("timeoutSecs"))
    if "url" in entry:
        _no_extra(entry, _HTTP_KEYS)
        url = entry["url"]
        if not isinstance(url, str) or not re.match(r"^https?://[^\s/]+", url):
            raise ValueError("`url` must be an http:// or https:// URL")
        headers = _string_map(entry.get("headers"), "headers")
        return ServerSpec(name, scope, url=url, headers=headers, timeout_s=timeout)
    if "command" in entry:
        _no_extra(entry, _STDIO_KEYS)
        command = entry["command"]
        if not isinstance(command, str) or not command.strip():
            raise ValueError("`command` must be a non-empty shell command string")
        env = _string_map(entry.get("env"), "env")
        return ServerSpec(name, scope, command=command, env=env, timeout_s=timeout)
    raise ValueError('an object entry needs "command" (stdio) or "url" (streamable HTTP)')


def _no_extra(entry: dict[str, Any], allowed: frozenset[str]) -> None:
    extra = sorted(set(entry) - allowed)
    if extra:
        raise ValueError(
            f"unknown key{'s' if len(extra) > 1 else ''} {', '.join(extra)} "
            f"(allowed: {', '.join(sorted(allowed))})"
        )


def _string_map(value: Any, key: str) -> tuple[tuple[str, str], ...]:
    if value is None:
        return ()
    if not isinstance(value, dict) or not all(isinstance(v, str) for v in value.values()):
        raise ValueError(f"`{key}` must be an object of string values")
    return tuple(sorted(value.items()))


def _timeout(value: Any) -> float:
    if value is None:
        return DEFAULT_CALL_TIMEOUT_S
    if isinstance(value, bool) or not isinstance(value, int | float) or value <= 0:
        raise ValueError("`timeoutSecs` must be a positive number of seconds")
    return min(float(value), MAX_CALL_TIMEOUT_S)


def parse_overrides(data: Any, *, path: str, problems: list[str]) -> dict[str, Override]:
    if data is None:
        return {}
    if not isinstance(data, dict) or not isinstance(data.get("servers", {}), dict):
        problems.append(f'{path}: expected {{"servers": {{"<name>": {{"enabled": ...}}}}}}')
        return {}
    extra = sorted(set(data) - {"servers"})
    if extra:
        problems.append(f"{path}: unknown key(s) {', '.join(extra)} ignored")
    out: dict[str, Override] = {}
    for name, entry in data.get("servers", {}).items():
        where = f"{path}: servers.{name}"
        if not isinstance(entry, dict) or set(entry) - _OVERRIDE_KEYS:
            problems.append(f'{where}: expected {{"enabled": bool, "allowedTools": [...]}}')
            continue
        enabled = entry.get("enabled")
        tools = entry.get("allowedTools")
        if enabled is not None and not isinstance(enabled, bool):
            problems.append(f"{where}.enabled: expected true or false")
            continue
        if tools is not None and (
            not isinstance(tools, list) or not all(isinstance(t, str) for t in tools)
        ):
            problems.append(f"{where}.allowedTools: expected a list of tool names")
            continue
        out[name] = Override(enabled, tuple(tools) if tools is not None else None)
    return out


def parse_global(
    data: Any, *, path: str, problems: list[str]
) -> tuple[dict[str, ServerSpec], bool]:
    """(servers, toolSearch) of the global file."""
    if data is None:
        return {}, True
    if not isinstance(data, dict):
        problems.append(f'{path}: expected an object like {{"servers": {{...}}}}')
        return {}, True
    _unknown(data, _GLOBAL_KEYS, path, problems)
    search = data.get("toolSearch", True)
    if not isinstance(search, bool):
        problems.append(f"{path}: `toolSearch` must be true or false; using true")
        search = True
    return parse_servers(data.get("servers"), path=path, scope="global", problems=problems), search


def parse_repo(data: Any, *, path: str, problems: list[str]) -> dict[str, ServerSpec]:
    if data is None:
        return {}
    if not isinstance(data, dict):
        problems.append(f'{path}: expected an object like {{"servers": {{...}}}}')
        return {}
    if "toolSearch" in data:
        problems.append(f"{path}: `toolSearch` is read from {global_path()} only; ignored here")
    _unknown(data, _REPO_KEYS | {"toolSearch"}, path, problems)
    return parse_servers(data.get("servers"), path=path, scope="repo", problems=problems)


def _unknown(data: dict[str, Any], known: frozenset[str], path: str, problems: list[str]) -> None:
    extra = sorted(set(data) - known)
    if extra:
        problems.append(f"{path}: unknown key(s) {', '.join(extra)} ignored")


def merge(
    global_servers: Mapping[str, ServerSpec],
    repo_servers: Mapping[str, ServerSpec],
    *,
    trusted: bool,
    overrides: Mapping[str, Override],
    tool_search: bool,
    problems: tuple[str, ...],
) -> McpConfig:
    """Repo entries replace global ones of the same name (trusted projects only); the
    workspace's overrides then turn servers off."""
    merged = dict(global_servers)
    withheld: list[str] = []
    if trusted:
        merged.update(repo_servers)
    else:
        withheld = sorted(repo_servers)
    enabled: list[ServerSpec] = []
    disabled: list[ServerSpec] = []
    for name in sorted(merged):
        override = overrides.get(name)
        (disabled if override is not None and override.enabled is False else enabled).append(
            merged[name]
        )
    return McpConfig(
        servers=tuple(enabled),
        disabled=tuple(disabled),
        withheld=tuple(withheld),
        overrides=dict(overrides),
        tool_search=tool_search,
        problems=problems,
    )


# Loading with signatures ------------------------------------------------------------------------

Signature = tuple[int, int, int] | None


def _signature(path: Path) -> Signature:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size, st.st_ino)


class ConfigLoader:
    """The merged config of one workspace, re-read only when a file (or the trust) changed.

    `trusted` is asked on every `load`: trust given or revoked in another process takes effect
    on the next message.
    """

    def __init__(
        self,
        *,
        checkout_root: str,
        workspace_path: str,
        trusted: Any,  # Callable[[], bool]
    ) -> None:
        self.paths = (global_path(), repo_path(checkout_root), local_path(workspace_path))
        self._trusted = trusted
        self._key: tuple[Any, ...] | None = None
        self._config: McpConfig = EMPTY_CONFIG

    def load(self) -> McpConfig:
        sigs = tuple(_signature(p) for p in self.paths)
        if all(s is None for s in sigs):
            self._key, self._config = None, EMPTY_CONFIG
            return EMPTY_CONFIG
        # Trust matters only when the repo file exists.
        trusted = bool(self._trusted()) if sigs[1] is not None else False
        key = (sigs, trusted)
        if key == self._key:
            return self._config
        self._key = key
        self._config = load_config(*self.paths, trusted=trusted)
        return self._config


def load_config(
    global_file: Path, repo_file: Path, local_file: Path, *, trusted: bool
) -> McpConfig:
    problems: list[str] = []
    data, problem = read_file(global_file)
    if problem:
        problems.append(problem)
    global_servers, search = parse_global(data, path=str(global_file), problems=problems)
    repo_servers: dict[str, ServerSpec] = {}
    data, problem = read_file(repo_file)
    if problem:
        problems.append(problem)
    else:
        repo_servers = parse_repo(data, path=str(repo_file), problems=problems)
    data, problem = read_file(local_file)
    if problem:
        problems.append(problem)
    overrides = parse_overrides(data, path=str(local_file), problems=problems)
    return merge(
        global_servers,
        repo_servers,
        trusted=trusted,
        overrides=overrides,
        tool_search=search,
        problems=tuple(problems),
    )
