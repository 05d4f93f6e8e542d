"""Worktree workspaces on real git repositories: the main checkout is never touched."""

from __future__ import annotations

import stat
import subprocess
from pathlib import Path

import pytest

from xum.runtime import git
from xum.runtime.worktree import (
    WorktreeError,
    WorktreeRuntime,
    create_worktree,
    remove_worktree,
    worktree_path,
)

pytestmark = pytest.mark.repo(name="my-project", files={"README.md": "hello\n"}, message="first")


GIT_ID = ["-c", "user.name=Test", "-c", "user.email=test@example.com"]


def sh_git(repo: Path, *args: str) -> str:
    done = subprocess.run(
        ["git", *GIT_ID, *args], cwd=repo, capture_output=True, text=True, check=True
    )
    return done.stdout


def test_creates_branch_and_checkout_and_leaves_main_untouched(
    repo: Path, tmp_path: Path, xum_root: Path
) -> None:
    (repo / "README.md").write_text("uncommitted edit\n")  # a dirty main checkout
    (repo / "scratch.txt").write_text("untracked\n")
    status_before = sh_git(repo, "status", "--porcelain=v1")
    head_before = sh_git(repo, "rev-parse", "HEAD").strip()
    branch_before = git.current_branch(repo)

    runtime = create_worktree(repo, "feature-x7k2", temp_dir=str(tmp_path / "t"))

    assert isinstance(runtime, WorktreeRuntime)
    assert runtime.kind == "worktree"
    expected = xum_root / "src" / "my-project" / "feature-x7k2"
    assert Path(runtime.workspace_path) == expected
    assert runtime.branch == "feature-x7k2"
    assert (expected / "README.md").read_text() == "hello\n"  # from HEAD, not the dirty file
    assert not (expected / "scratch.txt").exists()
    assert git.current_branch(expected) == "feature-x7k2"
    assert git.head_commit(expected) == head_before
    for directory in (xum_root / "src", xum_root / "src" / "my-project"):
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    # The main checkout: same HEAD, same branch, same status.
    assert sh_git(repo, "rev-parse", "HEAD").strip() == head_before
    assert git.current_branch(repo) == branch_before
    assert sh_git(repo, "status", "--porcelain=v1") == status_before
    assert git.branch_exists(repo, "feature-x7k2")


async def test_worktree_runtime_runs_commands_in_the_checkout(repo: Path, tmp_path: Path) -> None:
    runtime = create_worktree(repo, "ws-one", temp_dir=str(tmp_path / "t"))
    out = bytearray()
    result = await runtime.exec(
        "git rev-parse --abbrev-ref HEAD; pwd", env={}, on_output=out.extend
    )
    assert result.exit_code == 0
    assert out.decode().split() == ["ws-one", runtime.workspace_path]


def test_refuses_existing_branch_and_existing_path(repo: Path, tmp_path: Path) -> None:
    sh_git(repo, "branch", "taken")
    with pytest.raises(WorktreeError, match="already exists"):
        create_worktree(repo, "taken", temp_dir=str(tmp_path))
    target = worktree_path(repo, "occupied")
    target.mkdir(parents=True)
    with pytest.raises(WorktreeError, match="already exists"):
        create_worktree(repo, "occupied", temp_dir=str(tmp_path))
    assert not git.branch_exists(repo, "occupied")


def test_refuses_non_repo_and_repo_without_commits(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    with pytest.raises(WorktreeError, match="not a git repository"):
        create_worktree(plain, "ws", temp_dir=str(tmp_path))
    empty = tmp_path / "empty"
    empty.mkdir()
    sh_git(empty, "init", "-q")
    with pytest.raises(WorktreeError, match="no commits"):
        create_worktree(empty, "ws", temp_dir=str(tmp_path))


@pytest.mark.parametrize("name", ["a/b", "../up", "-rf", ".hidden", "bad..name", "sp ace", ""])
def test_refuses_unsafe_names(repo: Path, tmp_path: Path, name: str) -> None:
    with pytest.raises(WorktreeError, match="cannot name"):
        create_worktree(repo, name, temp_dir=str(tmp_path))


def test_remove_refuses_dirty_checkout_unless_forced(repo: Path, tmp_path: Path) -> None:
    runtime = create_worktree(repo, "to-remove", temp_dir=str(tmp_path))
    Path(runtime.workspace_path, "README.md").write_text("changed\n")
    with pytest.raises(git.GitError):
        remove_worktree(repo, runtime.workspace_path)
    remove_worktree(repo, runtime.workspace_path, force=True)
    assert not Path(runtime.workspace_path).exists()
    assert git.branch_exists(repo, "to-remove")  # the branch (and its commits) stay
    git.delete_branch(repo, "to-remove", force=True)
    assert not git.branch_exists(repo, "to-remove")


def test_git_helpers(repo: Path, tmp_path: Path) -> None:
    assert git.toplevel(repo / ".") == repo
    assert git.toplevel(tmp_path) is None
    sh_git(repo, "checkout", "-q", "--detach")
    assert git.current_branch(repo) is None
