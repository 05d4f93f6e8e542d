"""The request gate: what may hold a request back before it is sent, across sessions.

The llm layer knows nothing of workspaces or of the process's other sessions. The host layer
(`xum.host.governor`) implements `RequestGate` and puts the gate of the workspace whose turn
runs into `request_gate`; every wire client reads it before each attempt (`WireClient.stream`).
A context variable rather than a constructor argument because a session opens clients in
several places (its own, a switched model's, a compaction model's, a sub-agent's on another
endpoint): each one made or used inside the turn's task gets the same gate without being
handed it. With no gate set (tests, library use), requests go out at once, as before.
"""

from __future__ import annotations

from contextvars import ContextVar
from typing import Protocol


class Permit(Protocol):
    """A slot held while one attempt is in flight; released exactly once when it ends."""

    def release(self) -> None: ...


class RequestGate(Protocol):
    async def acquire(self, provider: str, model: str) -> Permit:
        """Wait until a request to `provider`/`model` may go out (a free slot, no pause in
        force), then hold a slot for it. Cancelling the wait gives nothing back to release."""
        ...

    def report_rate_limited(self, provider: str, model: str, retry_after_s: float | None) -> None:
        """The provider answered 429 or "overloaded" (asking to wait `retry_after_s`, when it
        said): the gate may pause every session's requests to it for that long."""
        ...


request_gate: ContextVar[RequestGate | None] = ContextVar("xum_request_gate", default=None)
