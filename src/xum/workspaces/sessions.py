"""Open an `AgentSession` for a workspace record: one assembly for every front-end.

`xum run` and the server both come here, so a workspace's agent gets the same system prompt,
tools and settings whichever front-end drives it. The caller resolves the route first (so a
missing key fails before anything is written) and owns the client, runtime and log it passes in.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from xum.engine.events import EventSink, null_sink
from xum.engine.middleware import ToolMiddleware
from xum.engine.route import ModelRoute
from xum.engine.session import AgentSession, SessionSettings, WorkspaceInfo
from xum.llm.client import LLMClient
from xum.llm.types import ThinkingLevel
from xum.runtime.base import Runtime
from xum.store.registry import WorkspaceRecord
from xum.store.sessionlog import SessionLog
from xum.workspaces.state import scratch_dir

if TYPE_CHECKING:
    from xum.tools.base import AskUser
    from xum.tools.tasking import SubAgentHost

READ_ONLY_TOOLS = ["file_read", "todo_write", "todo_read", "web_fetch"]
EXEC_TOOLS = [
    "bash",
    "file_read",
    "file_edit_replace_string",
    "file_edit_replace_lines",
    "file_edit_insert",
    "todo_write",
    "todo_read",
    "web_fetch",
    "set_exit_code",
    # Offered only when the session has a sub-agent host (xum.workspaces.subagents).
    "task",
    "task_await",
    "task_list",
    "task_send_message",
    "task_stop",
    "task_remove",
    "task_retitle",
    "task_apply_git_patch",
]


def tools_for_mode(mode: str) -> list[str]:
    return list(READ_ONLY_TOOLS if mode == "plan" else EXEC_TOOLS)


def open_agent_session(
    record: WorkspaceRecord,
    runtime: Runtime,
    *,
    log: SessionLog,
    route: ModelRoute,
    client: LLMClient,
    thinking: ThinkingLevel,
    mode: str = "exec",
    budget_usd: float | None = None,
    emit: EventSink = null_sink,
    set_exit_code: Callable[[int, str], None] | None = None,
    middleware: Sequence[ToolMiddleware] = (),
    subagents: SubAgentHost | None = None,
    agent: str | None = None,
    ask_user: AskUser | None = None,
    base_env: dict[str, str] | None = None,
    is_git: bool | None = None,
) -> AgentSession:
    """`agent` is the agent id to run (default: `mode`, i.e. the exec or plan agent). The system
    prompt and tools come from the agent definition and the workspace's instruction files and
    skills (xum.context.workspace), frozen per context segment by the engine. `is_git`: whether
    the local checkout is a git work tree, when the caller knows it already."""
    from xum.context.workspace import AgentSelection, WorkspaceContext
    from xum.runtime import git

    if record.runtime == "ssh":  # the checkout is remote: a repository when the host has git
        is_git = bool(record.extra.get("remote_git"))
    elif is_git is None:
        is_git = git.toplevel(Path(record.path)) is not None
    context = WorkspaceContext.for_workspace(
        runtime,
        project_path=record.project_path,
        workspace_name=record.name,
        is_git=is_git,
    )
    return AgentSession(
        workspace=WorkspaceInfo(
            record.id, record.name, record.project_path, record.path, runtime.kind
        ),
        log=log,
        runtime=runtime,
        route=route,
        client=client,
        settings=SessionSettings(
            thinking=thinking,
            budget_usd=budget_usd,
            mode=mode,
        ),
        scratch_dir=scratch_dir(record.id),
        emit=emit,
        set_exit_code=set_exit_code,
        middleware=middleware,
        subagents=subagents,
        context=context,
        agent=AgentSelection(agent_id=agent or mode),
        ask_user=ask_user,
        base_env=base_env,
    )
