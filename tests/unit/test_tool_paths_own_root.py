"""xum's own directory ($XUM_ROOT) is outside every fence of the file tools, wherever it lives.

The test's root sits under its temp dir, and the runtime's temp dir (writable to the edit tools)
is the directory that holds the root: the layout CI often has. Reads and edits of the config,
the server's token and lock, the secrets and the sessions are refused with the same message;
the workspace's own places under the root (a worktree checkout in `src/`, its scratch dir, its
plan file; the global skills and agents, to read) keep working.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any

import pytest

from xum.core.paths import xum_root
from xum.runtime.local import LocalRuntime
from xum.tools.base import ToolContext, ToolResult
from xum.tools.file_edit_insert import FileEditInsertTool, InsertInput
from xum.tools.file_edit_replace_lines import FileEditReplaceLinesTool, ReplaceLinesInput
from xum.tools.file_edit_replace_string import FileEditReplaceStringTool, ReplaceStringInput
from xum.tools.file_read import FileReadInput, FileReadTool
from xum.tools.paths import OutsideWriteRoots, PathRefused, resolve_write_path

TOKEN = "own-root-test-token-0123456789abcdefghijklmn"
CONFIG = '{"sandbox": {"mode": "workspace-write"}}\n'
REFUSED = "inside xum's own directory ($XUM_ROOT"


@pytest.fixture
def root() -> Path:
    """A populated $XUM_ROOT: config, server token and lock, secrets, a session, skills,
    agents, a plan, a worktree checkout under src/ and a scratch dir."""
    root = xum_root()
    files = {
        "config.json": CONFIG,
        "server.lock": f'{{"url": "http://127.0.0.1:1", "token": "{TOKEN}"}}\n',
        "server/auth-token": TOKEN + "\n",
        "secrets.json": '{"projects": {}}\n',
        "sessions/abc123/chat.jsonl": "{}\n",
        "skills/tidy/SKILL.md": "---\nname: tidy\ndescription: d\n---\nbody\n",
        "agents/helper.md": "---\ndescription: d\n---\nbody\n",
        "plans/proj/ws-test.md": "# plan\n",
        "src/proj/ws-test/app.py": "print(1)\n",
        "scratch/abc123/note.txt": "n\n",
    }
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def ctx_for(root: Path, **overrides: Any) -> ToolContext:
    """A worktree workspace under the root; the runtime's temp dir is the root's parent, so
    without the rule every file in the root would be writable through it."""
    workspace = root / "src" / "proj" / "ws-test"
    ctx = ToolContext(
        call_id="call_test",
        runtime=LocalRuntime(str(workspace), str(root.parent)),
        workspace_id="abc123",
        workspace_name="ws-test",
        project_path="/home/someone/proj",
        scratch_dir=str(root / "scratch" / "abc123"),
        env={},
    )
    return dataclasses.replace(ctx, **overrides) if overrides else ctx


async def read(ctx: ToolContext, path: str) -> ToolResult:
    return await FileReadTool().run(FileReadInput(path=path), ctx)


async def test_reads_of_xums_own_files_are_refused(root: Path) -> None:
    ctx = ctx_for(root)
    link = Path(ctx.runtime.workspace_path, "innocent.txt")
    link.symlink_to(root / "server" / "auth-token")
    for path in (
        str(root / "server.lock"),
        str(root / "server" / "auth-token"),
        str(root / "config.json"),
        str(root / "secrets.json"),
        str(root / "sessions" / "abc123" / "chat.jsonl"),
        "../../../config.json",  # from the checkout under src/proj/ws-test
        "../../../server/auth-token",
        "innocent.txt",  # a symlink in the checkout
        f"{root}/src/../server.lock",
    ):
        result = await read(ctx, path)
        assert result.is_error and REFUSED in result.output, (path, result.output)
        assert TOKEN not in result.output


async def test_edits_of_xums_own_files_are_refused_and_no_approval_lifts_it(root: Path) -> None:
    # Even with the root granted for this call (as an approval of an outside write would).
    ctx = ctx_for(root, extra_write_roots=(str(root),))
    config = str(root / "config.json")
    replaced = await FileEditReplaceStringTool().run(
        ReplaceStringInput(path=config, old_string="workspace-write", new_string="off"), ctx
    )
    assert replaced.is_error and REFUSED in replaced.output
    lines = await FileEditReplaceLinesTool().run(
        ReplaceLinesInput(path="../../../config.json", start_line=1, end_line=1, new_lines=["{}"]),
        ctx,
    )
    assert lines.is_error and REFUSED in lines.output
    inserted = await FileEditInsertTool().run(
        InsertInput(path=str(root / "sessions" / "planted.jsonl"), content="x\n"), ctx
    )
    assert inserted.is_error and REFUSED in inserted.output
    assert (root / "config.json").read_text() == CONFIG
    assert not (root / "sessions" / "planted.jsonl").exists()
    # The kind of refusal no approval can lift (not OutsideWriteRoots, which `ask` may approve).
    with pytest.raises(PathRefused) as refused:
        await resolve_write_path(ctx_for(root), config)
    assert not isinstance(refused.value, OutsideWriteRoots)


async def test_the_workspaces_own_places_stay_open(root: Path) -> None:
    ctx = ctx_for(root)
    # The checkout (a worktree under src/) and the scratch dir: read and written.
    for path in ("app.py", str(root / "scratch" / "abc123" / "note.txt")):
        assert not (await read(ctx, path)).is_error, path
        done = await FileEditInsertTool().run(InsertInput(path=path, content="# more\n"), ctx)
        assert not done.is_error, (path, done.output)
    # The global skills and agents and the plan: read, not written.
    for path in (
        root / "skills" / "tidy" / "SKILL.md",
        root / "agents" / "helper.md",
        root / "plans" / "proj" / "ws-test.md",
    ):
        assert not (await read(ctx, str(path))).is_error, path
        edit = await FileEditInsertTool().run(InsertInput(path=str(path), content="x\n"), ctx)
        assert edit.is_error and REFUSED in edit.output, path
    # Another workspace's scratch dir is not this one's.
    other = root / "scratch" / "other1" / "log.txt"
    other.parent.mkdir(parents=True)
    other.write_text("theirs\n")
    assert REFUSED in (await read(ctx, str(other))).output


async def test_plan_mode_writes_the_plan_file_under_the_root(root: Path) -> None:
    plan = root / "plans" / "proj" / "ws-test.md"
    ctx = ctx_for(root, plan_file=str(plan))
    done = await FileEditInsertTool().run(InsertInput(path=str(plan), content="step\n"), ctx)
    assert not done.is_error, done.output
    assert "step" in plan.read_text()


async def test_a_root_reached_through_a_symlink_is_still_refused(
    root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """XUM_ROOT named through a symlink: the rule holds for the resolved directory too."""
    alias = tmp_path / "alias"
    alias.symlink_to(root)
    monkeypatch.setenv("XUM_ROOT", str(alias))
    ctx = ctx_for(root)
    for path in (str(alias / "config.json"), str(root / "server" / "auth-token")):
        result = await read(ctx, path)
        assert result.is_error and REFUSED in result.output, path
    assert os.path.realpath(alias) == str(root.resolve())


async def test_provider_key_files_are_refused_wherever_they_are(root: Path, tmp_path: Path) -> None:
    key = tmp_path / "keys" / "openai.key"
    key.parent.mkdir()
    key.write_text("sk-key-file-value-0123456789\n")
    (root / "providers.jsonc").write_text(json.dumps({"openai": {"apiKeyFile": str(key)}}))
    ctx = ctx_for(root)
    Path(ctx.runtime.workspace_path, "key-link").symlink_to(key)
    for path in (str(key), "key-link"):
        result = await read(ctx, path)
        assert result.is_error and "provider key files" in result.output, result.output
        assert "sk-key-file-value" not in result.output
    edit = await FileEditInsertTool().run(InsertInput(path=str(key), content="x\n"), ctx)
    assert edit.is_error and "provider key files" in edit.output
    # Another file beside it is an ordinary file.
    (key.parent / "notes.txt").write_text("n\n")
    assert not (await read(ctx, str(key.parent / "notes.txt"))).is_error
