"""Goals: an objective the session keeps working on across automatic continuation turns until it
is complete or a limit stops it (ADR 0004; the CLI page's Goal Runs).

A goal is set by `xum run --goal` (source `cli`), by `/goal` (source `user`) or by the agent's
`set_goal` tool (source `agent`; a plain `xum run` then adopts it). The agent finishes it with
`complete_goal`. Its state is in the log: `goal` frames (set by a front-end, or a final status
such as `incomplete`) and the results of the goal tools (their `meta.goal`), so it survives a
restart and `xum session` replays it. `GoalTracker` follows both.

After each turn, `decide` says what comes next: the goal is complete; continue (a synthetic
continuation message, counted against the turn cap); wrap up (the goal budget is spent: one
last turn to leave things tidy and say what remains); or stop, naming the limit. A
continuation is a turn of its own (`continue_turn`, kind "continuation"), in the same envelope
as the user's. The workspace host's drive loop (`xum.host.workspace_host`), under every
front-end, calls `after_turn` and then `continue_turn` until the goal ends. The interactive cooldown of
the docs' `/goal` is not applied anywhere (the process, or the user watching, is the boundary).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Literal

from xum.core.ids import random_suffix
from xum.engine import events as E
from xum.engine.records import TurnResult
from xum.engine.turnhost import TurnHost
from xum.store import frame_types as ev
from xum.store.follower import FrameSource, LogFollower
from xum.store.frames import Frame

GOAL_TOOLS = frozenset({"set_goal", "get_goal", "complete_goal"})
CONTINUATION_KIND = "goal_continuation"
GoalStatus = Literal["active", "budget_limited", "complete", "incomplete", "cleared"]
LIVE_STATUSES = frozenset({"active", "budget_limited"})
StopReason = Literal["goal_budget", "goal_turns", "session_budget", "error", "interrupted"]


@dataclass(frozen=True, slots=True)
class Goal:
    """A session's goal: its objective, limits and where it stands."""

    id: str
    objective: str
    status: GoalStatus
    budget_cents: int | None
    turn_cap: int | None
    source: str  # "cli", "user" or "agent"
    base_usd: float  # what the session (and its task tree) had cost when the goal was set
    summary: str | None = None  # complete_goal's justification
    reason: str | None = None  # why it stopped incomplete
    turns: int = 0  # continuation turns so far

    @property
    def live(self) -> bool:
        return self.status in LIVE_STATUSES

    def to_json(self) -> dict[str, Any]:
        """The goal as the tools and the frames carry it (camelCase, like the tool inputs)."""
        out: dict[str, Any] = {
            "goalId": self.id,
            "objective": self.objective,
            "status": self.status,
            "budgetCents": self.budget_cents,
            "turnCap": self.turn_cap,
            "source": self.source,
            "baseUsd": round(self.base_usd, 6),
        }
        if self.summary is not None:
            out["summary"] = self.summary
        if self.reason is not None:
            out["reason"] = self.reason
        return out


def new_goal_id() -> str:
    return "goal-" + random_suffix(8)


def goal_from_json(data: Any, turns: int = 0) -> Goal | None:
    """A goal snapshot from a frame or a tool result (None when it is not one)."""
    if not isinstance(data, dict):
        return None
    goal_id, objective, status = data.get("goalId"), data.get("objective"), data.get("status")
    if not isinstance(goal_id, str) or not isinstance(objective, str):
        return None
    if status not in ("active", "budget_limited", "complete", "incomplete", "cleared"):
        return None
    budget, cap, base = data.get("budgetCents"), data.get("turnCap"), data.get("baseUsd")
    summary, reason = data.get("summary"), data.get("reason")
    return Goal(
        id=goal_id,
        objective=objective,
        status=status,
        budget_cents=budget if isinstance(budget, int) else None,
        turn_cap=cap if isinstance(cap, int) else None,
        source=str(data.get("source", "agent")),
        base_usd=float(base) if isinstance(base, int | float) else 0.0,
        summary=summary if isinstance(summary, str) else None,
        reason=reason if isinstance(reason, str) else None,
        turns=turns,
    )


