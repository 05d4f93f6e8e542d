"""The one command layer: which chat commands each front-end offers, and how a workspace command
is carried out, for every front-end.

Chat commands (`xum.context.slash`) come in two kinds. Session commands (`/compact`, `/clear`,
`/goal`) run in the session like a message: the host sends the text, the engine carries them
out (`engine.dispatch`), so every front-end that can send a message has them. Workspace commands
(`/model`, `/fork`, `/idle`) change the workspace or its project and send nothing to a model;
`apply` carries them out here.

`OFFERED` is the one table of which command each front-end offers; `check` refuses one a
front-end does not offer with a message that says where it works, and `suggestions` is what a
`/` menu lists. What is offered works: a front-end must route every offered command through
`apply` (workspace commands) or `Hosts.send` (session commands).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, TypeGuard

from xum.context.slash import (
    COMMAND_SUGGESTIONS,
    ClearCommand,
    CompactCommand,
    ForkCommand,
    GoalCommand,
    IdleCommand,
    ModelCommand,
    SlashError,
    SlashSuggestion,
    parse_command,
)
from xum.core.errors import UsageError, XumError
from xum.host.workspace_host import Frontend

if TYPE_CHECKING:
    from xum.context.slash import ChatCommand, WorkspaceCommand
    from xum.host.hosts import Hosts
    from xum.store.registry import WorkspaceRecord

ALL: frozenset[Frontend] = frozenset({"server", "tui", "acp", "run"})

# Which front-end offers which chat command. `/fork` makes a new workspace: an editor session
# and a `xum run` are bound to the one they opened, so they do not offer it.
OFFERED: Mapping[str, frozenset[Frontend]] = {
    "model": ALL,
    "fork": frozenset({"server", "tui"}),
    "compact": ALL,
    "clear": ALL,
    "goal": ALL,
    "idle": ALL,
}

_WHERE_FORK = (
    "fork from the browser UI (xum server), the terminal UI, or POST /api/workspaces/{id}/fork"
)


class InvalidModelError(XumError):
    """`/model` named no model the catalog knows."""

    code = "invalid_request"


def command_name(command: ChatCommand) -> str:
    if isinstance(command, ModelCommand):
        return "model"
    if isinstance(command, ForkCommand):
        return "fork"
    if isinstance(command, IdleCommand):
        return "idle"
    if isinstance(command, CompactCommand):
        return "compact"
    if isinstance(command, ClearCommand):
        return "clear"
    assert isinstance(command, GoalCommand)
    return "goal"


def suggestions(frontend: Frontend) -> list[SlashSuggestion]:
    """The chat commands a `/` menu of `frontend` lists (skills and overrides come on top)."""
    return [s for s in COMMAND_SUGGESTIONS if frontend in OFFERED[s.name.lstrip("/")]]


def parse(text: str, frontend: Frontend) -> ChatCommand | None:
    """The chat command `text` is, or None for a message (a skill or an override included).
    Raises `UsageError` for a malformed command or one `frontend` does not offer."""
    try:
        command = parse_command(text)
    except SlashError as exc:
        raise UsageError(str(exc)) from None
    if command is not None:
        check(command, frontend)
    return command


def check(command: ChatCommand, frontend: Frontend) -> None:
    name = command_name(command)
    if frontend in OFFERED[name]:
        return
    where = {"acp": "an editor session", "run": "`xum run`"}.get(frontend, frontend)
    hint = _WHERE_FORK if name == "fork" else None
    raise UsageError(f"/{name} is not available in {where}", hint=hint)


def runs_in_session(command: ChatCommand) -> bool:
    """`/compact`, `/clear` and `/goal` run in the session, like a message."""
    return isinstance(command, CompactCommand | ClearCommand | GoalCommand)


def is_workspace_command(command: ChatCommand | None) -> TypeGuard[WorkspaceCommand]:
    """`/model`, `/fork` and `/idle`: carried out by `apply`, nothing sent to a model."""
    return isinstance(command, ModelCommand | ForkCommand | IdleCommand)


@dataclass
class CommandResult:
    command: Literal["model", "fork", "idle"]
    record: WorkspaceRecord  # /model: the workspace as changed; /fork: the new fork
    idle_hours: float | None = None  # /idle: the project's setting now (None: off)
    fork_message: Literal["started"] | None = None  # /fork with a message: it started
    fork_message_error: XumError | None = None  # or why it did not


def checked_model(text: str) -> str:
    """`text` as a canonical `provider:model`; `InvalidModelError` when it names none."""
    from xum.llm import catalog

    try:
        provider, model_id = catalog.resolve_model_string(text)
    except XumError as exc:
        raise InvalidModelError(f"model: {exc.message}", hint=exc.hint) from None
    return f"{provider}:{model_id}"


async def apply(hosts: Hosts, record: WorkspaceRecord, command: WorkspaceCommand) -> CommandResult:
    """Carry out `/model`, `/fork` or `/idle` in `record` (whether a turn runs or not)."""
    import asyncio

    if isinstance(command, IdleCommand):
        from xum.store.compaction_config import set_idle_hours

        await asyncio.to_thread(set_idle_hours, record.project_path, command.hours)
        hosts.listener.workspaces_changed()
        return CommandResult("idle", record, idle_hours=command.hours)
    if isinstance(command, ModelCommand):
        if command.model is None:
            raise UsageError(
                "/model needs a model: an alias or provider:model (e.g. /model sonnet)",
                hint="GET /api/settings/models lists them",
            )
        changed = await hosts.change_settings(record.id, model=checked_model(command.model))
        return CommandResult("model", changed)
    if command.name is not None and len(command.name) > 80:
        raise UsageError("/fork: a workspace name is at most 80 characters")
    new = await hosts.fork(record.id, command.name, None)
    result = CommandResult("fork", new)
    if command.message is not None:
        try:
            await hosts.send(new, command.message, "step")
            result.fork_message = "started"
        except XumError as exc:
            # The fork exists either way (a turn that failed to start shows the error in it).
            result.fork_message_error = exc
    from xum.store import registry

    result.record = registry.get_workspace(new.id) or new
    return result
