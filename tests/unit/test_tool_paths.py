"""The write fence: canonicalize, then contain. Escapes are refused by name, before any I/O."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.support.tools import make_ctx
from xum.tools.base import ToolContext
from xum.tools.file_edit_insert import FileEditInsertTool, InsertInput
from xum.tools.file_edit_replace_string import FileEditReplaceStringTool, ReplaceStringInput
from xum.tools.paths import PathRefused, resolve_write_path


async def insert(ctx: ToolContext, path: str, content: str = "x\n") -> str:
    result = await FileEditInsertTool().run(InsertInput(path=path, content=content), ctx)
    return ("ERROR: " if result.is_error else "") + result.output


async def test_dotdot_escape_is_refused(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    message = await insert(ctx, "../evil.txt")
    assert message.startswith("ERROR: refused: ../evil.txt")
    assert "outside the workspace" in message
    assert not (tmp_path / "evil.txt").exists()
    assert (await insert(ctx, "sub/../../evil.txt")).startswith("ERROR: refused")
    assert (await insert(ctx, "/etc/xum-should-never-exist")).startswith("ERROR: refused")


async def test_symlink_pointing_outside_is_refused_by_name(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    outside = tmp_path / "secret"
    outside.mkdir()
    (outside / "keys.txt").write_text("k\n")
    os.symlink(outside, Path(ctx.runtime.workspace_path, "link"))
    os.symlink(outside / "keys.txt", Path(ctx.runtime.workspace_path, "file-link"))
    for path in ("link/keys.txt", "file-link", "link/new.txt"):
        message = await insert(ctx, path)
        assert message.startswith(f"ERROR: refused: {path} goes through a symlink"), message
    result = await FileEditReplaceStringTool().run(
        ReplaceStringInput(path="file-link", old_string="k", new_string="stolen"), ctx
    )
    assert result.is_error
    assert (outside / "keys.txt").read_text() == "k\n"
    assert not (outside / "new.txt").exists()


async def test_git_internals_are_never_written(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    ws = Path(ctx.runtime.workspace_path)
    subprocess.run(["git", "init", "-q"], cwd=ws, check=True)
    config_before = (ws / ".git" / "config").read_text()
    for path in (".git/config", ".git/hooks/pre-commit", "sub/../.git/HEAD", ".GIT/config"):
        message = await insert(ctx, path, "[core]\n\thooksPath = /tmp/x\n")
        assert message.startswith("ERROR: refused") and ".git" in message, (path, message)
    assert (ws / ".git" / "config").read_text() == config_before
    # A worktree's `.git` is a file pointing at the shared repository: refused too.
    (ws / "wt").mkdir()
    (ws / "wt" / ".git").write_text("gitdir: /somewhere/.git/worktrees/wt\n")
    assert (await insert(ctx, "wt/.git")).startswith("ERROR: refused")
    # .github is not .git
    assert not (await insert(ctx, ".github/workflows/ci.yml")).startswith("ERROR")


async def test_scratch_temp_and_extra_roots_are_writable(tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    ctx = make_ctx(tmp_path, extra_write_roots=(str(extra),))
    for path in (
        os.path.join(ctx.scratch_dir, "note.md"),
        os.path.join(ctx.runtime.temp_dir, "t.txt"),
        str(extra / "e.txt"),
    ):
        assert not (await insert(ctx, path)).startswith("ERROR"), path
        assert Path(path).read_text() == "x\n"


async def test_plan_mode_locks_edits_to_the_plan_file(tmp_path: Path, xum_root: Path) -> None:
    plan = xum_root / "plans" / "proj" / "ws-test.md"
    ctx = make_ctx(tmp_path, plan_file=str(plan))
    message = await insert(ctx, "src.py")
    assert message.startswith("ERROR: refused: plan mode allows file edits only to the plan file")
    assert not Path(ctx.runtime.workspace_path, "src.py").exists()
    created = await insert(ctx, str(plan), "# Plan\n")
    assert not created.startswith("ERROR"), created
    assert plan.read_text() == "# Plan\n"


async def test_resolve_write_path_returns_the_canonical_file(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    ws = Path(ctx.runtime.workspace_path)
    (ws / "real").mkdir()
    os.symlink("real", ws / "alias")
    target = await resolve_write_path(ctx, "alias/./f.txt")
    assert target.path == str((ws / "real" / "f.txt").resolve())
    with pytest.raises(PathRefused, match="empty"):
        await resolve_write_path(ctx, "  ")
