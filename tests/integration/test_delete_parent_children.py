"""Deleting a workspace deletes its sub-agents' workspaces too: a fork child's worktree and
branch, a child that shares the parent's checkout (only its own state). A delete refused for
the parent's uncommitted files deletes nothing, children included."""

from __future__ import annotations

from pathlib import Path

import pytest

from xum.store import registry
from xum.workspaces import lifecycle
from xum.workspaces.checkouts.factory import checkout_for, create_checkout
from xum.workspaces.checkouts.protocol import DirtyWorkspaceError, NewWorkspace, Origin
from xum.workspaces.subagents.records import ChildRecord

pytestmark = pytest.mark.repo(identity=True)


async def test_deleting_a_parent_deletes_its_childrens_workspaces(repo: Path) -> None:
    parent = await lifecycle.create_workspace(repo, "worktree", name_hint="parent", run_init=False)
    await parent.runtime.close()
    fork = ChildRecord(depth=1, isolation="fork", status="reported", fork_base="HEAD")
    forked = create_checkout(
        "worktree",
        Origin(repo, repo),
        NewWorkspace("fork", fields={"parent_id": parent.record.id, "extra": fork.new_extra()}),
    ).record
    none = ChildRecord(depth=1, isolation="none", status="reported")
    shared = (
        checkout_for(parent.record)
        .share(
            NewWorkspace("look", fields={"parent_id": parent.record.id, "extra": none.new_extra()}),
            parent.runtime,
        )
        .record
    )
    Path(parent.record.path, "loose.txt").write_text("not committed\n")
    warned = lifecycle.deletion_preview(parent.record).warnings
    assert any(forked.name in w and shared.name in w for w in warned)  # said before

    with pytest.raises(DirtyWorkspaceError):
        await lifecycle.delete_workspace(parent.record.id)
    assert registry.get_workspace(forked.id) is not None  # nothing was deleted
    assert registry.get_workspace(shared.id) is not None and Path(forked.path).is_dir()

    report = await lifecycle.delete_workspace(parent.record.id, force=True, branch="always")

    assert registry.get_workspace(forked.id) is None and registry.get_workspace(shared.id) is None
    assert not Path(forked.path).exists() and not Path(parent.record.path).exists()
    assert sorted(report.notes) == sorted(
        f"deleted the sub-agent workspace {name}" for name in (forked.name, shared.name)
    )
