"""What the sub-agent manager needs from the assembly: a way to open a child's session.

The assembly (`xum.workspaces.assembly`) opens every session, a child's too, and it is also the
module that makes the manager (on a session's first real use of its host). So the manager does
not import the assembly: whoever makes a `SubAgentManager` hands it the opener
(`assembly.subagent_manager` passes `open_workspace_session`). These protocols are the part of
that function and of what it returns that the manager relies on.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from xum.context.workspace import AgentSelection
    from xum.engine.agent import WorkspaceInfo
    from xum.engine.events import EventSink
    from xum.engine.records import QueueMode, TurnResult
    from xum.engine.route import ModelRoute
    from xum.llm.client import LLMClient
    from xum.llm.types import ThinkingLevel
    from xum.runtime.base import Runtime
    from xum.store.registry import WorkspaceRecord
    from xum.store.sessionlog import SessionLog
    from xum.tools.tasking import SubAgentHost
    from xum.workspaces.init_hook import InitHookRun
    from xum.workspaces.safety.choice import SafetyChoice
    from xum.workspaces.wiring import SessionWiring


class ChildSession(Protocol):
    """What the manager and the hosts drive of a child's agent: xum's own `AgentSession`, or an
    external ACP agent (`xum.workspaces.external.agent.ExternalAgent`) for a child whose record
    names one."""

    @property
    def running(self) -> bool: ...

    async def run_turn(self, text: str) -> TurnResult: ...

    def interrupt(self) -> None: ...

    def queue_message(self, text: str, when: QueueMode = "step") -> None: ...

    def take_step_queue(self) -> list[str]: ...

    def take_turn_queue(self) -> list[str]: ...


class OpenedSession(Protocol):
    """An open child session and every part it owns (the assembly's `WorkspaceSession`)."""

    @property
    def agent(self) -> ChildSession: ...

    @property
    def log(self) -> SessionLog: ...

    @property
    def host(self) -> SubAgentHost | None: ...

    async def aclose(self) -> None:
        """Close the session and everything it owns."""
        ...


class SessionOpener(Protocol):
    """Opens the session of a child's workspace record (`open_workspace_session`)."""

    def __call__(
        self,
        record: WorkspaceRecord,
        *,
        route: ModelRoute,
        thinking: ThinkingLevel,
        emit: EventSink,
        runtime: Runtime | None,
        client: LLMClient | None,
        init: InitHookRun | None,
        selection: AgentSelection | None,
        budget_usd: float | None,
        make_host: Callable[[WorkspaceInfo, SessionWiring], SubAgentHost] | None,
        is_git: bool | None,
        purpose: str,
        safety: SafetyChoice,
    ) -> Awaitable[OpenedSession]: ...
