"""config.json `externalAgents`: the ACP agents of other vendors a workspace may run.

Shape::

    "externalAgents": {
      "opencode": {
        "command": "opencode",
        "args": ["acp"],
        "env": {"OPENCODE_CONFIG": "/path/x.json"},
        "label": "opencode",
        "models": ["fake/model-a"],
        "writablePaths": ["~/.opencode-extra"],
        "sandbox": true
      }
    }

A name is what `xum run --external-agent NAME` and a workspace's record (`externalAgent`) use.
Names cannot be the ids of xum's own agents (exec, plan, ...), so one word never means two
agents. Every problem raises a ConfigError that names the entry and what to write instead.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from xum.core.errors import ConfigError, UsageError

CONFIG_KEY = "externalAgents"
DOCS = "docs/external-agents.md"
HINT = (
    f'write "{CONFIG_KEY}": {{"<name>": {{"command": "<program>", "args": [...]}}}} in '
    f"config.json ({DOCS})"
)
NAME_RE = re.compile(r"[a-z0-9][a-z0-9_-]*")
_FIELDS = frozenset({"command", "args", "env", "label", "models", "writablePaths", "sandbox"})


@dataclass(frozen=True)
class ExternalAgentDefinition:
    """How to start one external ACP agent."""

    name: str
    command: str  # a program looked up on PATH, or an absolute path
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)  # added to the agent's environment
    label: str = ""
    models: tuple[str, ...] = ()  # the models it may be asked for (empty: its own choice)
    # Where the agent keeps its own state, writable in xum's sandbox over the built-in
    # defaults (`xum.workspaces.external.sandboxed`): absolute, or `~/...` (the agent's HOME).
    writable_paths: tuple[str, ...] = ()
    sandbox: bool = True  # False: the agent runs outside xum's sandbox, with the user's rights

    @property
    def display(self) -> str:
        return self.label or self.name


def reserved_names() -> frozenset[str]:
    """The ids of xum's own built-in agents (an external agent may not take one)."""
    import xum.context

    folder = Path(xum.context.__file__).parent / "builtin_agents"
    names = {p.stem for p in folder.glob("*.md")}
    return frozenset(names | {"build", "exec", "plan"})


def _fail(message: str) -> ConfigError:
    return ConfigError(f'"{CONFIG_KEY}" {message}', path="config.json", hint=HINT)


def _strings(value: Any, where: str) -> tuple[str, ...]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise _fail(f"{where} must be a list of strings")
    return tuple(value)


def parse_definition(name: str, raw: Any) -> ExternalAgentDefinition:
    """One entry, checked."""
    where = f'entry "{name}"'
    if not NAME_RE.fullmatch(name):
        raise _fail(
            f"{where}: a name is lower-case letters, digits, '-' and '_', starting with a "
            "letter or digit"
        )
    if name in reserved_names():
        raise _fail(
            f'{where}: "{name}" is one of xum\'s own agents; give the external one another name'
        )
    if not isinstance(raw, Mapping):
        raise _fail(f'{where} must be an object with at least "command"')
    unknown = sorted(set(raw) - _FIELDS)
    if unknown:
        raise _fail(
            f"{where}: unknown field(s) {', '.join(unknown)} (known: {', '.join(sorted(_FIELDS))})"
        )
    command = raw.get("command")
    if not isinstance(command, str) or not command.strip():
        raise _fail(
            f'{where}: "command" must be the program to start (a name on PATH or an absolute path)'
        )
    env_raw = raw.get("env", {})
    if not isinstance(env_raw, Mapping) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in env_raw.items()
    ):
        raise _fail(f'{where}: "env" must be an object of string values')
    label = raw.get("label", "")
    if not isinstance(label, str):
        raise _fail(f'{where}: "label" must be a string')
    writable = _strings(raw.get("writablePaths", []), f'{where}: "writablePaths"')
    for path in writable:
        if not (path.startswith("/") or path == "~" or path.startswith("~/")):
            raise _fail(f'{where}: "writablePaths": {path!r} is not an absolute path or ~/...')
    sandbox = raw.get("sandbox", True)
    if not isinstance(sandbox, bool):
        raise _fail(f'{where}: "sandbox" must be true or false')
    return ExternalAgentDefinition(
        name=name,
        writable_paths=writable,
        sandbox=sandbox,
        command=command,
        args=_strings(raw.get("args", []), f'{where}: "args"'),
        env=dict(env_raw),
        label=label,
        models=_strings(raw.get("models", []), f'{where}: "models"'),
    )


def external_agents(config: Mapping[str, Any]) -> dict[str, ExternalAgentDefinition]:
    """Every definition of `config` (config.json as read), by name."""
    raw = config.get(CONFIG_KEY)
    if raw is None:
        return {}
    if not isinstance(raw, Mapping):
        raise _fail("must be an object mapping a name to a definition")
    return {str(name): parse_definition(str(name), entry) for name, entry in raw.items()}


def definition_for(name: str, config: Mapping[str, Any] | None = None) -> ExternalAgentDefinition:
    """The definition named `name`; UsageError listing the configured names when none is."""
    if config is None:
        from xum.store.config import read_config

        config = read_config()
    known = external_agents(config)
    found = known.get(name)
    if found is None:
        listed = ", ".join(sorted(known)) or "none"
        raise UsageError(
            f'no external agent "{name}" in config.json (configured: {listed})',
            hint=f'add it under "{CONFIG_KEY}" in config.json; {DOCS} shows how for each agent',
        )
    return found


def check_creation(name: str) -> ExternalAgentDefinition:
    """What every front-end checks before it creates a workspace whose agent is `name`: the
    definition exists (UsageError listing the configured ones if not). Every runtime runs
    one: here, on an SSH host, or in a Docker or Dev Container workspace's container."""
    return definition_for(name)


def refuse_engine_settings(external_agent: str | None, fields: list[str]) -> None:
    """A workspace whose agent is external has no model, thinking level or xum agent to change
    (`fields`: those asked for): a UsageError naming them, rather than a setting stored and
    never used. Nothing for a workspace of xum's own engine."""
    if external_agent is None or not fields:
        return
    raise UsageError(
        f"{', '.join(fields)}: not available in this workspace: its agent is the external "
        f'agent "{external_agent}", which picks its own model and runs its own loop',
        hint="change these in the external agent's own configuration",
    )
