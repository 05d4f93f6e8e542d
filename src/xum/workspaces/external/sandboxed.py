"""How an external agent's process is started: inside xum's command sandbox, where it can.

The agent is another vendor's program. Unless its definition says `"sandbox": false`, it runs
in the same bubblewrap sandbox as xum's `bash` commands of the workspace (the layout comes from
`SandboxMiddleware.command_sandbox`, so the mode, the read denylist, the hidden `$XUM_ROOT` and
the hidden provider key files are the ones a command gets), with two differences:

* the network stays on whatever `sandbox.egress` says: the agent has to reach its own model
  provider;
* its own state directories are writable in both modes (`state_paths`): the built-in ones of
  the agents xum knows (picked by the words of its command line) and the definition's
  `writablePaths`. A missing one is made before the agent starts (a directory, or a JSON
  file as `{}`), since its parent is read-only inside the sandbox.

Where the workspace's sandbox applies and cannot be kept (bubblewrap missing or not working,
a malformed setting), the agent is not started: the error says why and how to go on. In the
`off` mode (and with `"sandbox": false`) the agent runs as the user. In a container workspace
no bubblewrap applies: the container is the boundary (`xum.workspaces.external.remote` starts
the agent there).
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import posixpath
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Literal

from xum.workspaces.external.connection import ExternalAgentError, Launch, resolve_command
from xum.workspaces.external.definitions import DOCS, ExternalAgentDefinition

if TYPE_CHECKING:
    from xum.runtime.sandbox import Layout
    from xum.workspaces.external.client import XumClient

# What a state path is when it is missing: a directory, or a JSON file (made as `{}`).
StateKind = Literal["dir", "json"]

# The state each known agent writes under its HOME (a name in its command line picks them).
# `~` is the agent's HOME; `$VAR|default`: the variable of the agent's environment when set
# (for XDG_*: the base directory, the last part of the default joined to it), else the default.
_KNOWN_STATE: dict[str, tuple[tuple[str, StateKind], ...]] = {
    # opencode: its sessions and storage, logs, the packages it installs for plugins and
    # providers (cache), and its global config directory, where it installs @opencode-ai/plugin.
    "opencode": (
        ("$XDG_DATA_HOME|~/.local/share/opencode", "dir"),
        ("$XDG_STATE_HOME|~/.local/state/opencode", "dir"),
        ("$XDG_CACHE_HOME|~/.cache/opencode", "dir"),
        ("$XDG_CONFIG_HOME|~/.config/opencode", "dir"),
    ),
    # Claude Code (claude-code-acp bundles it): its sessions, todos and settings in ~/.claude
    # (or $CLAUDE_CONFIG_DIR), its account and project state in ~/.claude.json, rewritten on
    # every start (it cannot make that file in a read-only HOME, and then every session/new
    # fails: made as `{}`, which it fills in; the timestamped backups it keeps beside it fail
    # and are only logged), its debug logs under the cache.
    "claude": (
        ("$CLAUDE_CONFIG_DIR|~/.claude", "dir"),
        ("~/.claude.json", "json"),
        ("$XDG_CACHE_HOME|~/.cache/claude-cli-nodejs", "dir"),
    ),
    "codex": (("$CODEX_HOME|~/.codex", "dir"),),  # its config, sessions and logs
    "gemini": (("~/.gemini", "dir"),),  # its settings, history and temp files
    "npx": (("~/.npm", "dir"),),  # an agent started through npx: npm's cache, where it unpacks
}
_WORD = re.compile(r"[a-z0-9]+")


def _known_agents(definition: ExternalAgentDefinition) -> list[str]:
    words: set[str] = set()
    # The program's own name (not the folders it is in), and every argument (`npx
    # @zed-industries/claude-code-acp`).
    for part in (posixpath.basename(definition.command), *definition.args):
        words.update(_WORD.findall(part.lower()))
    return [name for name in _KNOWN_STATE if name in words]


def _expand(spec: str, env: Mapping[str, str], home: str) -> str:
    if spec.startswith("$"):
        variable, _, default = spec[1:].partition("|")
        value = env.get(variable, "")
        if not value:
            return _expand(default, env, home)
        if variable.startswith("XDG_"):
            return posixpath.join(value, posixpath.basename(default))
        return value
    if spec == "~" or spec.startswith("~/"):
        return home + spec[1:]
    return spec


def state_paths(
    definition: ExternalAgentDefinition, env: Mapping[str, str], home: str
) -> list[tuple[str, StateKind]]:
    """(path, kind) of what the agent may write besides the workspace: the built-in state of
    the agents its command line names, then its definition's `writablePaths` (directories when
    missing). `env`: the agent's environment; `home`: its HOME."""
    found: list[tuple[str, StateKind]] = []
    for name in _known_agents(definition):
        for spec, kind in _KNOWN_STATE[name]:
            found.append((posixpath.normpath(_expand(spec, env, home)), kind))
    for spec in definition.writable_paths:
        found.append((posixpath.normpath(_expand(spec, env, home)), "dir"))
    seen: set[str] = set()
    unique = []
    for path, kind in found:
        if path not in seen and path.startswith("/"):
            seen.add(path)
            unique.append((path, kind))
    return unique


