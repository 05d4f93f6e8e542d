"""What the skill management tools exchange with the context layer (`SkillAccess`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

SkillScope = Literal["project", "global"]
DeleteTarget = Literal["file", "skill"]


@dataclass(frozen=True, slots=True)
class SkillListing:
    """One available skill (the winner of its name), as agent_skill_list shows it."""

    name: str
    description: str
    scope: str  # project, global, universal, builtin
    root: str  # e.g. ".xum/skills", "~/.claude/skills", "built-in"
    advertised: bool
    user_invocable: bool
    writable: bool  # the skill tools may change it where it is


@dataclass(frozen=True, slots=True)
class SkillChange:
    """What agent_skill_write or agent_skill_delete did."""

    path: str
    created: bool  # write: a new file; delete: the whole skill was removed
    note: str = ""
