"""Messages a user sends while a turn runs.

"step" messages are delivered inside the running turn, as soon as its current tool calls finish
(the model sees them with the results); "turn" messages each run as a turn of their own once the
turn ends. A turn that ends before delivering its "step" messages (an error, the budget, the
step limit) leaves them to run first. An interrupt hands every queued message back to the
front-end instead (`take_all`), so nothing the user wrote is lost or run against their will.
"""

from __future__ import annotations

from xum.engine.records import QueueMode


class MessageQueue:
    def __init__(self) -> None:
        self._step: list[str] = []
        self._turn: list[str] = []

    def put(self, text: str, when: QueueMode) -> None:
        (self._step if when == "step" else self._turn).append(text)

    @property
    def counts(self) -> tuple[int, int]:
        """(after the step, after the turn)."""
        return len(self._step), len(self._turn)

    @property
    def texts(self) -> tuple[tuple[str, ...], tuple[str, ...]]:
        """The waiting messages themselves (after the step, after the turn), oldest first."""
        return tuple(self._step), tuple(self._turn)

    def take_step(self) -> list[str]:
        taken, self._step = self._step, []
        return taken

    def take_turn(self) -> list[str]:
        taken, self._turn = self._turn, []
        return taken

    def take_all(self) -> list[str]:
        """Everything still waiting, in the order it would have run."""
        return self.take_step() + self.take_turn()

    def next_turn(self) -> str | None:
        """The message to run as the next turn: a leftover "step" message first."""
        if self._step:
            return self._step.pop(0)
        if self._turn:
            return self._turn.pop(0)
        return None
