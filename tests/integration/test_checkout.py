"""The Checkout protocol per kind, on real git repositories and a real sshd on loopback.

What the deletion preview says is removed is what deleting removes (and nothing it keeps is
touched); the branch policies; a checkout shared by a sub-agent is never renamed or removed
through the sub-agent's record; and the facts other code decides on."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.sshd import Sshd, ssh_host, sshd  # noqa: F401 - fixtures
from tests.support.workspaces import PROJECT_FILES, sh_git
from xum.runtime import git
from xum.runtime.worktree import worktree_path
from xum.store import registry
from xum.store.registry import WorkspaceRecord
from xum.workspaces import lifecycle
from xum.workspaces.checkouts.devcontainer import DevcontainerCheckout
from xum.workspaces.checkouts.factory import checkout_for, create_checkout
from xum.workspaces.checkouts.local import LocalCheckout
from xum.workspaces.checkouts.protocol import NewWorkspace, Origin, Removal
from xum.workspaces.checkouts.shared import SharedCheckout
from xum.workspaces.checkouts.ssh import SshCheckout
from xum.workspaces.checkouts.ssh_remote import remote_scratch_path
from xum.workspaces.checkouts.worktree import WorktreeCheckout
from xum.workspaces.state import local_state
from xum.workspaces.subagents.records import Child, ChildRecord

pytestmark = pytest.mark.repo(name="proj", files=PROJECT_FILES)


def leave_local_state(record: WorkspaceRecord) -> None:
    """Every kind of local state a workspace can have (the session log and scratch dir exist
    already): a plan file and an init log."""
    state = dict(local_state(record))
    for kind in ("plan-file", "init-log"):
        state[kind].parent.mkdir(parents=True, exist_ok=True)
        state[kind].write_text("state\n")


def paths_of(removal: Removal) -> list[str]:
    return [item.path for item in removal.removes if item.path is not None]


def branches(repo: Path) -> list[str]:
    return sh_git(repo, "branch", "--list", "--format=%(refname:short)").split()


def worktrees(repo: Path) -> list[str]:
    listed = sh_git(repo, "worktree", "list", "--porcelain").splitlines()
    return [line.removeprefix("worktree ") for line in listed if line.startswith("worktree ")]


async def test_a_worktree_delete_removes_what_its_preview_listed(repo: Path) -> None:
    created = await lifecycle.create_workspace(repo, "worktree", name_hint="task")
    await created.runtime.close()
    record = created.record
    leave_local_state(record)
    (Path(record.path) / "notes.txt").write_text("unsaved\n")

    with pytest.raises(lifecycle.DirtyWorkspaceError):
        await lifecycle.delete_workspace(record.id, branch="always")
    preview = lifecycle.deletion_preview(record, "always")
    assert [i.kind for i in preview.removes] == [
        "worktree",
        "branch",
        "session-log",
        "scratch-dir",
        "plan-file",
        "init-log",
        "record",
    ]
    assert preview.dirty == ["notes.txt"]
    assert all(Path(p).exists() for p in paths_of(preview))  # a preview changes nothing

    report = await lifecycle.delete_workspace(record.id, force=True, branch="always")
    assert report.removed == preview.removes
    assert report.branch_deleted and report.kept == [] and report.notes == []
    assert [p for p in paths_of(preview) if Path(p).exists()] == []
    assert record.name not in branches(repo)
    assert record.path not in worktrees(repo)
    assert registry.get_workspace(record.id) is None


async def test_a_branch_the_policy_keeps_is_reported_kept(repo: Path) -> None:
    merged = await lifecycle.create_workspace(repo, "worktree", name_hint="merged")
    unmerged = await lifecycle.create_workspace(repo, "worktree", name_hint="unmerged")
    never = await lifecycle.create_workspace(repo, "worktree", name_hint="never")
    for created in (merged, unmerged, never):
        await created.runtime.close()
    work = Path(unmerged.record.path)
    (work / "feature.txt").write_text("work\n")
    sh_git(work, "add", ".")
    sh_git(work, "commit", "-q", "-m", "unmerged work")

    # `merged`: a branch with nothing new is deleted, one with commits of its own is kept.
    plan = lifecycle.deletion_preview(merged.record, "merged")
    report = await lifecycle.delete_workspace(merged.record.id)
    assert report.branch_deleted and report.removed == plan.removes
    plan = lifecycle.deletion_preview(unmerged.record, "merged")
    branch_item = next(i for i in plan.removes if i.kind == "branch")
    assert branch_item.detail and "only if merged" in branch_item.detail
    report = await lifecycle.delete_workspace(unmerged.record.id)
    assert not report.branch_deleted
    assert report.removed == [i for i in plan.removes if i.kind != "branch"]
    assert report.kept == [f"branch {unmerged.record.name}"]
    assert report.notes and report.notes[0].startswith(f"kept branch {unmerged.record.name}")
    assert unmerged.record.name in branches(repo)

    # `never`: listed as kept in the preview, and kept.
    plan = lifecycle.deletion_preview(never.record, "never")
    assert plan.keeps == [f"branch {never.record.name}"]
    assert "branch" not in {i.kind for i in plan.removes}
    report = await lifecycle.delete_workspace(never.record.id, branch="never")
    assert report.removed == plan.removes and report.kept == plan.keeps
    assert never.record.name in branches(repo)


async def test_a_local_delete_keeps_the_project_directory_as_its_preview_says(repo: Path) -> None:
    created = await lifecycle.create_workspace(repo, name_hint="here")
    await created.runtime.close()
    record = created.record
    leave_local_state(record)
    (repo / "uncommitted.txt").write_text("the user's\n")

    preview = lifecycle.deletion_preview(record)
    assert preview.keeps == [f"the project directory {repo} (a local workspace runs in it)"]
    assert preview.dirty == [] and str(repo) not in paths_of(preview)
    report = await lifecycle.delete_workspace(record.id)  # nothing of the checkout is lost
    assert report.removed == preview.removes and report.kept == preview.keeps
    assert [p for p in paths_of(preview) if Path(p).exists()] == []
    assert (repo / "uncommitted.txt").exists() and (repo / "README.md").exists()


async def test_an_ssh_delete_removes_the_remote_checkout_its_preview_listed(
    ssh_host: Sshd,  # noqa: F811
    repo: Path,
) -> None:
    created = await lifecycle.create_workspace(repo, f"ssh {ssh_host.alias}", name_hint="far")
    record = created.record
    # The remote scratch directory is where bash spill files go: it goes with the checkout.
    scratch = remote_scratch_path(record.extra["remote_home"], record.id)
    done = await created.runtime.exec(f"mkdir -p {scratch} && echo x > {scratch}/spill", env={})
    assert done.exit_code == 0
    await created.runtime.close()
    leave_local_state(record)
    # The loopback host's files are this machine's: the remote checkout can be looked at.
    remote = Path(record.path)
    assert (remote / "README.md").exists() and Path(scratch).is_dir()

    (remote / "edit.txt").write_text("uncommitted on the host\n")
    with pytest.raises(lifecycle.DirtyWorkspaceError, match=r"edit\.txt"):
        await lifecycle.delete_workspace(record.id)
    preview = lifecycle.deletion_preview(record)
    assert preview.removes[0].kind == "remote-checkout"
    assert preview.removes[0].path == f"{ssh_host.alias}:{record.path}"
    assert "checked when deleting" in preview.warnings[0]
    report = await lifecycle.delete_workspace(record.id, force=True)
    assert report.removed == preview.removes
    assert not remote.exists() and not Path(scratch).exists()
    local = [p for p in paths_of(preview) if not p.startswith(f"{ssh_host.alias}:")]
    assert [p for p in local if Path(p).exists()] == []
    assert registry.get_workspace(record.id) is None


async def test_a_checkout_shared_by_a_sub_agent_is_never_renamed_or_removed_through_it(
    repo: Path,
) -> None:
    parent = await lifecycle.create_workspace(repo, "worktree", name_hint="parent")
    await parent.runtime.close()
    kept = ChildRecord(depth=1, isolation="none", status="queued")
    fields = {"parent_id": parent.record.id, "extra": kept.new_extra()}
    shared = checkout_for(parent.record).share(
        NewWorkspace("look", "Look", fields=fields), parent.runtime
    )
    assert isinstance(shared, SharedCheckout)
    child = shared.record
    assert child.runtime == "worktree" and child.path == parent.record.path
    assert isinstance(checkout_for(child), SharedCheckout)
    assert Path(child.path, "README.md").exists()

    renamed = await lifecycle.rename_workspace(child.id, "looked")
    assert renamed.name == "looked" and renamed.path == parent.record.path
    assert Path(parent.record.path).is_dir() and parent.record.name in branches(repo)

    preview = lifecycle.deletion_preview(renamed, "always")
    assert {i.kind for i in preview.removes} <= {"session-log", "scratch-dir", "record"}
    assert preview.keeps == [f"the checkout {parent.record.path} (shared with its parent)"]
    report = await lifecycle.delete_workspace(child.id, force=True, branch="always")
    assert report.removed == preview.removes
    assert Path(parent.record.path, "README.md").exists()
    assert parent.record.name in branches(repo)
    assert registry.get_workspace(parent.record.id) is not None


def test_each_kind_answers_the_facts_other_code_decides_on(repo: Path) -> None:
    def record(runtime: str, **fields: object) -> WorkspaceRecord:
        return WorkspaceRecord.from_dict(
            {
                "id": "w1",
                "name": "w",
                "project_path": str(repo),
                "runtime": runtime,
                "path": "/elsewhere/w",
                **fields,
            }
        )

    local = checkout_for(record("local"))
    worktree = checkout_for(record("worktree"))
    ssh = checkout_for(record("ssh", host="box", remote_git=False))
    assert isinstance(local, LocalCheckout)
    assert isinstance(worktree, WorktreeCheckout)
    assert isinstance(ssh, SshCheckout)
    assert [c.on_this_machine for c in (local, worktree, ssh)] == [True, True, False]
    assert [c.shares_project_dir for c in (local, worktree, ssh)] == [True, False, False]
    assert [c.forks_children for c in (local, worktree, ssh)] == [True, True, False]
    # Hooks: a local workspace's `.xum/` is the project root's; a worktree falls back to it;
    # an SSH checkout has only its own.
    assert tuple(local.hook_roots()) == (str(repo), None)
    assert tuple(worktree.hook_roots()) == ("/elsewhere/w", str(repo))
    assert tuple(ssh.hook_roots()) == ("/elsewhere/w", None)
    # Git: what the caller knows for a checkout here; the record's word for a remote one.
    assert local.is_git(known=False) is False and worktree.is_git(known=True) is True
    assert ssh.is_git(known=True) is False and ssh.fork_point() is None
    assert checkout_for(record("ssh", host="box")).is_git() is True  # not recorded: assumed
    # A kind this version does not know opens as a directory it neither moves nor removes.
    assert isinstance(checkout_for(record("coder")), LocalCheckout)
    # A Dev Container workspace: a worktree here whose commands run in its container; its fork
    # children get a container of their own.
    dev = checkout_for(record("devcontainer", extra={"container": "c"}))
    assert isinstance(dev, DevcontainerCheckout) and dev.kind == "devcontainer"
    assert (dev.on_this_machine, dev.shares_project_dir, dev.forks_children) == (True, False, True)
    assert tuple(dev.hook_roots()) == ("/elsewhere/w", None)


async def test_a_child_records_its_task_fields_once_and_reads_them_back(repo: Path) -> None:
    parent = await lifecycle.create_workspace(repo, name_hint="parent")
    await parent.runtime.close()
    kept = ChildRecord(
        depth=2,
        isolation="fork",
        status="running",
        fork_base=git.head_commit(repo),
        group="best-1",
        group_index=2,
        group_total=3,
    )
    record = registry.create_workspace(
        project_path=str(repo),
        runtime="worktree",
        name_hint="child",
        path_for=lambda name: worktree_path(repo, name),
        parent_id=parent.record.id,
        extra=kept.new_extra(),
    )
    # A later process: the run it recorded as active is over.
    back = ChildRecord.from_workspace(record)
    assert back == ChildRecord(
        depth=2,
        isolation="fork",
        status="interrupted",
        fork_base=kept.fork_base,
        group="best-1",
        group_index=2,
        group_total=3,
    )
    child = Child.adopt(record, parent_id=parent.record.id)
    child.status, child.header, child.result, child.turns = "reported", {"status": "ok"}, "done", 4
    finished = registry.update_workspace(record.id, extra=child.persisted_extra())
    again = ChildRecord.from_workspace(finished)
    assert (again.status, again.header, again.result, again.turns) == (
        "reported",
        {"status": "ok"},
        "done",
        4,
    )
    view = Child.adopt(finished, parent_id=parent.record.id).view()
    assert (view.status, view.turns, view.group, view.group_index) == ("reported", 4, "best-1", 2)
    # Parsed the same way as the lifecycle's own: not a checkout shared with the parent.
    assert isinstance(checkout_for(finished), WorktreeCheckout)


def test_git_sees_no_stray_worktrees_after_a_failed_create(repo: Path) -> None:
    from xum.runtime.worktree import WorktreeError

    subprocess.run(["git", "branch", "taken"], cwd=repo, check=True)
    with pytest.raises(WorktreeError, match="already exists"):
        create_checkout("worktree", Origin(repo, repo), NewWorkspace("x", name="taken"))
    assert registry.list_workspaces() == []  # the record made first is removed again
    assert worktrees(repo) == [str(repo)]