class GoalTracker(LogFollower):
    """The current goal, following the log incrementally (like the history projection)."""

    def reset(self) -> None:
        super().reset()
        self.goal: Goal | None = None

    def update(self, log: FrameSource) -> Goal | None:
        self.follow(log)
        return self.goal

    def _apply(self, frame: Frame) -> None:
        if frame.type not in _GOAL_KINDS or (
            frame.type == ev.TOOL_RESULT and not frame.may_contain(b'_goal"')
        ):
            return  # nothing a goal follows: no need to decode a lazy frame's data
        data = frame.data
        snapshot: Any = None
        if frame.type == ev.GOAL:
            snapshot = data.get("goal")
        elif frame.type == ev.TOOL_RESULT:
            if not _goal_change(data):
                return
            meta = data.get("meta")
            snapshot = meta.get("goal") if isinstance(meta, dict) else None
        elif frame.type == ev.SYNTHETIC_MESSAGE and data.get("kind") == CONTINUATION_KIND:
            if self.goal is not None and data.get("goal_id") == self.goal.id:
                self.goal = replace(self.goal, turns=self.goal.turns + 1)
            return
        else:
            return
        goal = goal_from_json(snapshot)
        if goal is None:
            return
        if self.goal is not None and goal.id == self.goal.id:
            goal = replace(goal, turns=self.goal.turns)  # the same goal, a new status
        self.goal = goal


_GOAL_KINDS = frozenset({ev.GOAL, ev.TOOL_RESULT, ev.SYNTHETIC_MESSAGE})


def _goal_change(data: dict[str, Any]) -> bool:
    """A successful set_goal or complete_goal result (their `meta.goal` is the new state)."""
    message = data.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    part = content[0] if isinstance(content, list) and content else None
    return (
        isinstance(part, dict)
        and part.get("name") in ("set_goal", "complete_goal")
        and not part.get("is_error")
    )


@dataclass(frozen=True, slots=True)
class Decision:
    """What follows a turn of a goal run."""

    kind: Literal["none", "complete", "continue", "wrap_up", "stop"]
    goal: Goal | None = None
    reason: StopReason | None = None
    text: str = ""  # the continuation message, for "continue" and "wrap_up"


