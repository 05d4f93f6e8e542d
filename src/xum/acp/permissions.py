"""Approvals in an editor: a tool call that needs the user becomes a `session/request_permission`.

The request names the waiting tool call (the editor shows it already: the updates pushed so far
are drained first), says what would run and why xum asks, and offers the answers the browser
offers: approve once, always allow (the command's prefix, remembered for this project; only when
one prefix covers it), deny. A prompt cancelled while the request waits (the editor then answers
`cancelled`), an option we never offered, or an editor that fails the request all deny the call:
nothing runs without a yes.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from acp.schema import AllowedOutcome, PermissionOption, ToolCallUpdate

from xum.acp.toolviews import text_content
from xum.workspaces.safety.approvals import ApprovalAnswer

if TYPE_CHECKING:
    from acp.interfaces import Client

    from xum.engine import events as E

log = logging.getLogger("xum.acp")

ONCE, ALWAYS, DENY = "approve-once", "approve-always", "deny"

TITLES = {
    "critical": "Run a critical command?",
    "escalation": "Run this command outside the sandbox?",
    "command": "Run a command outside the allowlist?",
    "write": "Edit a file outside the workspace?",
    "mcp": "Run an MCP tool not marked read-only?",
}


def _body(request: E.ApprovalRequest) -> str:
    fence = "````" if "```" in request.subject else "```"
    lines = [f"{fence}\n{request.subject}\n{fence}", f"Why xum asks: {request.why}"]
    if request.reason:
        lines.append(f"The agent's reason: {request.reason}")
    return "\n\n".join(lines)


class EditorApprover:
    """Asks the editor about one approval request of an ACP session; the session settles the
    host's pending request (`xum.host.pending.Approvals`) with the answer."""

    def __init__(
        self, client: Client, session_id: str, before: Callable[[], Awaitable[None]]
    ) -> None:
        """`before`: waits until the updates pushed so far reached the editor."""
        self.client = client
        self.session_id = session_id
        self.before = before

    async def __call__(self, request: E.ApprovalRequest) -> ApprovalAnswer:
        await self.before()
        options = [PermissionOption(option_id=ONCE, name="Approve once", kind="allow_once")]
        if request.prefix:
            options.append(
                PermissionOption(
                    option_id=ALWAYS,
                    name=f"Always allow `{request.prefix}` in this project",
                    kind="allow_always",
                )
            )
        options.append(PermissionOption(option_id=DENY, name="Deny", kind="reject_once"))
        try:
            reply = await self.client.request_permission(
                session_id=self.session_id,
                tool_call=ToolCallUpdate(
                    tool_call_id=request.call_id,
                    title=TITLES.get(request.kind, "Allow this tool call?"),
                    kind="edit" if request.kind == "write" else "execute",
                    status="pending",
                    content=[text_content(_body(request))],
                ),
                options=options,
            )
        except Exception as exc:  # an editor that cannot ask: nobody said yes
            log.warning("the editor did not ask for approval (%s)", exc)
            return ApprovalAnswer("deny", "the editor could not ask the user")
        outcome = reply.outcome
        if not isinstance(outcome, AllowedOutcome):
            return ApprovalAnswer("deny", "the user did not answer (the prompt was cancelled)")
        if outcome.option_id == ONCE:
            return ApprovalAnswer("once")
        if outcome.option_id == ALWAYS and request.prefix:
            return ApprovalAnswer("always")
        return ApprovalAnswer("deny")
