"""Skills the user brings into a message: `$name` references (`xum.context.skill_refs`) and the
dynamic context of a skill the user invokes (`xum.context.skill_directives`), whose commands the
workspace layer runs (`ContextProvider.skill_commands`)."""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING

from xum.context.skill_directives import expand_directives, has_directives
from xum.context.skill_refs import referenced_skills, references_message
from xum.context.skills import bounded_body, invocation_text, substitute_arguments
from xum.engine.userinput import PreparedMessage

if TYPE_CHECKING:
    from xum.engine.turnhost import TurnHost


async def with_references(session: TurnHost, text: str) -> PreparedMessage | None:
    """The message with the skills it names as `$name` attached; None when it names none (it
    is sent as typed)."""
    if "$" not in text:
        return None
    provider = session.context.provider
    skills = referenced_skills(text, await provider.skill_catalog())
    if not skills:
        return None
    commands = provider.skill_commands
    bodies = [await expand_directives(bounded_body(s), commands) for s in skills]
    return PreparedMessage(
        references_message(text, skills, bodies),
        text,
        {"kind": "skill-refs", "names": [s.name for s in skills]},
    )


async def with_dynamic_context(session: TurnHost, prepared: PreparedMessage) -> PreparedMessage:
    """A `/<skill> args` invocation with the skill's directives run (after the arguments are
    substituted, so a directive sees them); other messages as they are."""
    slash = prepared.slash
    provider = session.context.provider
    if slash is None or slash.get("kind") != "skill" or provider.skill_commands is None:
        return prepared
    catalog = await provider.skill_catalog()
    skill = catalog.get(str(slash["name"])) if catalog is not None else None
    if skill is None or not has_directives(skill.body):
        return prepared
    arguments = str(slash.get("arguments", ""))
    body, substituted = substitute_arguments(bounded_body(skill), arguments)
    expanded = await expand_directives(body, provider.skill_commands)
    return replace(prepared, text=invocation_text(skill.name, expanded, arguments, substituted))
