"""From a typed message to what the session does with it.

Plain text is a turn. A slash command is read first (`xum.engine.userinput`): `/compact` and
`/clear` are carried out by the session's compactor, a one-shot `/<alias>+<level>` override runs
one turn with another model or thinking level, a skill invocation becomes the skill's body. A
message that would start at or above the model's auto-compaction threshold gets a compaction turn
before it (the docs' "compact first, then send").
"""

from __future__ import annotations

from collections.abc import Coroutine
from typing import TYPE_CHECKING, Any

from xum.engine.turn import TurnResult
from xum.llm.client import open_client

if TYPE_CHECKING:
    from xum.context.slash import GoalCommand
    from xum.engine.session import AgentSession
    from xum.engine.userinput import PreparedMessage, TurnOverride


async def run_message(session: AgentSession, text: str) -> TurnResult:
    if not text.lstrip().startswith("/"):
        stopped = await compact_before(session, text)
        return stopped or await session._run_turn(text)
    from xum.engine.userinput import prepare_message  # slash commands only: off start-up

    prepared = prepare_message(
        text,
        skills=await session.context.provider.skill_catalog(),
        route=session.route,
        thinking=session.settings.thinking,
        resolve_model=session.resolve_model,
    )
    if prepared.command is not None:
        return await _session_command(session, prepared)
    stopped = await compact_before(session, prepared.text)
    if stopped is not None:
        return stopped
    if prepared.override is None:
        return await session._run_turn(prepared.text, prepared)
    turn = session._run_turn(prepared.text, prepared)
    return await _with_override(session, prepared.override, turn)


async def compact_before(session: AgentSession, text: str) -> TurnResult | None:
    """Compact first when `text` would start at or above the threshold. A compaction that failed
    is reported (its turn ends with the error) and the message is sent anyway; one the budget
    stopped is returned instead, and the message is not sent."""
    if not session.compactor.due_before_send(text):
        return None
    result = await session.compactor.compaction_turn("auto")
    return result if result.reason == "budget" else None


async def _session_command(session: AgentSession, prepared: PreparedMessage) -> TurnResult:
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


async def _goal_command(session: AgentSession, command: GoalCommand) -> TurnResult:
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


async def _with_override(
    session: AgentSession, override: TurnOverride, turn: Coroutine[Any, Any, TurnResult]
) -> TurnResult:
    saved = (session.route, session.client, session.settings.thinking)
    own_client = override.route.endpoint != session.route.endpoint
    client = open_client(override.route.endpoint) if own_client else session.client
    session.route, session.client, session.settings.thinking = (
        override.route,
        client,
        override.thinking,
    )
    try:
        return await turn
    finally:
        session.route, session.client, session.settings.thinking = saved
        if own_client:
            await client.aclose()