def refused(definition: ExternalAgentDefinition, mode: str, problem: str) -> ExternalAgentError:
    return ExternalAgentError(
        f'the external agent "{definition.display}" was not started: the workspace\'s sandbox '
        f"(mode {mode}) applies to it, and {problem}",
        hint="make the sandbox work (install bubblewrap), turn the workspace's sandbox off, or "
        f'set "sandbox": false under externalAgents.{definition.name} in config.json to trust '
        f"the agent with everything you can do ({DOCS})",
    )


async def agent_layout(
    definition: ExternalAgentDefinition,
    client: XumClient,
    state: list[tuple[str, StateKind]],
) -> Layout | None:
    """The sandbox the agent runs in, or None where it runs as the user (the definition opts
    out, or the workspace's sandbox is off). ExternalAgentError when the sandbox applies and
    cannot be kept."""
    if not definition.sandbox or client.sandbox is None:
        return None
    decided = await client.sandbox.command_sandbox(client.tool_context("external-agent"))
    if decided.problem is not None:
        raise refused(definition, decided.mode, decided.problem)
    if decided.kind == "container" and decided.mode == "read-only":
        # The container keeps xum's commands read-only by running them as an unprivileged user
        # that cannot write the checkout; an agent run so could not keep its own state either.
        raise refused(
            definition,
            decided.mode,
            "a container workspace cannot keep an agent read-only (its commands run as an "
            "unprivileged user there, which would have no state of its own)",
        )
    if decided.layout is None:
        return None  # off, or a container (the boundary is the container itself)
    writable = tuple(path for path, _ in state)
    # The agent reaches its own model provider: the network stays on.
    return dataclasses.replace(decided.layout, egress="shared", always_writable=writable)


def make_local_state(state: list[tuple[str, StateKind]]) -> None:
    """Make the agent's missing state (read-only parents inside the sandbox would keep it from
    making it itself): directories, and JSON files as `{}`. A path that cannot be made is left
    out of the sandbox (the agent then says what fails)."""
    for path, kind in state:
        with contextlib.suppress(OSError):
            if kind == "dir":
                os.makedirs(path, mode=0o700, exist_ok=True)
            elif kind == "json" and not os.path.lexists(path):
                os.makedirs(os.path.dirname(path), exist_ok=True)
                with open(path, "x", encoding="utf-8") as made:
                    made.write("{}\n")
                os.chmod(path, 0o600)


def local_argv(layout: Layout | None, program: str, args: tuple[str, ...], cwd: str) -> list[str]:
    """The local command line: `bwrap ... -- program args` in the sandbox, else the program."""
    if layout is None:
        return [program, *args]
    from xum.runtime.sandbox import argv_for, mount_plan

    if layout.temp_dir is not None:
        os.makedirs(layout.temp_dir, mode=0o700, exist_ok=True)
    return [*argv_for(mount_plan(layout, cwd=cwd)), program, *args]


async def local_launch(
    definition: ExternalAgentDefinition, env: Mapping[str, str], cwd: str, client: XumClient
) -> Launch | None:
    """How the agent starts on this machine: in the sandbox (`bwrap ... -- program args`), or
    None where it runs as the user (the plain program)."""
    import asyncio

    home = env.get("HOME") or os.path.expanduser("~")
    state = state_paths(definition, env, home)
    layout = await agent_layout(definition, client, state)
    if layout is None:
        return None
    program = resolve_command(definition, env)
    await asyncio.to_thread(make_local_state, state)
    return Launch(local_argv(layout, program, definition.args, cwd), cwd, env)
