"""A sub-agent's workspace: made when its `task` call starts it, deleted when it is removed.

A child with `isolation: "fork"` (the default) gets a worktree of its own, branched from the
parent checkout's HEAD: the worktree Checkout makes it, exactly as it makes a user's worktree
workspace. A container parent's fork child (Docker, Dev Container: `ForksOwnKind`) gets a
workspace of the parent's kind instead, made as a fork of that workspace is (a container of its
own), so its commands run where the parent's do. A child with `isolation: "none"` gets a record that shares the parent's checkout
(`Checkout.share`: for an SSH parent it keeps the host, so the record can be opened again).

Deleting a workspace deletes its children's workspaces too (`delete_descendants`, called by
the lifecycle). Removing a forked child goes through the workspace lifecycle (its `.xum/delete` hook runs, then
its worktree, branch and state are removed); a child that shared its parent's checkout only
loses its own state (its `SharedCheckout` never removes the parent's files). What is left after
a failure is discarded best effort.

The synchronous functions run in threads.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from xum.store import registry
from xum.store.registry import WorkspaceRecord
from xum.workspaces.checkouts.factory import checkout_for, create_checkout
from xum.workspaces.checkouts.protocol import ForksOwnKind, NewWorkspace, Origin
from xum.workspaces.checkouts.shared import SharedCheckout
from xum.workspaces.state import remove_local_state
from xum.workspaces.subagents.host import ParentInfo
from xum.workspaces.subagents.records import ChildRecord, records_with_parent
from xum.workspaces.subagents.spawn import ChildPlan, SpawnPlan


def create_child_workspace(
    parent: ParentInfo, plan: SpawnPlan, kept: ChildRecord, child: ChildPlan
) -> WorkspaceRecord:
    """The registry record (and for a fork, the worktree) of a new child; `kept`: its task
    fields. A child running an external agent has it in its record (`external_agent`), so its
    session is that agent's wherever the record is opened."""
    fields: dict[str, Any] = {
        "agent": child.agent_id,
        "model": child.route.model_string,
        "thinking": child.thinking,
        "parent_id": parent.workspace.id,
        "extra": kept.new_extra(),
    }
    if child.external is not None:
        fields["external_agent"] = child.external
    new = NewWorkspace(name_hint=child.title, title=child.title, fields=fields)
    checkout = plan.parent_checkout
    if kept.isolation == "none":
        return checkout.share(new, parent.runtime).record
    own = checkout.inner if isinstance(checkout, SharedCheckout) else checkout
    if isinstance(own, ForksOwnKind):
        assert kept.fork_base is not None  # plan_spawn refuses a fork without a HEAD
        return own.fork_child(new, kept.fork_base).record
    project = Path(parent.workspace.project_path)
    origin = Origin(project, project, base=kept.fork_base)
    return create_checkout("worktree", origin, new).record


async def delete_child_workspace(record: WorkspaceRecord) -> None:
    """Delete a removed child's workspace (see the module docstring)."""
    if ChildRecord.from_workspace(record).isolation == "fork":
        from xum.workspaces.lifecycle import delete_workspace

        try:
            await delete_workspace(record.id, force=True, branch="always")
            return
        except Exception:  # the record or checkout is half gone: clean up what is left
            pass
    await asyncio.to_thread(discard_workspace_tree, record)


async def delete_descendants(workspace_id: str) -> list[str]:
    """Delete the workspaces of a deleted workspace's sub-agents, theirs first (a fork child's
    worktree or container goes with them: the children were part of the parent's work). Returns
    the names of those deleted."""
    names = []
    for record in records_with_parent(workspace_id):
        if registry.get_workspace(record.id) is None:
            continue  # deleted meanwhile (as a descendant of another)
        await delete_child_workspace(record)
        names.append(record.name)
    return names


def discard_child_workspace(record: WorkspaceRecord) -> None:
    """Delete a child's checkout (its worktree and branch; never a checkout it shares), its
    local state (session log, scratch dir, plan file, init log) and its registry record, without
    hooks and as far as each goes."""
    checkout_for(record).discard()
    remove_local_state(record)
    registry.remove_workspace(record.id)


def discard_workspace_tree(record: WorkspaceRecord) -> None:
    """`discard_child_workspace` for a child and, first, all of its recorded descendants."""
    for child in records_with_parent(record.id):
        discard_workspace_tree(child)
    discard_child_workspace(record)
