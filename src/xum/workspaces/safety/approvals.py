"""Approvals: which tool calls wait for a person, who answers, and what the user chose to keep.

The permission mode of a call (`xum.workspaces.safety.choice.permission_mode`):

| mode | asks for | refuses |
|---|---|---|
| `auto` | critical commands, sandbox escalations | |
| `ask` | those, commands outside the allowlist, file edits outside the workspace, skill writes and deletes, MCP tools not marked read-only | |
| `read-only` | critical commands | file edits and other write-tier tools, escalations, MCP tools not marked read-only |

An MCP tool is "marked read-only" when its server lists it with the annotation
`readOnlyHint: true` (read live from the server's last listing, `McpHost.tool`). It is the
server's claim, not something xum can check, so it only ever lets a call through that the mode
would otherwise stop; the sandbox does not reach into an MCP server's process either way.

Commands are read by `xum.tools.command_risk`; the allowlist is its read-only commands plus the
prefixes the user chose to "always allow" in this project, kept in `$XUM_ROOT/config.json`:

    "approvals": {"rules": [{"project": "/home/me/app", "tool": "bash", "prefix": "npm test",
                             "addedAt": 1767225600000}]}

"Always allow" on an MCP tool keeps a rule whose `tool` and `prefix` are both the tool's public
name (`mcp__<server>__<tool>`): that tool then runs without asking in this project, whatever
its arguments. Settings lists and forgets both kinds alike.

A request goes out as an `approval-request` event and is answered by the front-end's approver
(the browser's card); without one (`xum run`), the policy answers: `never` and `deny` refuse
with a tool error the model sees. Every decision is an `approval-resolved` event and is kept in
the call's committed `tool-result` (`meta.approval`).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import orjson

from xum.core.clock import now_ms
from xum.engine import events as E
from xum.engine.events import EventSink
from xum.engine.extensions import ToolCall
from xum.store.config import read_config, update_config
from xum.tools.mcp_names import is_mcp_name
from xum.workspaces.safety.choice import SafetyChoice, permission_mode

if TYPE_CHECKING:
    from xum.tools.base import ToolContext, ToolResult

Decision = Literal["once", "always", "deny"]
DECISIONS: tuple[Decision, ...] = ("once", "always", "deny")
MAX_RULES = 500
MAX_SUBJECT_CHARS = 4000  # an MCP call's arguments, as the approval request shows them


@dataclass(frozen=True, slots=True)
class ApprovalAnswer:
    """A person's answer to an approval request."""

    decision: Decision
    reason: str | None = None  # why the user denied it (shown to the model)


Approver = Callable[[E.ApprovalRequest], Awaitable[ApprovalAnswer]]


# Remembered rules --------------------------------------------------------------------------------


def _rules() -> list[dict[str, Any]]:
    """The remembered rules as config.json holds them (read on every call: it is cached)."""
    section = read_config().get("approvals")
    rules = section.get("rules") if isinstance(section, dict) else None
    return [r for r in rules if isinstance(r, dict)] if isinstance(rules, list) else []


def remembered_prefixes(project: str) -> list[str]:
    """The command prefixes the user always allows in `project` (its trust root)."""
    return [
        str(rule["prefix"])
        for rule in _rules()
        if rule.get("project") == project
        and rule.get("tool", "bash") == "bash"
        and isinstance(rule.get("prefix"), str)
        and rule["prefix"].strip()
    ]


def remembered_tools(project: str) -> set[str]:
    """The MCP tools the user always allows in `project` (see the module docstring)."""
    return {
        str(rule["tool"])
        for rule in _rules()
        if rule.get("project") == project
        and isinstance(rule.get("tool"), str)
        and is_mcp_name(rule["tool"])
        and rule.get("prefix") == rule["tool"]
    }


def list_rules() -> list[dict[str, Any]]:
    return [dict(r) for r in _rules()]  # copies: the caller may change them


def remember_prefix(project: str, prefix: str, *, tool: str = "bash") -> None:
    """Keep "always allow `prefix` in `project`" (once; the oldest go beyond MAX_RULES). For an
    MCP tool, `tool` and `prefix` are both its public name."""

    def mutate(config: dict[str, Any]) -> None:
        section = config.get("approvals")
        if not isinstance(section, dict):
            section = config["approvals"] = {}
        rules = section.get("rules")
        if not isinstance(rules, list):
            rules = section["rules"] = []
        if any(
            isinstance(r, dict) and r.get("project") == project and r.get("prefix") == prefix
            for r in rules
        ):
            return
        rules.append({"project": project, "tool": tool, "prefix": prefix, "addedAt": now_ms()})
        del rules[:-MAX_RULES]

    update_config(mutate)


def forget_rule(project: str, prefix: str) -> bool:
    """Remove a remembered rule; whether there was one."""

    def mutate(config: dict[str, Any]) -> bool:
        section = config.get("approvals")
        rules = section.get("rules") if isinstance(section, dict) else None
        if not isinstance(rules, list):
            return False
        kept = [
            r
            for r in rules
            if not (
                isinstance(r, dict) and r.get("project") == project and r.get("prefix") == prefix
            )
        ]
        if len(kept) == len(rules):
            return False
        assert isinstance(section, dict)
        section["rules"] = kept
        return True

    return update_config(mutate)


