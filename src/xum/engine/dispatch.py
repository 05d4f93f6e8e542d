"""From a typed message to what the session does with it.

Plain text is a turn. A slash command is read first (`xum.engine.userinput`): `/compact` and
`/clear` are carried out by the session's compactor, a one-shot `/<alias>+<level>` override runs
one turn with another model or thinking level (a `TurnOverride` the turn carries; the session's
own model is untouched), a skill invocation becomes the skill's body (its `!`command`` lines run
when the workspace allows it), and `$skill` references in a plain message attach the skills they
name (`xum.engine.skillinput`), and `@server:uri` mentions the MCP resources
(`xum.engine.resource_mentions`). A message that would start
at or above the model's auto-compaction threshold gets a compaction turn before it (the docs'
"compact first, then send").
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from xum.engine.compaction import Compactor
from xum.engine.goals import Goals
from xum.engine.records import TurnResult
from xum.engine.turnhost import TurnHost

if TYPE_CHECKING:
    from xum.context.slash import GoalCommand
    from xum.core.images import ImagePart
    from xum.engine.userinput import PreparedMessage
    from xum.tools.mcp_host import McpHost


class MessageHost(TurnHost, Protocol):
    """A session as its message dispatch sees it: turns, plus its compactor and goals."""

    @property
    def compactor(self) -> Compactor: ...
    @property
    def goals(self) -> Goals: ...
    @property
    def mcp(self) -> McpHost | None: ...


async def run_message(
    session: MessageHost, text: str, images: Sequence[ImagePart] = ()
) -> TurnResult:
    if not text.lstrip().startswith("/"):
        referenced = None
        if "$" in text:  # `$skill` references; the import only when a message could have one
            from xum.engine.skillinput import with_references

            referenced = await with_references(session, text)
        if "@" in text and session.mcp is not None:  # `@server:uri` MCP resources
            from xum.engine.resource_mentions import with_resource_mentions

            referenced = await with_resource_mentions(session.mcp, text, referenced) or referenced
        if referenced is not None:
            stopped = await compact_before(session, referenced.text)
            return stopped or await session.agent_turn(
                referenced.text, prepared=referenced, images=images
            )
        stopped = await compact_before(session, text)
        return stopped or await session.agent_turn(text, images=images)
    from xum.engine.skillinput import with_dynamic_context
    from xum.engine.userinput import prepare_message  # slash commands only: off start-up

    prepared = prepare_message(
        text,
        skills=await session.context.provider.skill_catalog(),
        route=session.route,
        thinking=session.thinking,
        resolve_model=session.resolve_model,
    )
    if prepared.command is not None:
        if images:
            from xum.core.errors import UsageError

            raise UsageError(
                "images cannot go with a chat command", hint="send them in a plain message"
            )
        return await _session_command(session, prepared)
    prepared = await with_dynamic_context(session, prepared)
    stopped = await compact_before(session, prepared.text)
    if stopped is not None:
        return stopped
    return await session.agent_turn(
        prepared.text, prepared=prepared, override=prepared.override, images=images
    )


async def compact_before(session: MessageHost, text: str) -> TurnResult | None:
    """Compact first when `text` would start at or above the threshold. A compaction that failed
    is reported (its turn ends with the error) and the message is sent anyway; one the budget
    stopped is returned instead, and the message is not sent."""
    if not session.compactor.due_before_send(text):
        return None
    result = await session.compactor.compaction_turn("auto")
    return result if result.reason == "budget" else None


async def _session_command(session: MessageHost, prepared: PreparedMessage) -> TurnResult:
    from xum.context.slash import ClearCommand, CompactCommand, GoalCommand

    command = prepared.command
    if isinstance(command, ClearCommand):
        return await session.compactor.clear(soft=command.soft)
    if isinstance(command, GoalCommand):
        return await _goal_command(session, command)
    assert isinstance(command, CompactCommand)
    result = await session.compactor.compaction_turn(
        "manual", max_tokens=command.max_tokens, model=command.model
    )
    if command.follow_up is None or result.reason != "completed":
        return result
    # The continue message goes out once the summary is in; it is kept nowhere else.
    follow = await run_message(session, command.follow_up)
    return follow.after(result)


async def _goal_command(session: MessageHost, command: GoalCommand) -> TurnResult:
    """`/goal <objective>`: set the goal and start on it (the front-end's goal loop continues
    it); `/goal clear`: drop the running goal. UsageError where goals are not offered."""
    from xum.core.errors import UsageError
    from xum.core.ids import sortable_id

    if not session.settings.goals:
        raise UsageError(
            "goals are not available here",
            hint="use /goal in the browser UI (xum server), or xum run --goal",
        )
    if command.objective is None:
        await session.goals.finish("cleared", "cleared by the user")
        result = TurnResult(turn_id=sortable_id(), reason="completed")
        result.kind = "command"
        return result
    if command.budget_cents is not None and not session.goals.priced:
        raise UsageError(
            f"{session.route.model_string} has no known price, so a goal budget cannot be enforced",
            hint="give /goal --turns <n> instead, or add the model's price (modelPrices)",
        )
    await session.goals.set(
        command.objective,
        budget_cents=command.budget_cents,
        turn_cap=command.turn_cap,
        source="user",
    )
    return await run_message(session, command.objective)
