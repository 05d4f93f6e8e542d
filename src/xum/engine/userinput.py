"""What a typed message becomes before it is recorded: slash commands are carried out here, so
`xum run`, the server and ACP treat `/deploy 123` or `/sonnet+high fix it` the same way."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from xum.llm.types import ThinkingLevel

if TYPE_CHECKING:
    from xum.context.skills import SkillCatalog
    from xum.context.slash import SessionCommand, WorkspaceCommand
    from xum.core.errors import UsageError
    from xum.engine.route import ModelRoute


@dataclass(frozen=True, slots=True)
class TurnOverride:
    """A model and thinking level for one turn only (a one-shot `/alias+level` message)."""

    route: ModelRoute
    thinking: ThinkingLevel


@dataclass(frozen=True, slots=True)
class PreparedMessage:
    """A user message ready for a turn (slash commands carried out)."""

    text: str  # what the model receives
    typed: str  # what the user typed
    slash: dict[str, Any] | None = None  # what the command was, for the log and the UI
    override: TurnOverride | None = None
    command: SessionCommand | None = None  # /compact, /clear, /goal: the session carries it out


def prepare_message(
    text: str,
    *,
    skills: SkillCatalog | None,
    route: ModelRoute,
    thinking: ThinkingLevel,
    resolve_model: Callable[[str], ModelRoute],
) -> PreparedMessage:
    """Interpret a leading slash command. UsageError for a command that cannot be carried out
    (an unknown model, a bad thinking level, an override with no message)."""
    from xum.context.skills import invocation_message
    from xum.context.slash import (
        ClearCommand,
        CompactCommand,
        ForkCommand,
        GoalCommand,
        IdleCommand,
        ModelCommand,
        OneShotOverride,
        SkillInvocation,
        SlashError,
        parse_slash,
    )
    from xum.core.errors import UsageError
    from xum.llm import catalog
    from xum.llm.thinking import parse_thinking

    if not text.lstrip().startswith("/"):
        return PreparedMessage(text, text)
    try:
        parsed = parse_slash(text, skills=skills, aliases=set(catalog.aliases()))
    except SlashError as exc:
        raise UsageError(str(exc)) from None
    if isinstance(parsed, ModelCommand | ForkCommand | IdleCommand):
        raise chat_command_refusal(parsed)
    if isinstance(parsed, CompactCommand | ClearCommand | GoalCommand):
        return PreparedMessage(text, text, command=parsed)
    if isinstance(parsed, SkillInvocation):
        return PreparedMessage(
            invocation_message(parsed.skill, parsed.arguments),
            text,
            {"kind": "skill", "name": parsed.skill.name, "arguments": parsed.arguments},
        )
    if isinstance(parsed, OneShotOverride):
        new_route = resolve_model(parsed.model) if parsed.model else route
        level = (
            parse_thinking(parsed.thinking, new_route.provider, new_route.model_id)
            if parsed.thinking
            else thinking
        )
        return PreparedMessage(
            parsed.text,
            text,
            {"kind": "override", "model": new_route.model_string, "thinking": level},
            TurnOverride(new_route, level),
        )
    return PreparedMessage(text, text)


def chat_command_refusal(command: WorkspaceCommand) -> UsageError:
    """The error for `/model`, `/fork` or `/idle` where no workspace UI carries it out. These act
    on the workspace or its project, not on a turn: the server runs them before a message
    reaches a session, so in a turn (a caller that skipped that step) they must not reach the
    model as text."""
    from xum.context.slash import IdleCommand, ModelCommand
    from xum.core.errors import UsageError

    if isinstance(command, ModelCommand):
        return UsageError(
            "/model changes a workspace's model and has no meaning in a single turn",
            hint="pick the model with -m/--model, or send one message with `/<alias> message`",
        )
    if isinstance(command, IdleCommand):
        return UsageError(
            "/idle sets the project's idle compaction, which the server carries out",
            hint="send it from the browser UI (xum server), or run `xum run --workspace last "
            '"/idle 24"`',
        )
    return UsageError(
        "/fork forks a workspace and has no meaning in a single turn",
        hint="fork from the browser UI (xum server) or with POST /api/workspaces/{id}/fork",
    )
