"""`$skill-name` references in a user message.

A message may name skills inline: "review this with $deep-review and $style". Each name that is a
user-invocable skill (the winner of its name, so the usual precedence applies) is attached to
the message: its body, raw (no argument substitution, unlike `/<name> args`), in a `<skill>`
block before the text as typed. A `$word` that names no such skill stays plain text (`$HOME`,
`$1`, a price), and so does anything inside backticks (inline code or a fenced block), where a
`$name` is far more likely a shell variable than a reference.

A reference starts after whitespace, the start of the message or an opening bracket or quote,
and its name ends where the skill-name alphabet ends. At most MAX_REFERENCES distinct skills are
attached per message (the first ones named); each body is bounded like any injected skill.
"""

from __future__ import annotations

import re

from xum.context.markup import escape_untrusted
from xum.context.skills import Skill, SkillCatalog, bounded_body

MAX_REFERENCES = 5
_REFERENCE = re.compile(r"(?:^|(?<=[\s(\[{\"'<,;:]))\$([a-z0-9]+(?:-[a-z0-9]+)*)(?![A-Za-z0-9_-])")
_CODE = re.compile(r"```.*?(?:```|\Z)|`[^`\n]*`", re.DOTALL)


def referenced_skills(text: str, catalog: SkillCatalog | None) -> list[Skill]:
    """The user-invocable skills `text` names with `$name`, in order of first mention."""
    if catalog is None or "$" not in text:
        return []
    prose = _CODE.sub(lambda m: " " * len(m.group(0)), text)
    found: list[Skill] = []
    for match in _REFERENCE.finditer(prose):
        skill = catalog.get(match.group(1))
        if skill is None or not skill.user_invocable or any(s.name == skill.name for s in found):
            continue
        found.append(skill)
        if len(found) == MAX_REFERENCES:
            break
    return found


def references_message(text: str, skills: list[Skill], bodies: list[str] | None = None) -> str:
    """The message the model receives: each skill's body (`bodies`, when given, replaces the
    raw ones: dynamic context already run), then the message as typed."""
    parts = []
    for index, skill in enumerate(skills):
        body = bodies[index] if bodies is not None else bounded_body(skill)
        parts.append(f'<skill name="{skill.name}">\n{escape_untrusted(body)}\n</skill>')
    return "\n\n".join(parts) + f"\n\n{text}"
