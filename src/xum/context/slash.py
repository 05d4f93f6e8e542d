"""Slash commands a user may type as the first token of a message.

Implemented here:

* `/<skill> [arguments]`: run a skill (one whose `user-invocable` is not false). The message
  becomes the skill's body with `$ARGUMENTS` and `$1`..`$9` substituted.
* `/<alias>[+<level>] message` and `/+<level> message`: a one-shot model and/or thinking
  override for that message only (`/sonnet+high ...`, `/opus ...`, `/+2 ...`). An alias is any
  model alias of the catalog or a full `provider:model` string; the level is a thinking level
  name or a number 0-9 relative to the model.

Resolution order for `/<name>`: a `+` or a `:` in the name, or a known model alias, makes it an
override; otherwise a skill of that name; otherwise the message is sent as typed (it may be a
path such as `/etc/hosts`).

`advertised_slash_names()` lists the command *forms* (the parity ledger reconciles them);
`suggestions()` lists concrete entries for a `/` menu.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass

from xum.context.skills import Skill, SkillCatalog

SKILL_FORM = "/<skill>"
OVERRIDE_FORM = "/<alias>+<level>"
THINKING_FORM = "/+<level>"


def advertised_slash_names() -> list[str]:
    """The slash command forms xum understands (`+<level>` is optional after an alias)."""
    return [SKILL_FORM, OVERRIDE_FORM, THINKING_FORM]


@dataclass(frozen=True, slots=True)
class PlainMessage:
    text: str


@dataclass(frozen=True, slots=True)
class SkillInvocation:
    skill: Skill
    arguments: str
    typed: str


@dataclass(frozen=True, slots=True)
class OneShotOverride:
    model: str | None  # an alias or provider:model; None keeps the session's model
    thinking: str | None  # a level name or digit; None keeps the session's level
    text: str  # the message itself, without the command
    typed: str


SlashResult = PlainMessage | SkillInvocation | OneShotOverride


class SlashError(ValueError):
    """A recognized command that cannot be carried out (e.g. an override with no message)."""


_COMMAND = re.compile(r"\s*/(\S*)(?:\s+(.*))?\Z", re.DOTALL)


def _split(text: str) -> tuple[str, str]:
    """("name", "the rest") of a message starting with `/name`."""
    match = _COMMAND.match(text)
    if match is None:
        return "", ""
    return match.group(1), (match.group(2) or "").strip()


def parse_override(text: str, aliases: Collection[str]) -> OneShotOverride | None:
    """The one-shot override at the start of `text`, if there is one."""
    if not text.lstrip().startswith("/"):
        return None
    name, rest = _split(text)
    if not name:
        return None
    model, plus, level = name.partition("+")
    is_override = bool(plus) or ":" in model or model.lower() in aliases
    if not is_override:
        return None
    if plus and not level:
        raise SlashError(f"/{name}: a thinking level must follow '+' (e.g. /{model}+high)")
    if not rest:
        raise SlashError(f"/{name}: write the message after the override (e.g. /{name} fix it)")
    return OneShotOverride(model or None, level or None, rest, text)


def parse_slash(text: str, *, skills: SkillCatalog | None, aliases: Collection[str]) -> SlashResult:
    """What a typed message asks for (see the module docstring for the order)."""
    override = parse_override(text, aliases)
    if override is not None:
        return override
    if not text.lstrip().startswith("/") or skills is None:
        return PlainMessage(text)
    name, rest = _split(text)
    skill = skills.get(name)
    if skill is None or not skill.user_invocable:
        return PlainMessage(text)
    return SkillInvocation(skill, rest, text)


@dataclass(frozen=True, slots=True)
class SlashSuggestion:
    name: str  # "/deploy"
    description: str
    argument_hint: str
    kind: str  # "skill" or "override"


def suggestions(skills: SkillCatalog | None, aliases: Collection[str]) -> list[SlashSuggestion]:
    """Entries for a `/` menu: user-invocable skills (advertised or not), then model aliases."""
    out = [
        SlashSuggestion(f"/{s.name}", s.description, s.argument_hint, "skill")
        for s in (skills.user_invocable() if skills else [])
    ]
    out.extend(
        SlashSuggestion(
            f"/{alias}", f"send one message with {alias}", "[+level] message", "override"
        )
        for alias in sorted(aliases)
    )
    return out
