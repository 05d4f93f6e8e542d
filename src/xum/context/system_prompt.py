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
from collections.abc import Mapping, Sequence

from xum.context.agents import ResolvedAgent
from xum.context.markup import escape_untrusted, one_line

SECTION_ORDER = (
    "prelude",
    "environment",
    "agent",
    "instructions",
    "model",
    "mode",
    "skills",
    "mcp",
    "plan",
)
STATIC_SECTIONS = frozenset({"prelude", "environment"})

_SLUG = re.compile(r"[^a-z0-9.]+")


def assemble(sections: Mapping[str, str]) -> str:
    return "\n\n".join(sections[name] for name in SECTION_ORDER if sections.get(name))


def tag_slug(value: str) -> str:
    return _SLUG.sub("-", value.lower()).strip("-") or "unknown"


def agent_block(
    agent: ResolvedAgent,
    *,
    subagent: bool,
    trusted: bool,
    candidate: tuple[int, int] | None = None,
) -> str:
    """The agent's instructions. Built-in bodies are xum's own text; anything else is escaped
    like other repository-controlled text. `candidate` (i, n): this sub-agent is candidate i of
    a best-of-n batch."""
    body = agent.body
    if subagent and agent.append_prompt:
        body = f"{body}\n\n{agent.append_prompt}" if body else agent.append_prompt
    if not trusted:
        body = escape_untrusted(body)
    if subagent and candidate is not None and candidate[1] > 1:
        note = (
            f"You are candidate {candidate[0]} of {candidate[1]}: other sub-agents work on the "
            "same brief independently and the parent compares the results. Do your own best "
            "attempt; do not start another best-of batch unless the brief asks for one."
        )
        body = f"{body}\n\n{note}" if body else note
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


def tool_note(instructions: str, agents: str = "") -> str:
    """What follows a tool's own description: for `task`, the agents this session may start
    (`agents`, already escaped), then the tool's `Tool:` sections from the instruction files."""
    parts = [agents] if agents else []
    if instructions:
        parts.append(
            "Project instructions for this tool (from its instruction files):\n"
            + escape_untrusted(instructions)
        )
    return "\n\n".join(parts)


def tool_description(base: str, note: str) -> str:
    """A tool's description with its note (see `tool_note`) appended."""
    return f"{base}\n\n{note}" if note else base


def spawnable_agents_note(agents: Sequence[tuple[str, str]]) -> str:
    """The `task` tool's list of agents a session may start, as (id, description) pairs."""
    if not agents:
        return "No agent can be started as a sub-agent here."
    lines = ["Agents you can start (agentId):"]
    for agent_id, description in agents:
        label = f"{agent_id} (the default)" if agent_id == "exec" else agent_id
        text = escape_untrusted(one_line(description, 200)) if description else ""
        lines.append(f"- {label}: {text}" if text else f"- {label}")
    return "\n".join(lines)
