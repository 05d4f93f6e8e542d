"""The three file_edit tools on real files: matching rules, newline style, permissions."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from tests.support.tools import make_ctx
from xum.tools.base import ToolContext, ToolResult
from xum.tools.file_edit_insert import FileEditInsertTool, InsertInput
from xum.tools.file_edit_replace_lines import FileEditReplaceLinesTool, ReplaceLinesInput
from xum.tools.file_edit_replace_string import (
    FileEditReplaceStringTool,
    ReplaceStringInput,
)


@pytest.fixture
def ctx(tmp_path: Path) -> ToolContext:
    return make_ctx(tmp_path)


def ws(ctx: ToolContext, name: str) -> Path:
    return Path(ctx.runtime.workspace_path, name)


async def replace(
    ctx: ToolContext, path: str, old: str, new: str, count: int | None = None
) -> ToolResult:
    args = ReplaceStringInput(path=path, old_string=old, new_string=new, replace_count=count)
    return await FileEditReplaceStringTool().run(args, ctx)


async def replace_lines(
    ctx: ToolContext,
    path: str,
    start: int,
    end: int,
    new: list[str],
    expected: list[str] | None = None,
) -> ToolResult:
    args = ReplaceLinesInput(
        path=path, start_line=start, end_line=end, new_lines=new, expected_lines=expected
    )
    return await FileEditReplaceLinesTool().run(args, ctx)


async def insert(
    ctx: ToolContext, path: str, content: str, after: str | None = None, before: str | None = None
) -> ToolResult:
    args = InsertInput(path=path, content=content, insert_after=after, insert_before=before)
    return await FileEditInsertTool().run(args, ctx)


# -- replace_string ------------------------------------------------------------------------


async def test_replace_unique_string_reports_a_diff(ctx: ToolContext) -> None:
    ws(ctx, "m.py").write_text("def f():\n    return 1\n\nprint(f())\n")
    result = await replace(ctx, "m.py", "return 1", "return 2")
    assert not result.is_error
    assert result.output == "Replaced 1 occurrence in m.py (at line 2)."
    assert ws(ctx, "m.py").read_text() == "def f():\n    return 2\n\nprint(f())\n"
    assert "-    return 1\n+    return 2\n" in result.meta["diff"]
    assert result.meta["diff"].startswith("--- a/m.py\n+++ b/m.py\n@@ -1,4 +1,4 @@")


async def test_an_absolute_path_gets_git_style_diff_labels(ctx: ToolContext) -> None:
    # The plan file lives outside the workspace and is edited by absolute path.
    target = ws(ctx, "plan.md")
    target.write_text("# Plan\n")
    result = await insert(ctx, str(target), "1. Step\n")
    assert not result.is_error, result.output
    label = str(target).lstrip("/")
    assert result.meta["diff"].startswith(f"--- a/{label}\n+++ b/{label}\n"), result.meta["diff"]
    assert "a//" not in result.meta["diff"] and "b//" not in result.meta["diff"]


async def test_zero_matches_refused_with_a_whitespace_hint(ctx: ToolContext) -> None:
    ws(ctx, "m.py").write_text("if x:\n        go()\n")
    result = await replace(ctx, "m.py", "if x:\n    go()", "if y:\n    go()")
    assert result.is_error
    assert (
        "not found" in result.output and "except for whitespace starts at line 1" in result.output
    )
    assert ws(ctx, "m.py").read_text() == "if x:\n        go()\n"


async def test_ambiguous_match_refused_with_the_count(ctx: ToolContext) -> None:
    ws(ctx, "a.txt").write_text("x = 1\ny = 2\nx = 1\nx = 1\n")
    result = await replace(ctx, "a.txt", "x = 1", "x = 3")
    assert result.is_error
    assert "occurs 3 times" in result.output and "lines 1, 3, 4" in result.output
    assert ws(ctx, "a.txt").read_text() == "x = 1\ny = 2\nx = 1\nx = 1\n"


async def test_replace_all_and_counted(ctx: ToolContext) -> None:
    ws(ctx, "a.txt").write_text("a a a a\n")
    result = await replace(ctx, "a.txt", "a", "b", -1)
    assert result.output.startswith("Replaced 4 occurrences")
    assert ws(ctx, "a.txt").read_text() == "b b b b\n"
    too_many = await replace(ctx, "a.txt", "b", "c", 5)
    assert too_many.is_error and "occurs only 4 times" in too_many.output
    first_two = await replace(ctx, "a.txt", "b", "c", 2)
    assert not first_two.is_error
    assert ws(ctx, "a.txt").read_text() == "c c b b\n"


async def test_identical_strings_are_a_noop(ctx: ToolContext) -> None:
    path = ws(ctx, "a.txt")
    path.write_text("same\n")
    before = path.stat().st_mtime_ns
    result = await replace(ctx, "a.txt", "same", "same")
    assert not result.is_error and result.meta["noop"] is True
    assert "No change" in result.output
    assert path.stat().st_mtime_ns == before


async def test_empty_old_string_and_bad_count_are_refused(ctx: ToolContext) -> None:
    ws(ctx, "a.txt").write_text("x\n")
    assert "file_edit_insert" in (await replace(ctx, "a.txt", "", "y")).output
    with pytest.raises(ValueError, match="-1"):
        ReplaceStringInput(path="a.txt", old_string="x", new_string="y", replace_count=0)


async def test_crlf_file_keeps_crlf(ctx: ToolContext) -> None:
    path = ws(ctx, "win.txt")
    path.write_bytes(b"one\r\ntwo\r\nthree\r\n")
    result = await replace(ctx, "win.txt", "one\ntwo", "uno\ndos\nextra")
    assert not result.is_error
    assert path.read_bytes() == b"uno\r\ndos\r\nextra\r\nthree\r\n"


async def test_mixed_newlines_are_left_alone(ctx: ToolContext) -> None:
    path = ws(ctx, "mixed.txt")
    path.write_bytes(b"a\r\nb\nc\r\n")
    await replace(ctx, "mixed.txt", "b", "B")
    assert path.read_bytes() == b"a\r\nB\nc\r\n"


async def test_permissions_are_kept(ctx: ToolContext) -> None:
    path = ws(ctx, "run.sh")
    path.write_text("#!/bin/sh\necho hi\n")
    path.chmod(0o751)
    await replace(ctx, "run.sh", "hi", "there")
    await replace_lines(ctx, "run.sh", 2, 2, ["echo again"])
    await insert(ctx, "run.sh", "echo end\n")
    assert stat.S_IMODE(path.stat().st_mode) == 0o751
    assert path.read_text() == "#!/bin/sh\necho again\necho end\n"


async def test_not_utf8_is_refused(ctx: ToolContext) -> None:
    ws(ctx, "latin.txt").write_bytes(b"caf\xe9\n")
    result = await replace(ctx, "latin.txt", "caf", "cafe")
    assert result.is_error and "not UTF-8" in result.output


# -- replace_lines -------------------------------------------------------------------------


async def test_replace_and_delete_lines(ctx: ToolContext) -> None:
    path = ws(ctx, "f.txt")
    path.write_text("1\n2\n3\n4\n")
    result = await replace_lines(ctx, "f.txt", 2, 3, ["two", "three", "three.5"])
    assert not result.is_error
    assert path.read_text() == "1\ntwo\nthree\nthree.5\n4\n"
    result = await replace_lines(ctx, "f.txt", 2, 4, [])
    assert result.output.startswith("Deleted lines 2–4 (3 lines)")
    assert path.read_text() == "1\n4\n"


async def test_replace_lines_guard_mismatch_shows_current_lines(ctx: ToolContext) -> None:
    path = ws(ctx, "f.txt")
    path.write_text("alpha\nbeta\ngamma\n")
    result = await replace_lines(ctx, "f.txt", 2, 3, ["B"], expected=["beta", "GAMMA"])
    assert result.is_error
    assert "do not match" in result.output and "2\tbeta\n3\tgamma" in result.output
    assert path.read_text() == "alpha\nbeta\ngamma\n"
    ok = await replace_lines(ctx, "f.txt", 2, 3, ["B"], expected=["beta", "gamma"])
    assert not ok.is_error
    assert path.read_text() == "alpha\nB\n"


async def test_replace_lines_range_checks(ctx: ToolContext) -> None:
    ws(ctx, "f.txt").write_text("only\n")
    assert "goes past its end" in (await replace_lines(ctx, "f.txt", 1, 2, ["x"])).output
    assert "before start_line" in (await replace_lines(ctx, "f.txt", 2, 1, ["x"])).output


async def test_replace_lines_keeps_crlf_and_missing_final_newline(ctx: ToolContext) -> None:
    path = ws(ctx, "w.txt")
    path.write_bytes(b"a\r\nb\r\nc")
    await replace_lines(ctx, "w.txt", 3, 3, ["C", "D"])
    assert path.read_bytes() == b"a\r\nb\r\nC\r\nD"


# -- insert ----------------------------------------------------------------------------------


async def test_insert_after_and_before_a_unique_anchor(ctx: ToolContext) -> None:
    path = ws(ctx, "c.py")
    path.write_text("import os\n\ndef main():\n    pass\n")
    result = await insert(ctx, "c.py", "import sys\n", after="import os\n")
    assert not result.is_error
    result = await insert(ctx, "c.py", "# entry point\n", before="def main")
    assert not result.is_error and "line 4" in result.output
    assert path.read_text() == "import os\nimport sys\n\n# entry point\ndef main():\n    pass\n"


async def test_insert_anchor_missing_or_ambiguous_or_both(ctx: ToolContext) -> None:
    ws(ctx, "c.txt").write_text("x\nx\n")
    assert "was not found" in (await insert(ctx, "c.txt", "y", after="zzz")).output
    assert "occurs 2 times" in (await insert(ctx, "c.txt", "y", before="x")).output
    assert "not both" in (await insert(ctx, "c.txt", "y", after="x", before="x")).output
    anchored_missing_file = await insert(ctx, "nope.txt", "y", after="x")
    assert anchored_missing_file.is_error and "no such file" in anchored_missing_file.output


async def test_insert_without_anchor_appends_or_creates(ctx: ToolContext) -> None:
    result = await insert(ctx, "new/dir/notes.md", "# Notes\n", after="")
    assert not result.is_error and result.meta["created"] is True
    path = ws(ctx, "new/dir/notes.md")
    assert path.read_text() == "# Notes\n"
    await insert(ctx, "new/dir/notes.md", "more\n")
    assert path.read_text() == "# Notes\nmore\n"


async def test_insert_keeps_crlf(ctx: ToolContext) -> None:
    path = ws(ctx, "w.txt")
    path.write_bytes(b"a\r\nc\r\n")
    await insert(ctx, "w.txt", "b\n", after="a\n")
    assert path.read_bytes() == b"a\r\nb\r\nc\r\n"


async def test_edits_through_an_inside_symlink_change_the_target(ctx: ToolContext) -> None:
    target = ws(ctx, "real.txt")
    target.write_text("v1\n")
    os.symlink("real.txt", ws(ctx, "alias.txt"))
    await replace(ctx, "alias.txt", "v1", "v2")
    assert target.read_text() == "v2\n"
    assert ws(ctx, "alias.txt").is_symlink()


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes through directory permissions")
async def test_write_failure_is_an_error_result_and_the_file_is_unchanged(ctx: ToolContext) -> None:
    locked = ws(ctx, "locked")
    locked.mkdir()
    (locked / "f.txt").write_text("a\n")
    locked.chmod(0o500)
    try:
        result = await replace(ctx, "locked/f.txt", "a", "b")
        assert result.is_error and "could not write" in result.output
        assert (locked / "f.txt").read_text() == "a\n"
    finally:
        locked.chmod(0o700)


async def test_creating_under_a_regular_file_is_an_error_result(ctx: ToolContext) -> None:
    ws(ctx, "plain.txt").write_text("x\n")
    result = await insert(ctx, "plain.txt/child.txt", "y\n")
    assert result.is_error and "could not write plain.txt/child.txt" in result.output
    assert ws(ctx, "plain.txt").read_text() == "x\n"
