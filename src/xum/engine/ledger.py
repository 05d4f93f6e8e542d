"""Cost and budget: what a session has spent, and whether it may spend more.

The budget covers the whole task tree: a session's own replies plus what its sub-agents (and,
for a sub-agent, its ancestors and their other children) cost, as the sub-agent host reports it.
A reply with no known price, or whose provider reported no token usage, makes the session's
cost unknown from then on (it never reads as free); with a budget set, that stops the session. Mid-stream, once the usage reported so far already costs more than the budget allows, the
stream is stopped instead of paid for to the end.

Costs are also kept per model (`by_model`, keyed by `provider:model-id`): each reply is charged
to the model that wrote it, so a turn a refusal moved to a fallback model shows what each cost.
"""

from __future__ import annotations

from collections.abc import Callable

from xum.core.messages import Usage
from xum.engine import events as E
from xum.engine.events import EventSink
from xum.engine.records import TurnResult
from xum.llm.types import UsageUpdate
from xum.tools.tasking import SubAgentHost

PriceOf = Callable[[Usage], float | None]  # `ModelRoute.cost`


class BudgetExceeded(Exception):
    """Raised mid-stream once the usage reported so far already exceeds the budget."""


class Ledger:
    def __init__(
        self,
        *,
        cost: float,
        cost_known: bool,
        budget_usd: float | None,
        subagents: SubAgentHost | None,
        emit: EventSink,
        by_model: dict[str, float] | None = None,
    ) -> None:
        self.session_cost = cost
        # This session's known costs per model (a reply of unknown cost adds nothing here).
        self.by_model: dict[str, float] = dict(by_model or {})
        self.cost_known = cost_known
        self.budget_usd = budget_usd
        self.subagents = subagents
        self.emit = emit

    def tree_cost(self) -> float:
        """What the rest of this session's task tree has cost."""
        return self.subagents.external_cost_usd() if self.subagents is not None else 0.0

    def total(self) -> float:
        """This session and the rest of its tree (what `XUM_COSTS_USD` says)."""
        return self.session_cost + self.tree_cost()

    def over_budget(self) -> bool:
        """Past the budget, or unable to tell: with a budget set, a reply of unknown cost stops
        the session rather than letting it spend without count."""
        budget = self.budget_usd
        return budget is not None and (not self.cost_known or self.total() > budget)

    def account(
        self, result: TurnResult, usage: Usage, cost: float | None, model: str | None = None
    ) -> None:
        """Add one reply to the turn and the session (and to `model`, the one that wrote it),
        tell the tree, and emit `usage`."""
        result.usage.add(usage)
        if model is not None and cost is not None:
            self.by_model[model] = self.by_model.get(model, 0.0) + cost
        if cost is None:
            result.cost_usd = None
            if self.cost_known and self.budget_usd is not None:
                self.emit(
                    E.Advisory(
                        kind="budget-unmeasured",
                        message="the last reply's cost is unknown (the model has no known price, "
                        "or the provider reported no token usage), so the budget can no longer "
                        "be enforced; the session stops here",
                    )
                )
            self.cost_known = False
        else:
            if result.cost_usd is not None:
                result.cost_usd += cost
            self.session_cost += cost
        if self.subagents is not None:
            self.subagents.note_cost(self.session_cost)
        self.emit(
            E.UsageUpdate(
                turn=result.usage.to_dict(),
                turn_cost_usd=result.cost_usd,
                session_cost_usd=self.session_cost if self.cost_known else None,
            )
        )

    def watch(self, price_of: PriceOf) -> Callable[[UsageUpdate], None] | None:
        """A mid-stream usage callback that raises BudgetExceeded; None without a budget."""
        budget = self.budget_usd
        if budget is None:
            return None

        def watch(update: UsageUpdate) -> None:
            cost = price_of(update.usage)
            if cost is not None and self.total() + cost > budget:
                raise BudgetExceeded()

        return watch
