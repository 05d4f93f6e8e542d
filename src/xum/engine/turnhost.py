"""What the parts of the engine may use of the session they serve, as protocols.

`AgentSession` (`xum.engine.agent`) is built from parts: the compactor (`compaction`), the goal
service (`goals`), the message dispatch (`dispatch`) and the tool-call runner (`calls`). Each is
given the session as one of these protocols and never imports `AgentSession`, so the session
depends on its parts and not the other way round (tests/test_layers.py holds that).

- `TurnHost`: opening a turn in the envelope (`xum.engine.envelope`), running an agent turn, and
  the log, the recorder and the model the turns use;
- `ToolHost`: that, plus what a tool call's context is made of.

Every member is read-only: a part asks the session for a turn, it does not set its state.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractAsyncContextManager
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from xum.engine.contextsync import ContextSync
from xum.engine.envelope import Turn, TurnEnvelope, TurnKind
from xum.engine.events import EventSink
from xum.engine.extensions import ToolMiddleware
from xum.engine.ledger import Ledger
from xum.engine.planmode import TurnRules
from xum.engine.recorder import Recorder
from xum.engine.records import SessionSettings, TurnResult, WorkspaceInfo
from xum.engine.route import ModelRoute
from xum.llm.client import LLMClient
from xum.llm.types import ThinkingLevel
from xum.runtime.base import Runtime
from xum.store import frame_types as ev
from xum.store.projection import HistoryProjection
from xum.store.sessionlog import SessionLog
from xum.tools.tasking import SubAgentHost

if TYPE_CHECKING:
    from xum.core.images import ImagePart
    from xum.engine.userinput import PreparedMessage, TurnOverride
    from xum.tools.background import BackgroundProcesses
    from xum.tools.base import AskUser, GoalAccess, SkillAccess, TodoItem
    from xum.tools.live import LiveOutputs
    from xum.tools.mcp_host import McpHost


class TurnHost(Protocol):
    """A session as its compactor, goal service and dispatch see it."""

    @property
    def log(self) -> SessionLog: ...
    @property
    def recorder(self) -> Recorder: ...
    @property
    def emit(self) -> EventSink: ...
    @property
    def envelope(self) -> TurnEnvelope: ...
    @property
    def running(self) -> bool: ...
    @property
    def route(self) -> ModelRoute:
        """The running turn's model (an override's, for a one-shot message), else the
        session's."""

    @property
    def client(self) -> LLMClient: ...
    @property
    def thinking(self) -> ThinkingLevel: ...
    @property
    def settings(self) -> SessionSettings: ...
    @property
    def workspace(self) -> WorkspaceInfo: ...
    @property
    def ledger(self) -> Ledger: ...
    @property
    def projection(self) -> HistoryProjection: ...
    @property
    def context(self) -> ContextSync: ...
    @property
    def resolve_model(self) -> Callable[[str], ModelRoute]: ...
    @property
    def todos(self) -> list[TodoItem]: ...

    def turn(
        self, result: TurnResult, kind: TurnKind, override: TurnOverride | None = None
    ) -> AbstractAsyncContextManager[Turn]:
        """Open a turn in the envelope with the session's model (or `override`'s)."""
        ...

    async def agent_turn(
        self,
        text: str,
        *,
        prepared: PreparedMessage | None = None,
        synthetic: ev.SyntheticNote | None = None,
        override: TurnOverride | None = None,
        images: Sequence[ImagePart] = (),
    ) -> TurnResult:
        """One turn of steps with tools, `text` being what the model receives."""
        ...


class ToolHost(TurnHost, Protocol):
    """A session as its tool-call runner sees it: what a call's context is made of."""

    @property
    def runtime(self) -> Runtime: ...
    @property
    def base_env(self) -> dict[str, str]: ...
    @property
    def scratch_dir(self) -> Path: ...
    @property
    def offered_tools(self) -> list[str]: ...
    @property
    def live(self) -> LiveOutputs: ...
    @property
    def background(self) -> BackgroundProcesses: ...
    @property
    def middleware(self) -> Sequence[ToolMiddleware]: ...
    @property
    def rules(self) -> TurnRules: ...
    @property
    def set_exit_code(self) -> Callable[[int, str], None] | None: ...
    @property
    def subagents(self) -> SubAgentHost | None: ...
    @property
    def ask_user(self) -> AskUser | None: ...
    @property
    def skills(self) -> SkillAccess | None: ...
    @property
    def goals(self) -> GoalAccess: ...
    @property
    def mcp(self) -> McpHost | None: ...
