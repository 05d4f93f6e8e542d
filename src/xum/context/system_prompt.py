"""Assemble the system prompt: prelude, environment, then the agent's own instructions."""

from __future__ import annotations

from xum.context.environment import environment_block
from xum.context.prelude import PRELUDE
from xum.runtime.base import RuntimeKind

EXEC_BODY = """\
<agent name="exec">
Carry out the user's request in this workspace. Read the relevant code first, make the change,
then run the checks that prove it works and fix what they report. Finish with a short account of
what changed and what ran.
</agent>"""

READ_ONLY_PLAN_BODY = """\
<agent name="plan">
Plan, do not implement. Investigate with the read-only tools you have, then reply with a concise
plan in Markdown: the goal, the files to change and how, the risks, and how to verify the result.
You cannot edit files or run commands in this mode.
</agent>"""


def build_system_prompt(runtime: RuntimeKind, *, is_git: bool, mode: str = "exec") -> str:
    body = READ_ONLY_PLAN_BODY if mode == "plan" else EXEC_BODY
    return "\n\n".join([PRELUDE, environment_block(runtime, is_git=is_git), body])
