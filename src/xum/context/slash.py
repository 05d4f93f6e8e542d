"""Slash commands a user may type as the first token of a message.

Implemented here:

* `/<skill> [arguments]`: run a skill (one whose `user-invocable` is not false). The message
  becomes the skill's body with `$ARGUMENTS` and `$1`..`$9` substituted.
* `/<alias>[+<level>] message` and `/+<level> message`: a one-shot model and/or thinking
  override for that message only (`/sonnet+high ...`, `/opus ...`, `/+2 ...`). An alias is any
  model alias of the catalog or a full `provider:model` string; the level is a thinking level
  name or a number 0-9 relative to the model.
* Chat commands, never sent to a model as text. Workspace commands, carried out by the
  front-end that receives the message: `/model <alias|provider:model>` changes the workspace's
  model; `/fork [name]` forks the workspace, and lines after the first are sent to the new fork
  as its first message; `/idle <hours>|off` sets the project's idle compaction. Session
  commands, carried out by the engine (`AgentSession.run_turn`), so every front-end has them:
  `/compact [-t <tokens>] [-m <model>]` summarizes the history (lines after the first are sent
  once it is done), `/clear` and `/clear --soft` clear it, `/goal [--budget <amount>]
  [--turns <n>] <objective>` sets a goal and starts on it (`/goal clear` drops it).

Resolution order for `/<name>`: the chat commands first (a skill or model alias of the same name
is shadowed); then a `+` or a `:` in the name, or a known model alias, makes it an override;
otherwise a skill of that name; otherwise the message is sent as typed (it may be a path such as
`/etc/hosts`).

`advertised_slash_names()` lists the command *forms* (the parity ledger reconciles them);
`suggestions()` lists concrete entries for a `/` menu.
"""

from __future__ import annotations

import re
from collections.abc import Collection
from dataclasses import dataclass
from typing import Literal

from xum.context.skills import Skill, SkillCatalog

SKILL_FORM = "/<skill>"
OVERRIDE_FORM = "/<alias>+<level>"
THINKING_FORM = "/+<level>"
MODEL_COMMAND = "model"
FORK_COMMAND = "fork"
COMPACT_COMMAND = "compact"
CLEAR_COMMAND = "clear"
IDLE_COMMAND = "idle"
GOAL_COMMAND = "goal"
CHAT_COMMANDS = (
    MODEL_COMMAND,
    FORK_COMMAND,
    COMPACT_COMMAND,
    CLEAR_COMMAND,
    IDLE_COMMAND,
    GOAL_COMMAND,
)
MAX_IDLE_HOURS = 24 * 365


def advertised_slash_names() -> list[str]:
    """The slash command forms xum understands (`+<level>` is optional after an alias)."""
    return [SKILL_FORM, OVERRIDE_FORM, THINKING_FORM, *(f"/{c}" for c in CHAT_COMMANDS)]


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


@dataclass(frozen=True, slots=True)
class ModelCommand:
    """`/model <alias|provider:model>`: change the workspace's model (None: name none)."""

    model: str | None
    typed: str


@dataclass(frozen=True, slots=True)
class ForkCommand:
    """`/fork [name]`, then optionally the new fork's first message on the following lines."""

    name: str | None
    message: str | None
    typed: str


@dataclass(frozen=True, slots=True)
class CompactCommand:
    """`/compact [-t <tokens>] [-m <model>]`, then optionally a message to send once it is done."""

    max_tokens: int | None
    model: str | None
    follow_up: str | None
    typed: str


@dataclass(frozen=True, slots=True)
class ClearCommand:
    """`/clear` (the transcript starts over too) or `/clear --soft` (only the model forgets)."""

    soft: bool
    typed: str


@dataclass(frozen=True, slots=True)
class IdleCommand:
    """`/idle <hours>` or `/idle off`: idle compaction for the workspace's project."""

    hours: float | None  # None: off
    typed: str


