"""What may hold a sub-agent back before it runs, across the whole process.

The host layer's governor (`xum.host.governor.WorkspaceGate`) implements it; the assembly hands
it to the sub-agent manager, which takes a permit for each child turn, after the parent's own
slot (`tasks.maxRunningChildren`). Without one, only the per-parent cap applies.
"""

from __future__ import annotations

from typing import Protocol

from xum.llm.gate import Permit


class SubagentGate(Protocol):
    async def acquire_subagent(self, child_id: str) -> Permit:
        """Wait until one more sub-agent may run in the process, then hold its slot."""
        ...