# The middleware ----------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Need:
    """Why a call needs a person's approval, and what to show them."""

    kind: str  # command | critical | escalation | write | mcp
    subject: str
    why: str
    reason: str | None = None
    prefix: str | None = None


# Skills steer the model (and a user-invoked skill may run commands), and they live where the
# file tools never write (`.xum/`, `$XUM_ROOT`): in `ask` mode every change waits for a person.
SKILL_CHANGE_TOOLS = frozenset({"agent_skill_write", "agent_skill_delete"})


def _skill_need(tool: str, arguments: dict[str, Any]) -> _Need:
    scope = arguments.get("scope") or "project"
    root = "~/.xum/skills" if scope == "global" else ".xum/skills"
    name = str(arguments.get("name", "")).strip()
    if tool == "agent_skill_write":
        subject = f"{root}/{name}/{arguments.get('filePath') or 'SKILL.md'}"
        return _Need("write", subject, f"writes a {scope} skill, which steers the model")
    if arguments.get("target") == "skill":
        return _Need("write", f"{root}/{name}/", f"deletes the {scope} skill {name}")
    subject = f"{root}/{name}/{arguments.get('filePath') or ''}"
    return _Need("write", subject, f"deletes a file of the {scope} skill {name}")


class ApprovalMiddleware:
    """Decides, before each call, whether it runs, waits for a person, or is refused."""

    def __init__(
        self,
        workspace_id: str,
        *,
        project_root: str,
        emit: EventSink,
        choice: SafetyChoice,
        approver: Approver | None,
    ) -> None:
        """`project_root`: the trust root, under which "always allow" rules are kept (so a
        worktree workspace shares its project's rules)."""
        self.workspace_id = workspace_id
        self.project_root = project_root
        self.emit = emit
        self.choice = choice
        self.approver = approver
        self._decided: dict[str, dict[str, Any]] = {}  # call id -> meta.approval

    async def before_tool(
        self, call: ToolCall, ctx: ToolContext
    ) -> ToolResult | ToolContext | None:
        from xum.tools import registry
        from xum.tools.base import error

        mode = permission_mode(self.choice, self.workspace_id)
        if is_mcp_name(call.name):
            asked, refused = self._mcp_need(call, ctx, mode)
            if refused is not None:
                return error(
                    refused, approval={"decision": "deny", "by": "policy", "kind": "read-only"}
                )
            return await self._decide(call, asked, None)
        try:
            tier = registry.risk_tier(call.name)
        except KeyError:
            return None  # the registry answers an unknown tool
        arguments = _arguments(call)
        if mode == "read-only" and tier == "write":
            return error(
                f"{call.name} was not run: this workspace is in the read-only permission mode "
                "(no changes to files). Read and report instead, or ask the user to switch the "
                "mode.",
                approval={"decision": "deny", "by": "policy", "kind": "read-only"},
            )
        need: _Need | None = None
        changed: ToolContext | None = None
        if call.name == "bash" and arguments is not None:
            need, refusal = self._bash_need(arguments, ctx, mode)
            if refusal is not None:
                return error(refusal, approval={"decision": "deny", "by": "policy"})
            if need is not None and need.kind == "escalation":
                changed = dataclasses.replace(ctx, sandbox_escalated=True)
        elif mode == "ask" and call.name in SKILL_CHANGE_TOOLS and arguments is not None:
            need = _skill_need(call.name, arguments)
        elif mode == "ask" and tier == "write" and arguments is not None:
            need, changed = await self._write_need(call, arguments, ctx)
        return await self._decide(call, need, changed)

    async def _decide(
        self, call: ToolCall, need: _Need | None, changed: ToolContext | None
    ) -> ToolResult | ToolContext | None:
        """Ask for `need` (nothing to ask: the call runs) and keep the answer."""
        from xum.tools.base import error

        if need is None:
            return None
        answer, by = await self._ask(call, need)
        record = {"decision": answer.decision, "by": by, "kind": need.kind, "why": need.why}
        if answer.reason:
            record["reason"] = answer.reason
        if answer.decision == "deny":
            return error(_denial(call.name, need, answer, by), approval=record)
        if answer.decision == "always" and need.prefix:
            tool = call.name if need.kind == "mcp" else "bash"
            remember_prefix(self.project_root, need.prefix, tool=tool)
            record["prefix"] = need.prefix
        self._decided[call.id] = record
        return changed

    async def after_tool(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> ToolResult:
        record = self._decided.pop(call.id, None)
        if record is None:
            return result
        return dataclasses.replace(result, meta={**result.meta, "approval": record})

    # -- what needs a person ----------------------------------------------------------------------

    def _bash_need(
        self, arguments: dict[str, Any], ctx: ToolContext, mode: str
    ) -> tuple[_Need | None, str | None]:
        """(what must be approved, or a refusal that no approval can lift)."""
        from xum.tools.command_risk import assess

        script = arguments.get("script")
        if not isinstance(script, str):
            return None, None  # the tool's validation says what is wrong
        escalation = arguments.get("sandbox_escalation")
        escalation = escalation.strip() if isinstance(escalation, str) else ""
        risk = assess(
            script,
            workspace=ctx.runtime.workspace_path,
            allowed_prefixes=remembered_prefixes(self.project_root) if mode == "ask" else (),
        )
        if escalation and mode == "read-only":
            return None, (
                "bash was not run: this workspace is in the read-only permission mode, where "
                "commands run only in the read-only sandbox and cannot be escalated out of it."
            )
        if risk.critical:
            why = "critical: " + "; ".join(risk.critical)
            return _Need("critical", script, why, escalation or None), None
        if escalation:
            why = "run outside the sandbox (a sandbox escalation, for this one call)"
            return _Need("escalation", script, why, escalation), None
        if mode == "ask" and not risk.allowlisted:
            why = (
                "not in the allowlist of read-only commands and remembered prefixes"
                if risk.understood
                else "xum cannot read all of it (a syntax error, or a command name only known "
                "when it runs), so it asks"
            )
            return _Need("command", script, why, prefix=risk.prefix), None
        return None, None

    def _mcp_need(
        self, call: ToolCall, ctx: ToolContext, mode: str
    ) -> tuple[_Need | None, str | None]:
        """(what must be approved, or a refusal) for an MCP tool: only the server's
        `readOnlyHint` lets one run unasked outside `auto` (see the module docstring)."""
        if mode == "auto":
            return None, None
        tool = ctx.mcp.host.tool(call.name) if ctx.mcp is not None else None
        if tool is not None and tool.read_only:
            return None, None
        if mode == "read-only":
            return None, (
                f"{call.name} was not run: this workspace is in the read-only permission mode, "
                "where an MCP tool runs only when its server marks it read-only (readOnlyHint), "
                "and this one is not marked. Use tools that only read, or ask the user to "
                "switch the mode."
            )
        if call.name in remembered_tools(self.project_root):
            return None, None
        subject = call.arguments or "{}"
        if len(subject) > MAX_SUBJECT_CHARS:
            subject = subject[:MAX_SUBJECT_CHARS] + " ..."
        why = "an MCP tool its server does not mark read-only (no readOnlyHint)"
        return _Need("mcp", subject, why, prefix=call.name), None

    async def _write_need(
        self, call: ToolCall, arguments: dict[str, Any], ctx: ToolContext
    ) -> tuple[_Need | None, ToolContext | None]:
        from xum.tools.paths import OutsideWriteRoots, PathRefused, resolve_write_path

        path = arguments.get("path")
        if not isinstance(path, str):
            return None, None
        try:
            await resolve_write_path(ctx, path)
        except OutsideWriteRoots as outside:
            roots = (*ctx.extra_write_roots, outside.canonical)
            need = _Need("write", outside.canonical, "a file edit outside the workspace")
            return need, dataclasses.replace(ctx, extra_write_roots=roots)
        except (PathRefused, OSError):
            return None, None  # refused for a reason no approval lifts: the tool says it
        return None, None

    async def _ask(self, call: ToolCall, need: _Need) -> tuple[ApprovalAnswer, str]:
        request = E.ApprovalRequest(
            request_id=os.urandom(6).hex(),
            call_id=call.id,
            tool=call.name,
            kind=need.kind,
            subject=need.subject,
            why=need.why,
            reason=need.reason,
            prefix=need.prefix,
        )
        self.emit(request)
        policy = self.choice.approval or ("ask" if self.approver is not None else "deny")
        if policy != "ask" or self.approver is None:
            answer, by = ApprovalAnswer("deny"), "policy"
        else:
            try:
                answer, by = await self.approver(request), "user"
            except BaseException:
                self.emit(_resolved(request, ApprovalAnswer("deny"), "interrupted"))
                raise
            if answer.decision not in DECISIONS:
                answer = ApprovalAnswer("deny", "an unknown decision")
        self.emit(_resolved(request, answer, by))
        return answer, by


def _resolved(request: E.ApprovalRequest, answer: ApprovalAnswer, by: str) -> E.ApprovalResolved:
    return E.ApprovalResolved(
        request_id=request.request_id,
        call_id=request.call_id,
        decision=answer.decision,
        by=by,
        reason=answer.reason,
    )


def _denial(tool: str, need: _Need, answer: ApprovalAnswer, by: str) -> str:
    if by == "policy":
        return (
            f"{tool} was not run: it needs a person's approval ({need.why}), and nobody can "
            "approve in this session (its approval policy refuses). Find another way that does "
            "not need it, or say in your answer what needs the user's approval."
        )
    said = f": {answer.reason}" if answer.reason else ""
    return (
        f"{tool} was not run: the user denied it{said}. Do not retry the same call; adjust "
        "your approach, or ask the user."
    )


def _arguments(call: ToolCall) -> dict[str, Any] | None:
    try:
        value = orjson.loads(call.arguments or "{}")
    except orjson.JSONDecodeError:
        return None
    return value if isinstance(value, dict) else None
