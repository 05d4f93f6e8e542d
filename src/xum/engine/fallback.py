"""Refusal fallbacks: when a model refuses, the turn goes on with the next model of its chain.

A refusal is a reply whose finish reason is `refusal` (Anthropic's `stop_reason: "refusal"`, an
OpenAI refusal part or delta; each wire's parser maps it) or a provider error of kind `refused`
(a request rejected on content-policy grounds). Quota, auth and network errors are other kinds
and never get here.

The chain is the one config.json `modelFallbacks` gives the model the turn started with
(`xum.engine.fallback_config`); each refusal moves to the next model of it that has not refused
in this turn. The switch is the turn's own (`Turn.model`, as a one-shot override is): the
session's model is untouched and the next turn starts on it again.

What the log keeps: the refused step's request frames and a `model_fallback` frame holding the
refused reply, its usage and its cost priced as the model that wrote it. The refused reply is
not an `assistant_message`, so no later request carries it (a model shown another's refusal
tends to repeat it) and the log replays as it ran. When the chain is spent (or its next model
cannot be used), the last refusal is committed as the ordinary reply it is and the turn ends
with an error that says so.
"""

from __future__ import annotations

from xum.core.errors import XumError
from xum.core.messages import Message
from xum.engine.commits import Commits
from xum.engine.envelope import ModelChoice, Turn
from xum.engine.fallback_config import HINT, chain_for
from xum.engine.ledger import BudgetExceeded
from xum.engine.records import TurnResult
from xum.engine.route import ModelRoute
from xum.engine.turnhost import TurnHost
from xum.llm.client import open_client
from xum.llm.errors import LLMError
from xum.llm.types import Finish
from xum.store import frame_types as ev
from xum.store.config import load_config

NOT_RUN_OUTPUT = "not run: the model refused and no fallback model was left to retry the step"


class Fallbacks:
    """The refusal handling of one session (its turn loop calls `after_refusal`)."""

    def __init__(self, host: TurnHost, commits: Commits) -> None:
        self.host = host
        self.commits = commits

    async def after_reply(self, result: TurnResult, step: int, finish: Finish) -> bool:
        """After a finished reply: True when it was a refusal and the turn moved to the next
        model of the chain (retry the step); False for any other reply."""
        return finish.reason == "refusal" and await self.after_refusal(result, step, finish)

    async def after_error(self, result: TurnResult, step: int, error: LLMError) -> bool:
        """After a provider error: True when it was a content-policy refusal and the turn moved
        to the next model of the chain; False for every other error (quota, auth, network...),
        which ends the turn as before."""
        return error.kind == "refused" and await self.after_refusal(result, step, error=error)

    async def after_refusal(
        self,
        result: TurnResult,
        step: int,
        finish: Finish | None = None,
        error: LLMError | None = None,
    ) -> bool:
        """The running turn's model refused step `step` (a `finish` that ended in a refusal,
        or an `error` of kind `refused`). True: the refusal is recorded and the turn now runs
        on the next model of the chain; retry the step. False: the model has no chain, so the
        refusal is handled as before (a reply committed, an error raised). Raises LLMError when
        every model of the chain has refused or the next one cannot be used."""
        turn = self.host.envelope.current
        assert turn is not None, "a refusal arrives inside a turn"
        current = turn.model.route
        turn.refused.append(current.model_string)
        try:
            chain = chain_for(turn.refused[0], load_config())
        except XumError as exc:  # config.json changed under the session and is wrong now
            raise LLMError("config", exc.message, hint=exc.hint) from None
        if not chain:
            return False
        target = next((m for m in chain if m not in turn.refused), None)
        why = _why(finish)
        if target is None:
            await self._keep_last(result, current, step, finish)
            raise LLMError(
                "refused",
                f"{current.model_string} refused{why}, and so did every model of the fallback "
                f"chain of {turn.refused[0]} ({', '.join(chain)})",
                provider=current.provider,
                hint="rephrase the request or choose another model; " + HINT,
            )
        try:
            route = self.host.resolve_model(target)
        except XumError as exc:
            await self._keep_last(result, current, step, finish)
            raise LLMError(
                "config",
                f"{current.model_string} refused{why}; its fallback {target} cannot be used: "
                f"{exc.message}",
                hint=exc.hint or HINT,
            ) from None
        if finish is not None and self._spends_the_budget(current, finish):
            # No retry the budget cannot pay for: the refusal is the reply, the turn stops.
            await self._keep_last(result, current, step, finish)
            raise BudgetExceeded()
        await self._record(result, turn, step, route, finish, error)
        return True

    def _spends_the_budget(self, route: ModelRoute, finish: Finish) -> bool:
        """Whether, once `finish` is paid for, the budget is spent or can no longer be told."""
        ledger = self.host.ledger
        if ledger.budget_usd is None:
            return False
        cost = route.cost(finish.usage) if finish.usage_reported else None
        return not ledger.cost_known or cost is None or ledger.total() + cost > ledger.budget_usd

    async def _record(
        self,
        result: TurnResult,
        turn: Turn,
        step: int,
        route: ModelRoute,
        finish: Finish | None,
        error: LLMError | None,
    ) -> None:
        """Put the refusal on record (the step's request frames and a `model_fallback`), charge
        it to the model that refused, and move the turn to `route`."""
        refused = turn.model.route
        empty: Message = {"role": "assistant", "content": []}
        data: ev.ModelFallbackData = {
            "turn_id": result.turn_id,
            "step": step,
            "from_model": refused.model_string,
            "to_model": route.model_string,
            "message": finish.message if finish is not None else empty,
            "finish_reason": finish.reason if finish is not None else "refused",
        }
        cost: float | None = None
        if finish is not None:
            data["raw_finish_reason"] = finish.raw_reason
            details = finish.stop_details or {}
            category, explanation = details.get("category"), details.get("explanation")
            if isinstance(category, str) and category:
                data["category"] = category
            if isinstance(explanation, str) and explanation:
                data["explanation"] = explanation
            # Priced as the model that wrote it; a reply whose provider counted nothing has an
            # unknown cost, never a zero one.
            cost = refused.cost(finish.usage) if finish.usage_reported else None
            data["usage"] = finish.usage.to_dict()
            data["cost_usd"] = cost
        elif error is not None:
            data["explanation"] = error.message
        steps = self.commits.steps
        await self.host.recorder.append([*steps.take(), ev.spec(ev.MODEL_FALLBACK, data)])
        steps.recorded()
        self.host.log.delete_partial()
        if finish is not None:
            self.host.ledger.account(result, finish.usage, cost, model=refused.model_string)
        client = turn.model.client
        if route.endpoint != client.endpoint:
            client = open_client(route.endpoint)
            turn.clients.append(client)
        turn.model = ModelChoice(route, client, turn.model.thinking)

    async def _keep_last(
        self, result: TurnResult, route: ModelRoute, step: int, finish: Finish | None
    ) -> None:
        """No retry: the last refusal is committed as the reply it is (an error leaves nothing
        to commit; the turn's end records its request)."""
        if finish is None:
            return
        calls = await self.commits.reply(result, route, step, finish)
        self.commits.close_calls(calls, NOT_RUN_OUTPUT)


def _why(finish: Finish | None) -> str:
    """The provider's refusal category for a message, when it gave one."""
    category = (finish.stop_details or {}).get("category") if finish is not None else None
    return f" ({category})" if isinstance(category, str) and category else ""
