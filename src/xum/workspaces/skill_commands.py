"""Running the ``!`command` `` lines of a skill the user invoked (skill dynamic context, see
`xum.context.skill_directives`) for one workspace session.

The commands come from skill files, which a repository can ship, so they run only when the user
switched the `skillDynamicContext` experiment on in their own config.json and the project is
trusted (the trust that gates project hooks). They run like the agent's `bash`: through the
workspace's runtime (on the SSH host for an SSH workspace), in the working directory, with the
session's command environment, inside the command sandbox the session's settings choose (the
same `SandboxMiddleware` decides), and their output passes the session's secret masking before
anyone sees it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from xum.context.experiments import skill_dynamic_context
from xum.context.skill_directives import MAX_OUTPUT_BYTES, TIMEOUT_S, CommandOutput
from xum.core.ids import sortable_id
from xum.engine.extensions import ToolCall

if TYPE_CHECKING:
    from xum.tools.base import ToolContext
    from xum.workspaces.safety.sandboxing import SandboxMiddleware


class WorkspaceSkillCommands:
    """`xum.context.skill_directives.SkillCommands` for one session."""

    def __init__(
        self,
        *,
        trusted: Callable[[], bool],
        context: Callable[[], ToolContext],
        sandbox: SandboxMiddleware | None,
        mask: Callable[[str], str],
    ) -> None:
        """`context`: a fresh tool context of the session (its runtime and environment);
        `sandbox`: the session's sandbox layer (None: commands run as bash would without one)."""
        self._trusted = trusted
        self._context = context
        self._sandbox = sandbox
        self._mask = mask

    def enabled(self) -> bool:
        return skill_dynamic_context()

    def refusal(self) -> str | None:
        if self._trusted():
            return None
        return (
            "the project is not trusted, so commands from its skills do not run (trust it with "
            "`xum trust`, or in the browser UI)"
        )

    async def run(self, command: str) -> CommandOutput:
        # The tool machinery loads with the first command, not when a session opens.
        from xum.tools.base import ToolResult

        ctx = self._context()
        if self._sandbox is not None:
            call = ToolCall(id=f"skill-{sortable_id()}", name="bash", arguments="{}")
            decided = await self._sandbox.before_tool(call, ctx)
            if isinstance(decided, ToolResult):
                # The sandbox refused (it is required and unavailable, or misconfigured).
                return CommandOutput(self._mask(decided.output), exit_code=None)
            if decided is not None:
                ctx = decided
        chunks: list[bytes] = []
        size = 0

        def keep(data: bytes) -> None:
            nonlocal size
            if size <= MAX_OUTPUT_BYTES:
                chunks.append(data)
            size += len(data)

        try:
            result = await ctx.runtime.exec(
                command, env=dict(ctx.env), timeout_s=TIMEOUT_S, on_output=keep
            )
        except (TimeoutError, OSError) as exc:
            return CommandOutput(self._mask(f"xum could not run it: {exc}"), exit_code=None)
        raw = b"".join(chunks)[:MAX_OUTPUT_BYTES]
        text = self._mask(raw.decode("utf-8", errors="replace"))
        return CommandOutput(
            text,
            exit_code=result.exit_code,
            timed_out=result.timed_out,
            truncated=size > MAX_OUTPUT_BYTES,
        )