@dataclass(frozen=True, slots=True)
class GoalCommand:
    """`/goal [--budget <amount>] [--turns <n>] <objective>`, or `/goal clear`."""

    objective: str | None  # None: clear the goal
    budget_cents: int | None
    turn_cap: int | None
    typed: str


SessionCommand = CompactCommand | ClearCommand | GoalCommand
WorkspaceCommand = ModelCommand | ForkCommand | IdleCommand
ChatCommand = WorkspaceCommand | SessionCommand
SlashResult = PlainMessage | SkillInvocation | OneShotOverride | ChatCommand


class SlashError(ValueError):
    """A recognized command that cannot be carried out (e.g. an override with no message)."""


_COMMAND = re.compile(r"\s*/(\S*)(?:\s+(.*))?\Z", re.DOTALL)


def _split(text: str) -> tuple[str, str]:
    """("name", "the rest") of a message starting with `/name`."""
    match = _COMMAND.match(text)
    if match is None:
        return "", ""
    return match.group(1), (match.group(2) or "").strip()


_FIRST_LINE = re.compile(r"\s*/(\S+)[ \t]*([^\n]*)(?:\n(.*))?\Z", re.DOTALL)


def parse_command(text: str) -> ChatCommand | None:
    """The chat command `text` starts with, if any. SlashError when it is one but malformed
    (more than one word after `/model` or `/fork`, a message after `/model`, an unknown option).
    A bare `/model` parses, with no model: what to do with it is the front-end's call."""
    match = _FIRST_LINE.match(text)
    if match is None or match.group(1) not in CHAT_COMMANDS:
        return None
    name = match.group(1)
    words = match.group(2).split()
    rest = (match.group(3) or "").strip()
    if name == COMPACT_COMMAND:
        return _compact(words, rest, text)
    if name == CLEAR_COMMAND:
        if rest or words not in ([], ["--soft"]):
            raise SlashError(
                "/clear takes nothing but an optional --soft (/clear empties the chat; "
                "/clear --soft keeps the transcript and only the model forgets it)"
            )
        return ClearCommand(bool(words), text)
    if name == IDLE_COMMAND:
        return _idle(words, rest, text)
    if name == GOAL_COMMAND:
        return _goal(words, rest, text)
    if name == MODEL_COMMAND:
        if len(words) > 1 or rest:
            raise SlashError(
                "/model takes one model and nothing else (e.g. /model sonnet); to send one "
                "message with another model, write /<alias> message (e.g. /sonnet fix it)"
            )
        return ModelCommand(words[0] if words else None, text)
    if len(words) > 1:
        raise SlashError(
            "/fork takes at most one word, the new workspace's name; write the fork's first "
            "message on the lines below (e.g. /fork try-redis, then the message on a new line)"
        )
    return ForkCommand(words[0] if words else None, rest or None, text)


def _compact(words: list[str], rest: str, typed: str) -> CompactCommand:
    form = (
        "the form is /compact [-t <tokens>] [-m <model>], with the message to send afterwards "
        "on the lines below"
    )
    max_tokens: int | None = None
    model: str | None = None
    options = iter(words)
    for word in options:
        if word not in ("-t", "-m"):
            raise SlashError(f"/compact: unknown option {word!r}; {form}")
        value = next(options, None)
        if value is None:
            raise SlashError(f"/compact: {word} needs a value; {form}")
        if word == "-m":
            model = value
        elif value.isdigit() and 100 <= int(value) <= 1_000_000:
            max_tokens = int(value)
        else:
            raise SlashError(
                f"/compact -t: {value!r} is not a token count from 100 to 1000000 (e.g. -t 3000)"
            )
    return CompactCommand(max_tokens, model, rest or None, typed)