class Goals:
    """A session's goal service: the goal tools' access (`xum.tools.base.GoalAccess`), setting
    goals from front-ends, accounting, and the continuation decision."""

    def __init__(self, session: TurnHost) -> None:
        self.s = session
        self.tracker = GoalTracker()
        self._wrapped_up: str | None = None  # the goal whose wrap-up turn already ran
        self._concluded: set[str] = set()  # goals whose completion was announced

    # What the tools see --------------------------------------------------------------------

    @property
    def current(self) -> Goal | None:
        return self.tracker.update(self.s.log)

    def snapshot(self) -> dict[str, Any] | None:
        goal = self.current
        if goal is None:
            return None
        out = goal.to_json()
        out["spentCents"] = self.spent_cents(goal)
        out["turnsUsed"] = goal.turns
        return out

    @property
    def priced(self) -> bool:
        return self.s.route.price is not None and self.s.ledger.cost_known

    def spent_cents(self, goal: Goal) -> int | None:
        if not self.priced:
            return None
        return round((self.s.ledger.total() - goal.base_usd) * 100)

    def new_goal_json(
        self, objective: str, budget_cents: int | None, turn_cap: int | None
    ) -> dict[str, Any]:
        return self.new_goal(objective, budget_cents, turn_cap, "agent").to_json()

    def new_goal(
        self, objective: str, budget_cents: int | None, turn_cap: int | None, source: str
    ) -> Goal:
        return Goal(
            id=new_goal_id(),
            objective=objective,
            status="active",
            budget_cents=budget_cents,
            turn_cap=turn_cap,
            source=source,
            base_usd=self.s.ledger.total(),
        )

    # Front-ends ---------------------------------------------------------------------------

    async def set(
        self, objective: str, *, budget_cents: int | None, turn_cap: int | None, source: str
    ) -> Goal:
        """Set a new goal (replacing any), recorded in a `goal` frame."""
        goal = self.new_goal(objective, budget_cents, turn_cap, source)
        await self._record(goal)
        return goal

    async def finish(self, status: GoalStatus, reason: str | None = None) -> Goal | None:
        """Record the live goal's final status (a goal run that stopped, `/goal clear`)."""
        goal = self.current
        if goal is None or not goal.live:
            return goal
        ended = replace(goal, status=status, reason=reason)
        await self._record(ended)
        return ended

    async def _record(self, goal: Goal) -> None:
        s = self.s
        spec = ev.spec(ev.GOAL, {"goal": goal.to_json()})
        if s.running or s.log.writing_now:
            await s.recorder.append([spec])
            return
        async with s.envelope.write_lock(f"goal-{goal.id}"):
            await s.recorder.append([spec])

    # Continuations ------------------------------------------------------------------------

    def decide(self, result: TurnResult) -> Decision:
        goal = self.current
        if goal is None:
            return Decision("none")
        if goal.status == "complete":
            return Decision("complete", goal)
        if not goal.live:
            return Decision("none", goal)
        if result.reason == "interrupted":
            return Decision("stop", goal, "interrupted")
        if result.reason == "budget":
            return Decision("stop", goal, "session_budget")
        if result.reason == "error":
            return Decision("stop", goal, "error")
        spent = self.spent_cents(goal)
        if goal.budget_cents is not None and spent is not None and spent >= goal.budget_cents:
            if self._wrapped_up == goal.id:
                return Decision("stop", goal, "goal_budget")
            return Decision("wrap_up", goal, text=_wrap_up_text(goal, spent))
        if goal.turn_cap is not None and goal.turns >= goal.turn_cap:
            return Decision("stop", goal, "goal_turns")
        return Decision("continue", goal, text=_continue_text(goal, spent))

    async def after_turn(self, result: TurnResult) -> Decision:
        """`decide`, plus what the decision means for the record and the front-ends: the goal
        events of the CLI page (`goal-continuing`, `goal-completed` once per goal,
        `goal-incomplete`) and the final `incomplete` status of a goal a limit stopped."""
        decision = self.decide(result)
        goal = decision.goal
        if goal is None or decision.kind == "none":
            return decision
        emit = self.s.emit
        if decision.kind == "complete":
            if goal.id in self._concluded:
                return Decision("none", goal)
            self._concluded.add(goal.id)
            emit(
                E.GoalCompleted(
                    goalId=goal.id,
                    objective=goal.objective,
                    summary=goal.summary,
                    turns=goal.turns,
                    spentCents=self.spent_cents(goal),
                )
            )
        elif decision.kind == "stop":
            ended = await self.finish("incomplete", decision.reason)
            emit(
                E.GoalIncomplete(
                    goalId=goal.id,
                    objective=goal.objective,
                    reason=str(decision.reason),
                    turns=goal.turns,
                    spentCents=self.spent_cents(goal),
                    budgetCents=goal.budget_cents,
                    turnCap=goal.turn_cap,
                )
            )
            decision = replace(decision, goal=ended or goal)
        else:
            emit(
                E.GoalContinuing(
                    goalId=goal.id,
                    turn=goal.turns + 1,
                    turnCap=goal.turn_cap,
                    spentCents=self.spent_cents(goal),
                    budgetCents=goal.budget_cents,
                    wrapUp=decision.kind == "wrap_up",
                )
            )
        return decision

    async def continue_turn(self, decision: Decision) -> TurnResult:
        """Run the continuation (or wrap-up) turn `decide` asked for."""
        goal = decision.goal
        assert goal is not None and decision.kind in ("continue", "wrap_up")
        if decision.kind == "wrap_up":
            self._wrapped_up = goal.id
            if goal.status == "active":
                await self._record(replace(goal, status="budget_limited"))
        return await self.s.agent_turn(
            decision.text, synthetic={"kind": CONTINUATION_KIND, "goal_id": goal.id}
        )


def _money(cents: int | None) -> str:
    return "unknown" if cents is None else f"${cents / 100:.2f}"


def _continue_text(goal: Goal, spent: int | None) -> str:
    limits = []
    if goal.turn_cap is not None:
        limits.append(f"continuation {goal.turns + 1} of at most {goal.turn_cap}")
    if goal.budget_cents is not None:
        limits.append(f"{_money(spent)} of its {_money(goal.budget_cents)} budget spent")
    where = f" ({'; '.join(limits)})" if limits else ""
    return (
        f"<goal-continuation>\nKeep working toward the goal{where}:\n\n{goal.objective}\n\n"
        "Pick up where you left off. When the goal is fully achieved and you have verified it, "
        "call complete_goal with a one or two sentence summary; only that ends the goal. If "
        "something blocks you, say what it is.\n</goal-continuation>"
    )


def _wrap_up_text(goal: Goal, spent: int | None) -> str:
    return (
        f"<goal-continuation>\nThe goal's budget is spent ({_money(spent)} of "
        f"{_money(goal.budget_cents)}):\n\n{goal.objective}\n\nStart nothing new. Leave the work "
        "in a tidy state and summarize what is done and what remains. Call complete_goal only if "
        "the goal really is complete.\n</goal-continuation>"
    )
