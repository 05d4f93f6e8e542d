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
    from xum.context.slash import CompactCommand

    command = prepared.command
    if not isinstance(command, CompactCommand):
        assert command is not None
        return await session.compactor.clear(soft=command.soft)
    result = await session.compactor.compaction_turn(
        "manual", max_tokens=command.max_tokens, model=command.model
    )
    if command.follow_up is None or result.reason != "completed":
        return result
    # The continue message goes out once the summary is in; it is kept nowhere else.
    follow = await run_message(session, command.follow_up)
    return follow.after(result)


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
