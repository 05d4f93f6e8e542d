"""How a `xum run` ends: its exit code, its reason and the fields of its terminal event.

Exit codes: 0 success (a goal run: the goal is complete; or the code the agent chose with
`set_exit_code`), 1 operational, model or tool error (usage errors too), 2 the session
`--budget` was exceeded, 3 a goal run stopped with its goal incomplete at a goal limit, 130
interrupted.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from xum.core.errors import XumError

EXIT_OK, EXIT_ERROR, EXIT_BUDGET, EXIT_GOAL_INCOMPLETE, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class InternalError(XumError):
    """Something xum did not expect; the traceback goes to stderr."""

    code = "internal_error"


@dataclass
class RunOutcome:
    """How a run ended: the process exit code, the reason, and the final event's fields; or,
    for a run that could not run a turn, the error that stopped it."""

    exit_code: int
    reason: str
    extra: dict[str, Any] = field(default_factory=dict)
    failure: XumError | None = None

    @classmethod
    def failed(
        cls, error: XumError, exit_code: int = EXIT_ERROR, reason: str = "error"
    ) -> RunOutcome:
        return cls(exit_code, reason, failure=error)

    def terminal_event(self, elapsed_s: float) -> dict[str, Any]:
        """The last line of `--json` output: `error` when no turn ran, else `final`."""
        head = {
            "reason": self.reason,
            "exit_code": self.exit_code,
            "duration_s": round(elapsed_s, 3),
        }
        if self.failure is not None:
            return {"type": "error", **head, **self.failure.to_dict()}
        return {"type": "final", **head, **self.extra}


def limit_line(extra: dict[str, Any]) -> str | None:
    """The stderr line naming the limit that stopped a run, when one did."""
    limit = extra.get("limit")
    if not isinstance(limit, dict):
        return None
    kind = limit.get("kind")
    if kind == "session_budget":
        return f"stopped: the session budget (--budget ${limit.get('budget_usd')}) was exceeded"
    if kind == "goal_budget":
        cents = int(limit.get("budget_cents") or 0)
        return f"stopped: the goal budget (${cents / 100:.2f}) is spent; the goal is incomplete"
    if kind == "goal_turns":
        return (
            f"stopped: the goal's {limit.get('turn_cap')} continuation turns are used; "
            "the goal is incomplete"
        )
    return None
