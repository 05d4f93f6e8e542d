"""Sub-agent caps, which task tools a session is offered, and a host made on first use.

Most sessions never start a sub-agent. Until one does, a top-level session only asks its host
which task tools to offer and what the rest of its tree costs (nothing: it has no children
yet). `DeferredHost` answers those itself and makes the real host (`xum.workspaces.subagents`,
imported then) the first time anything else is asked, which keeps the sub-agent machinery off
`xum run`'s start-up path.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from xum.store.config import load_config
from xum.tools.tasking import CHILD_TOOLS, HOST_TOOLS, ChangeSignal, DispatchMode, SubAgentHost

if TYPE_CHECKING:
    from xum.tools.tasking import PatchOutcome, TaskSpec, TaskView

DEFAULT_MAX_DEPTH = 3
DEFAULT_MAX_RUNNING = 4


@dataclass(frozen=True)
class TaskSettings:
    """The sub-agent caps (`config.json` `tasks`)."""

    max_depth: int = DEFAULT_MAX_DEPTH
    max_running: int = DEFAULT_MAX_RUNNING

    @classmethod
    def from_config(cls, config: dict[str, Any] | None = None) -> TaskSettings:
        """config.json `{"tasks": {"maxNestingDepth": 3, "maxRunningChildren": 4}}`; values
        that are not positive integers are ignored (the defaults apply)."""
        section = (load_config() if config is None else config).get("tasks")
        if not isinstance(section, dict):
            return cls()

        def number(key: str, default: int, low: int) -> int:
            value = section.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value >= low:
                return value
            return default

        return cls(
            max_depth=number("maxNestingDepth", DEFAULT_MAX_DEPTH, 0),
            max_running=number("maxRunningChildren", DEFAULT_MAX_RUNNING, 1),
        )


def offered_at(tool_name: str, *, depth: int, max_depth: int, child: bool) -> bool:
    """Whether a session at nesting `depth` (a sub-agent when `child`) may be offered a tool:
    agent_report only to sub-agents, the task tools only below the depth cap."""
    if tool_name in CHILD_TOOLS:
        return child
    if tool_name in HOST_TOOLS or tool_name.startswith("task_"):
        return depth < max_depth
    return True


class DeferredHost:
    """A top-level session's `SubAgentHost`, made by `make()` on first real use."""

    depth = 0

    def __init__(
        self, workspace_id: str, make: Callable[[], SubAgentHost], *, settings: TaskSettings
    ) -> None:
        self.workspace_id = workspace_id
        self.settings = settings
        self._make = make
        self._host: SubAgentHost | None = None
        self._own_cost = 0.0

    @property
    def made(self) -> bool:
        return self._host is not None

    def host(self) -> SubAgentHost:
        if self._host is None:
            self._host = self._make()
            self._host.note_cost(self._own_cost)
        return self._host

    # Answered without the real host while there is none --------------------------------------

    def offers(self, tool_name: str) -> bool:
        return offered_at(tool_name, depth=0, max_depth=self.settings.max_depth, child=False)

    def note_cost(self, own_cost_usd: float) -> None:
        self._own_cost = own_cost_usd
        if self._host is not None:
            self._host.note_cost(own_cost_usd)

    def external_cost_usd(self) -> float:
        # Without a real host there are no children, so nothing else in the tree costs anything.
        return 0.0 if self._host is None else self._host.external_cost_usd()

    # Everything else is the real host's --------------------------------------------------------

    @property
    def signal(self) -> ChangeSignal:
        return self.host().signal

    async def spawn(self, spec: TaskSpec) -> list[str]:
        return await self.host().spawn(spec)

    def children(self, *, include_inactive: bool = True) -> list[str]:
        return self.host().children(include_inactive=include_inactive)

    def view(self, task_id: str, *, consume_reports: bool = False) -> TaskView:
        return self.host().view(task_id, consume_reports=consume_reports)

    def is_ready(self, task_id: str) -> bool:
        return self.host().is_ready(task_id)

    async def send_message(self, task_id: str, message: str, *, dispatch: DispatchMode) -> str:
        return await self.host().send_message(task_id, message, dispatch=dispatch)

    async def stop(self, task_ids: Sequence[str]) -> list[TaskView]:
        return await self.host().stop(task_ids)

    def stop_nowait(self, task_ids: Sequence[str]) -> None:
        self.host().stop_nowait(task_ids)

    async def remove(self, task_ids: Sequence[str]) -> list[str]:
        return await self.host().remove(task_ids)

    def retitle(self, task_id: str, title: str) -> None:
        self.host().retitle(task_id, title)

    def report(self, markdown: str, title: str | None) -> None:
        self.host().report(markdown, title)

    async def apply_patch(
        self,
        task_id: str,
        *,
        dry_run: bool,
        expected_head_sha: str | None,
        three_way: bool,
        force: bool,
    ) -> PatchOutcome:
        return await self.host().apply_patch(
            task_id,
            dry_run=dry_run,
            expected_head_sha=expected_head_sha,
            three_way=three_way,
            force=force,
        )
