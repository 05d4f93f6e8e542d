"""`git_layout` keeps a checkout's git dirs while the files they come from are unchanged, and
reads them again after any change: a worktree's `gitdir:` file rewritten (same size), a
`commondir` that appears, a link along the git dir's path that leads elsewhere, `.git` gone."""

from __future__ import annotations

import time
from pathlib import Path

from xum.runtime import git_layout as kept_layouts
from xum.runtime.git_layout import git_layout
from xum.runtime.sandbox import GitLayout, read_git_layout


def settle(workspace: Path) -> None:
    """Wait (bounded) until the layout of `workspace` is kept for its files as they are now."""
    deadline = time.monotonic() + 5
    while True:
        git_layout(str(workspace))
        hit = kept_layouts._kept.get(str(workspace))
        if hit is not None and kept_layouts._identity(str(workspace), hit[0]) == hit[1]:
            return
        assert time.monotonic() < deadline, "the layout was never kept"
        time.sleep(0.02)


def agrees(workspace: Path) -> GitLayout | None:
    found = git_layout(str(workspace))
    assert found == read_git_layout(str(workspace))
    return found


def test_a_worktree_pointer_rewritten_is_read_again(tmp_path: Path) -> None:
    for name in ("aaaa", "bbbb"):
        (tmp_path / "main" / ".git" / "worktrees" / name).mkdir(parents=True)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    dot_git = workspace / ".git"
    dot_git.write_text(f"gitdir: {tmp_path}/main/.git/worktrees/aaaa\n")
    settle(workspace)
    assert agrees(workspace) == GitLayout(
        f"{tmp_path}/main/.git/worktrees/aaaa", f"{tmp_path}/main/.git/worktrees/aaaa"
    )
    dot_git.write_text(f"gitdir: {tmp_path}/main/.git/worktrees/bbbb\n")  # the same size
    found = agrees(workspace)
    assert found is not None and found.git_dir.endswith("bbbb")
    settle(workspace)
    # A commondir that appears (the linked worktree's shared repository).
    (tmp_path / "main" / ".git" / "worktrees" / "bbbb" / "commondir").write_text("../..\n")
    found = agrees(workspace)
    assert found == GitLayout(f"{tmp_path}/main/.git/worktrees/bbbb", f"{tmp_path}/main/.git")
    settle(workspace)
    dot_git.unlink()
    assert agrees(workspace) is None


def test_a_link_on_the_way_that_leads_elsewhere(tmp_path: Path) -> None:
    for name in ("one", "two"):
        (tmp_path / name / "gitdir").mkdir(parents=True)
    (tmp_path / "current").symlink_to(tmp_path / "one")
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / ".git").write_text(f"gitdir: {tmp_path}/current/gitdir\n")
    settle(workspace)
    assert agrees(workspace) == GitLayout(f"{tmp_path}/one/gitdir", f"{tmp_path}/one/gitdir")
    (tmp_path / "current").unlink()
    (tmp_path / "current").symlink_to(tmp_path / "two")
    assert agrees(workspace) == GitLayout(f"{tmp_path}/two/gitdir", f"{tmp_path}/two/gitdir")


def test_an_ordinary_checkout_and_none(tmp_path: Path) -> None:
    workspace = tmp_path / "ws"
    (workspace / ".git").mkdir(parents=True)
    settle(workspace)
    assert agrees(workspace) == GitLayout(f"{workspace}/.git", f"{workspace}/.git")
    (workspace / ".git" / "HEAD").write_text("ref: refs/heads/main\n")  # git at work: no change
    assert agrees(workspace) == GitLayout(f"{workspace}/.git", f"{workspace}/.git")
    (workspace / ".git").rename(tmp_path / "moved")
    assert agrees(workspace) is None
    settle(workspace)
    (workspace / ".git").mkdir()
    assert agrees(workspace) == GitLayout(f"{workspace}/.git", f"{workspace}/.git")
