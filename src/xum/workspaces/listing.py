"""A workspace's context (agents, skills) read for a listing: an agent picker, a `/` menu.

Read on this machine: a local or worktree workspace's own checkout; for an SSH one, the project
directory it was copied from (its remote checkout is a `git archive` of that HEAD, and a round
trip per file would make every listing slow). The server's routes and the terminal UI share it.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator

from xum.context.slash import SlashSuggestion
from xum.context.workspace import WorkspaceContext
from xum.store.registry import WorkspaceRecord


@contextlib.asynccontextmanager
async def workspace_context(record: WorkspaceRecord) -> AsyncIterator[WorkspaceContext]:
    """The `WorkspaceContext` of `record` for the block; the runtime it reads through is closed
    on leaving, and the git call runs on a worker thread (the caller's loop may be shared)."""
    from xum.runtime import git
    from xum.runtime.base import Runtime
    from xum.runtime.local import LocalRuntime
    from xum.workspaces.checkouts.factory import checkout_for

    checkout = checkout_for(record)
    runtime: Runtime = (
        checkout.open_runtime() if checkout.on_this_machine else LocalRuntime(record.project_path)
    )
    try:
        is_git = await asyncio.to_thread(git.toplevel, runtime.workspace_path) is not None
        yield WorkspaceContext.for_workspace(
            runtime,
            project_path=record.project_path,
            workspace_name=record.name,
            is_git=is_git,
        )
    finally:
        await runtime.close()


async def slash_suggestions(record: WorkspaceRecord) -> list[SlashSuggestion]:
    """What `/` offers in the workspace: the chat commands, its user-invocable skills, model
    aliases and the thinking-only override (`xum.context.slash` is the registry)."""
    from xum.context.slash import suggestions
    from xum.llm.catalog import aliases

    async with workspace_context(record) as context:
        skills = await context.skill_catalog()
    return suggestions(skills, set(aliases()))
