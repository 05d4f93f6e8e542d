"""Remembered "always allow" rules for an external agent's permission requests.

xum keeps them as it keeps its own (`xum.workspaces.safety.approvals`: config.json's
`approvals.rules`, per project trust root, listed and forgotten in Settings), so that a later
request of the same kind is answered by xum without asking, whichever session of the agent
sends it:

* A command (a request of kind `execute`, or of no kind (`other`, as Claude Code sends it), whose
  `rawInput` has the command line) is read like
  xum's own `bash` calls: "always" remembers its command prefix as a `bash` rule, the same rule
  xum's own agent uses (allowing `npm test` in a project allows it for every agent there). A
  critical command is never covered, and a command xum cannot reduce to one prefix is offered
  no "always". A command that only xum's read-only allowlist covers is still asked: the agent
  asked.
* Anything else of a known kind (an edit, a delete, a fetch, ...) is remembered per agent and
  kind: `{"tool": "external:opencode", "prefix": "opencode: edit"}` allows every edit request
  of that agent in the project. A request of no known kind (`other`) that is not a command is
  offered no "always": it could be anything.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass

from xum.workspaces.safety.approvals import list_rules, remember_prefix, remembered_prefixes

TOOL_PREFIX = "external:"
# The ACP tool kinds a rule of "this agent, this kind" may cover.
KIND_RULES = frozenset({"read", "edit", "delete", "move", "search", "fetch", "think"})


@dataclass(frozen=True, slots=True)
class AgentRule:
    """How xum's remembered rules see one permission request."""

    covered: bool  # a remembered rule answers it: allowed without asking
    prefix: str | None  # what "always" would remember (None: not offered)
    tool: str  # the rule's `tool`: "bash" for a command prefix, else "external:<agent>"


def _command(raw_input: object) -> str | None:
    """The command line of an `execute` request's `rawInput`, when it names one (opencode and
    Claude Code send `{"command": "..."}`, others a list of words)."""
    if not isinstance(raw_input, dict):
        return None
    command = raw_input.get("command")
    if isinstance(command, list) and all(isinstance(word, str) for word in command):
        command = shlex.join(command)
    return command if isinstance(command, str) and command.strip() else None


def rule_for(
    agent: str, kind: str, raw_input: object, *, project: str, workspace: str
) -> AgentRule:
    """The rule a request of `agent` (its kind and `rawInput`) falls under in `project` (the
    trust root), run in `workspace` (the checkout)."""
    from xum.tools.command_risk import assess

    # Claude Code sends its commands without a kind ("other"), with the command line.
    command = _command(raw_input) if kind in ("execute", "other") else None
    if command is not None:
        plain = assess(command, workspace=workspace)
        if plain.critical:
            return AgentRule(covered=False, prefix=None, tool="bash")
        ruled = assess(command, workspace=workspace, allowed_prefixes=remembered_prefixes(project))
        # Covered only by what the user chose, not by the read-only allowlist alone.
        covered = ruled.allowlisted and not plain.allowlisted
        return AgentRule(covered=covered, prefix=plain.prefix, tool="bash")
    if kind not in KIND_RULES:
        # "other" (or a kind newer than this list) may be anything: nothing to keep for it.
        return AgentRule(covered=False, prefix=None, tool="bash")
    tool = TOOL_PREFIX + agent
    prefix = f"{agent}: {kind}"
    covered = any(
        rule.get("project") == project and rule.get("tool") == tool and rule.get("prefix") == prefix
        for rule in list_rules()
    )
    return AgentRule(covered=covered, prefix=prefix, tool=tool)


def remember(project: str, rule: AgentRule) -> None:
    """Keep "always allow" for `rule` in `project` (a file write: call it off the loop)."""
    if rule.prefix is not None:
        remember_prefix(project, rule.prefix, tool=rule.tool)
