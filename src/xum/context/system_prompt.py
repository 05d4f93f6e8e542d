"""The sections the system prompt is made of, and how they are put together.

Order (each section is left out when empty):

    prelude       xum's own short preamble                     (static)
    environment   the <environment> block for the runtime        (static per workspace)
    agent         the agent's body (+ its sub-agent prompt)
    instructions  <custom-instructions> from AGENTS.md files
    model         <model-...>: `Model:` sections for the model in use
    mode          <mode-...>: `Mode:` sections for the mode and agent
    skills        <agent-skills>: the skill index
    plan          <plan-mode>: the plan file and the editing rule

The engine freezes the assembled text for a whole context segment (see `xum.context.frozen`);
every section but the static ones can later change, and such a change travels as a row in the
history instead of a new system prompt.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from xum.context.agents import ResolvedAgent
from xum.context.markup import escape_untrusted

SECTION_ORDER = (
    "prelude",
    "environment",
    "agent",
    "instructions",
    "model",
    "mode",
    "skills",
    "plan",
)
STATIC_SECTIONS = frozenset({"prelude", "environment"})

_SLUG = re.compile(r"[^a-z0-9.]+")


def assemble(sections: Mapping[str, str]) -> str:
    return "\n\n".join(sections[name] for name in SECTION_ORDER if sections.get(name))


def tag_slug(value: str) -> str:
    return _SLUG.sub("-", value.lower()).strip("-") or "unknown"


def agent_block(agent: ResolvedAgent, *, subagent: bool, trusted: bool) -> str:
    """The agent's instructions. Built-in bodies are xum's own text; anything else is escaped
    like other repository-controlled text."""
    body = agent.body
    if subagent and agent.append_prompt:
        body = f"{body}\n\n{agent.append_prompt}" if body else agent.append_prompt
    if not trusted:
        body = escape_untrusted(body)
    return f'<agent id="{agent.id}" name="{escape_untrusted(agent.name)}">\n{body}\n</agent>'


def model_block(model_string: str, text: str) -> str:
    if not text:
        return ""
    tag = f"model-{tag_slug(model_string)}"
    return (
        f"<{tag}>\nInstructions for the model in use ({model_string}):\n\n"
        f"{escape_untrusted(text)}\n</{tag}>"
    )


def mode_block(mode: str, text: str) -> str:
    if not text:
        return ""
    tag = f"mode-{tag_slug(mode)}"
    return f"<{tag}>\nInstructions for {mode} mode:\n\n{escape_untrusted(text)}\n</{tag}>"


def plan_block(plan_file: str) -> str:
    return (
        "<plan-mode>\n"
        f"Plan file: {plan_file}\n"
        "- Write the plan in this file. The file edit tools can change only this file while you "
        "plan; an edit to any other path is refused. file_edit_insert without an anchor creates "
        "the file if it does not exist yet.\n"
        "- When the plan is ready, call propose_plan to present it for review.\n"
        "- If the file already holds a plan, read it first and revise it instead of starting "
        "over; the user may have edited it.\n"
        "</plan-mode>"
    )


def tool_description(base: str, note: str) -> str:
    """A tool's description with its `Tool:` sections from the instruction files appended."""
    if not note:
        return base
    return (
        f"{base}\n\nProject instructions for this tool (from its instruction files):\n"
        f"{escape_untrusted(note)}"
    )