def _idle(words: list[str], rest: str, typed: str) -> IdleCommand:
    example = "e.g. /idle 24 to compact after a day without activity, or /idle off"
    if rest or len(words) != 1:
        raise SlashError(f"/idle takes one value, a number of hours or off ({example})")
    word = words[0].lower()
    if word == "off":
        return IdleCommand(None, typed)
    try:
        hours = float(word)
    except ValueError:
        raise SlashError(f"/idle: {words[0]!r} is not a number of hours ({example})") from None
    if not 0 < hours <= MAX_IDLE_HOURS:
        raise SlashError(f"/idle: the hours must be more than 0 and at most {MAX_IDLE_HOURS}")
    return IdleCommand(hours, typed)


def _goal(words: list[str], rest: str, typed: str) -> GoalCommand:
    from xum.core.money import parse_cents

    form = "/goal [--budget <amount>] [--turns <n>] <objective>, or /goal clear"
    if words == ["clear"] and not rest:
        return GoalCommand(None, None, None, typed)
    budget: int | None = None
    cap: int | None = None
    while words and words[0] in ("--budget", "--turns"):
        if len(words) < 2:
            raise SlashError(f"/goal: {words[0]} needs a value; the form is {form}")
        option, value, words = words[0], words[1], words[2:]
        if option == "--budget":
            try:
                budget = parse_cents(value)
            except ValueError as exc:
                raise SlashError(f"/goal --budget: {exc}") from None
        elif value.isdigit() and int(value) > 0:
            cap = int(value)
        else:
            raise SlashError(f"/goal --turns: {value!r} is not a positive number of turns")
    objective = "\n".join(p for p in (" ".join(words), rest) if p).strip()
    if not objective:
        raise SlashError(f"/goal needs an objective; the form is {form}")
    return GoalCommand(objective, budget, cap, typed)


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
    command = parse_command(text)
    if command is not None:
        return command
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
    kind: Literal["command", "skill", "override"]


COMMAND_SUGGESTIONS = (
    SlashSuggestion(
        f"/{MODEL_COMMAND}",
        "change this workspace's model (no message is sent)",
        "<alias|provider:model>",
        "command",
    ),
    SlashSuggestion(
        f"/{FORK_COMMAND}",
        "fork this workspace; lines below go to the fork",
        "[name]",
        "command",
    ),
    SlashSuggestion(
        f"/{COMPACT_COMMAND}",
        "summarize the conversation to free context; lines below are sent afterwards",
        "[-t <tokens>] [-m <model>]",
        "command",
    ),
    SlashSuggestion(
        f"/{CLEAR_COMMAND}",
        "clear the chat (--soft: keep the transcript, only the model forgets it)",
        "[--soft]",
        "command",
    ),
    SlashSuggestion(
        f"/{GOAL_COMMAND}",
        "work on an objective over automatic turns until it is done (/goal clear stops)",
        "[--budget <amount>] [--turns <n>] <objective>",
        "command",
    ),
    SlashSuggestion(
        f"/{IDLE_COMMAND}",
        "compact this project's workspaces after this many idle hours",
        "<hours>|off",
        "command",
    ),
)


def suggestions(skills: SkillCatalog | None, aliases: Collection[str]) -> list[SlashSuggestion]:
    """Entries for a `/` menu: the chat commands, user-invocable skills (advertised or not),
    model aliases, then the thinking-only override. A skill shadowed by a command or an alias
    (those win, see the module docstring) is left out: typing it would not run it."""
    lowered = {a.lower() for a in aliases}
    out = list(COMMAND_SUGGESTIONS)
    out.extend(
        SlashSuggestion(f"/{s.name}", s.description, s.argument_hint, "skill")
        for s in (skills.user_invocable() if skills else [])
        if s.name not in CHAT_COMMANDS and s.name.lower() not in lowered
    )
    out.extend(
        SlashSuggestion(
            f"/{alias}", f"send one message with {alias}", "[+level] message", "override"
        )
        for alias in sorted(aliases)
        if alias not in CHAT_COMMANDS
    )
    out.append(
        SlashSuggestion(
            "/+", "send one message with another thinking level", "<level> message", "override"
        )
    )
    return out
