"""Workspace lifecycle on real git repositories and real processes: create, rename, fork,
archive, delete, their refusals, and several xum processes sharing one $XUM_ROOT."""

from __future__ import annotations

import json
import os
import socket
import stat
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.support.workspaces import PROJECT_FILES, sh_git, turn_in_other_process
from xum.core.errors import XumError
from xum.llm.types import text_message
from xum.runtime import git
from xum.store import frame_types as ev
from xum.store import registry
from xum.store.sessionlog import SessionLog
from xum.workspaces import lifecycle
from xum.workspaces.busy import WorkspaceBusyError
from xum.workspaces.safety.trust import set_trusted
from xum.workspaces.state import plan_path

pytestmark = pytest.mark.repo(name="proj", files=PROJECT_FILES, message="first")


async def new_worktree(repo: Path, **kw: object) -> lifecycle.CreatedWorkspace:
    return await lifecycle.create_workspace(repo, "worktree", name_hint="task", **kw)  # type: ignore[arg-type]


# Create ----------------------------------------------------------------------------------------


async def test_create_local_and_worktree_and_list(repo: Path, xum_root: Path) -> None:
    local = await lifecycle.create_workspace(repo, "local", name_hint="Fix the bug")
    wt = await new_worktree(repo, title="A title", model="anthropic:x", thinking="high")
    assert local.record.path == str(repo) and local.record.runtime == "local"
    assert local.record.name.startswith("fix-the-bug-") and len(local.record.id) == 10
    assert wt.record.path == str(xum_root / "src" / "proj" / wt.record.name)
    assert wt.record.branch == wt.record.name and wt.record.thinking == "high"
    assert git.current_branch(wt.record.path) == wt.record.name
    listed = lifecycle.list_workspaces(str(repo))
    assert [r.id for r in listed] == [wt.record.id, local.record.id]  # newest first
    assert local.init is None and wt.init is None  # no hook, nothing started


async def test_xumignore_copies_ignored_files_that_exist(repo: Path) -> None:
    (repo / ".xumignore").write_text(
        "# copy these\n!.env\n!config/*.secret\n!README.md\n!missing.txt\n.env.local\n!../x\n"
    )
    (repo / ".env").write_text("TOKEN=1\n")
    (repo / ".env.local").write_text("not listed with !\n")
    (repo / "config").mkdir()
    (repo / "config" / "db.secret").write_text("pw\n")
    (repo / "README.md").write_text("local edit, tracked: never copied\n")
    created = await new_worktree(repo)
    wt = Path(created.record.path)
    assert (wt / ".env").read_text() == "TOKEN=1\n"
    assert (wt / "config" / "db.secret").read_text() == "pw\n"
    assert not (wt / ".env.local").exists()
    assert (wt / "README.md").read_text() == "hello\n"
    assert not (wt / ".env").is_symlink()


async def test_xumignore_copies_before_init_and_never_overwrites(
    repo: Path, tmp_path: Path
) -> None:
    (repo / ".xum").mkdir()
    init = repo / ".xum" / "init"
    init.write_text("#!/bin/sh\ncat .env > init-saw.txt\necho line one\necho line two >&2\n")
    init.chmod(0o755)
    (repo / ".xumignore").write_text("!.env\n")
    sh_git(repo, "add", ".")
    sh_git(repo, "commit", "-qm", "hooks")
    (repo / ".env").write_text("FROM_ROOT\n")
    set_trusted(repo)
    lines: list[str] = []
    created = await new_worktree(repo, on_init_line=lines.append)
    assert created.init is not None
    assert await created.init.wait() == "succeeded"
    wt = Path(created.record.path)
    assert (wt / "init-saw.txt").read_text() == "FROM_ROOT\n"
    assert lines == ["line one", "line two"]
    record = registry.get_workspace(created.record.id)
    assert record is not None and record.init_status == "succeeded"
    assert record.init_exit_code == 0


# Rename ----------------------------------------------------------------------------------------


async def test_rename_moves_worktree_branch_and_plan(repo: Path, xum_root: Path) -> None:
    created = await new_worktree(repo)
    old = created.record
    plan = plan_path(old)
    plan.parent.mkdir(parents=True)
    plan.write_text("# plan\n")
    renamed = await lifecycle.rename_workspace(old.id, "better-name")
    assert renamed.id == old.id and renamed.name == "better-name"
    assert renamed.path == str(xum_root / "src" / "proj" / "better-name")
    assert Path(renamed.path, "README.md").exists() and not Path(old.path).exists()
    assert renamed.branch == "better-name" and git.current_branch(renamed.path) == "better-name"
    assert not git.branch_exists(repo, old.name)
    assert not plan.exists() and plan_path(renamed).read_text() == "# plan\n"
    assert "better-name" in sh_git(repo, "worktree", "list")
    stored = registry.get_workspace(old.id)
    assert stored is not None and stored.name == "better-name"


async def test_rename_leaves_the_plan_directory_private(repo: Path) -> None:
    old = (await new_worktree(repo)).record
    plan = plan_path(old)
    plan.parent.mkdir(parents=True)
    plan.parent.chmod(0o755)  # made by something that did not care
    plan.write_text("# plan\n")
    renamed = await lifecycle.rename_workspace(old.id, "private-plan")
    moved = plan_path(renamed)
    assert moved.read_text() == "# plan\n"
    assert stat.S_IMODE(moved.parent.stat().st_mode) == 0o700


async def test_rename_refusals(repo: Path) -> None:
    a = (await new_worktree(repo)).record
    b = (await new_worktree(repo)).record
    with pytest.raises(registry.NameTakenError):
        await lifecycle.rename_workspace(a.id, b.name)
    with pytest.raises(lifecycle.InvalidNameError):
        await lifecycle.rename_workspace(a.id, "../escape")
    with turn_in_other_process(a.id):
        with pytest.raises(WorkspaceBusyError, match="busy") as info:
            await lifecycle.rename_workspace(a.id, "while-busy")
        assert "turn in another process" in info.value.message
    assert Path(a.path).exists()  # nothing moved
    assert (await lifecycle.rename_workspace(a.id, "after-turn")).name == "after-turn"


# Fork ------------------------------------------------------------------------------------------


def write_conversation(workspace_id: str) -> None:
    log = SessionLog.open(workspace_id)
    log.append_many(
        [
            (ev.TURN_START, {"turn_id": "t1"}),
            (ev.USER_MESSAGE, {"message": text_message("user", "first question")}),
            (
                ev.ASSISTANT_MESSAGE,
                {
                    "message": text_message("assistant", "first answer"),
                    "usage": {"input_tokens": 3, "output_tokens": 2},
                    "finish_reason": "stop",
                    "model": "anthropic:x",
                },
            ),
            (ev.TURN_END, {"turn_id": "t1", "reason": "completed"}),
            (ev.COMPACTION, {"summary": "so far", "through_seq": 4}),
        ]
    )
    log.close()


async def test_fork_copies_conversation_and_settings_but_not_uncommitted_changes(
    repo: Path,
) -> None:
    source = (await new_worktree(repo, model="openai:gpt-x", thinking="low", agent="plan")).record
    wt = Path(source.path)
    (wt / "committed.txt").write_text("in HEAD\n")
    sh_git(wt, "add", "committed.txt")
    sh_git(wt, "commit", "-qm", "work")
    (wt / "README.md").write_text("uncommitted\n")
    (wt / "untracked.txt").write_text("untracked\n")
    write_conversation(source.id)

    forked = await lifecycle.fork_workspace(source.id, "explore-b")
    new = forked.record
    assert new.name == "explore-b" and new.id != source.id and new.runtime == "worktree"
    assert (new.model, new.thinking, new.agent) == ("openai:gpt-x", "low", "plan")
    assert new.extra["forked_from"] == source.id
    nw = Path(new.path)
    assert (nw / "committed.txt").read_text() == "in HEAD\n"
    assert (nw / "README.md").read_text() == "hello\n"
    assert not (nw / "untracked.txt").exists()
    assert git.current_branch(nw) == "explore-b"
    assert git.head_commit(nw) == git.head_commit(wt)

    src_frames = SessionLog.open(source.id).frames
    copied = SessionLog.open(new.id)
    assert [(f.type, f.data) for f in copied.frames] == [(f.type, f.data) for f in src_frames]
    assert {f.id for f in copied.frames}.isdisjoint({f.id for f in src_frames})
    # the copy is a valid log on its own: it opens and takes writes
    copied.append(ev.USER_MESSAGE, {"message": text_message("user", "continue")})
    copied.close()
    # the source is untouched
    assert len(SessionLog.open(source.id).frames) == len(src_frames)


async def test_fork_closes_a_turn_that_was_open_in_the_source(repo: Path) -> None:
    source = (await lifecycle.create_workspace(repo, "local", name_hint="open turn")).record
    log = SessionLog.open(source.id)
    log.append_many(
        [
            (ev.TURN_START, {"turn_id": "t9"}),
            (ev.USER_MESSAGE, {"message": text_message("user", "go")}),
        ]
    )
    log.close()
    forked = await lifecycle.fork_workspace(source.id)
    assert forked.record.runtime == "local" and forked.record.path == source.path
    assert forked.record.name.startswith("open-turn-")
    frames = SessionLog.open(forked.record.id).frames
    assert frames[-1].type == ev.TURN_END and frames[-1].data["reason"] == "interrupted"


# Archive ---------------------------------------------------------------------------------------


async def test_archive_runs_the_hook_once_and_unarchive_rearms_it(repo: Path) -> None:
    (repo / ".xum").mkdir()
    hook = repo / ".xum" / "archive"
    hook.write_text(
        '#!/bin/sh\necho "$XUM_WORKSPACE_ID $XUM_WORKSPACE_NAME $XUM_RUNTIME" >> "$HOME/archived"\n'
    )
    hook.chmod(0o755)
    sh_git(repo, "add", ".")
    sh_git(repo, "commit", "-qm", "hook")
    set_trusted(repo)
    record = (await new_worktree(repo)).record
    archived = await lifecycle.archive_workspace(record.id)
    assert archived.archived_at is not None
    assert Path(record.path).exists()  # the checkout is kept
    await lifecycle.archive_workspace(record.id)  # already archived: no second run
    log = Path(os.environ["HOME"]) / "archived"
    assert log.read_text() == f"{record.id} {record.name} worktree\n"
    assert lifecycle.list_workspaces(str(repo)) == []
    assert [r.id for r in lifecycle.list_workspaces(str(repo), archived=True)] == [record.id]
    assert (await lifecycle.unarchive_workspace(record.id)).archived_at is None
    await lifecycle.archive_workspace(record.id)
    assert log.read_text().count(record.id) == 2


async def test_a_failing_archive_hook_is_logged_and_does_not_block(
    repo: Path, xum_root: Path
) -> None:
    (repo / ".xum").mkdir()
    hook = repo / ".xum" / "archive"
    hook.write_text("#!/bin/sh\necho cleanup failed >&2\nexit 4\n")
    hook.chmod(0o755)
    set_trusted(repo)
    record = (await lifecycle.create_workspace(repo, "local", name_hint="x")).record
    assert (await lifecycle.archive_workspace(record.id)).archived_at is not None
    logged = [json.loads(x) for x in (xum_root / "logs" / "hooks.log").read_text().splitlines()]
    assert logged[-1]["hook"] == ".xum/archive" and logged[-1]["exitCode"] == 4
    assert "cleanup failed" in logged[-1]["output"]


def hanging_hook(repo: Path, name: str) -> str:
    """A `.xum/<name>` that never ends by itself (nor does the child it starts); returns the
    marker that names its processes."""
    marker = f"xum-{name}-hang-{os.urandom(4).hex()}"
    (repo / ".xum").mkdir(exist_ok=True)
    hook = repo / ".xum" / name
    hook.write_text(f"#!/usr/bin/env bash\necho started\nbash -c 'sleep 300; : {marker}' &\nwait\n")
    hook.chmod(0o755)
    return marker


def hook_log(xum_root: Path) -> list[dict[str, object]]:
    path = xum_root / "logs" / "hooks.log"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    return [json.loads(line) for line in path.read_text().splitlines()]


def assert_gone(marker: str) -> None:
    for _ in range(200):
        if subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode != 0:
            return
        time.sleep(0.025)
    raise AssertionError(f"a process of the hook ({marker}) survived its timeout")


async def test_an_archive_hook_that_hangs_is_killed_logged_and_does_not_block(
    repo: Path, xum_root: Path
) -> None:
    marker = hanging_hook(repo, "archive")
    set_trusted(repo)
    record = (await lifecycle.create_workspace(repo, "local", name_hint="x")).record
    archived = await lifecycle.archive_workspace(record.id, hook_timeout_s=0.5)
    assert archived.archived_at is not None
    entry = hook_log(xum_root)[-1]
    assert entry["hook"] == ".xum/archive" and entry["workspaceId"] == record.id
    assert entry["timedOut"] is True and entry["exitCode"] is None
    assert "started" in str(entry["output"])
    assert_gone(marker)


async def test_a_lifecycle_hook_that_cannot_run_is_logged_privately_with_secrets_masked(
    repo: Path, xum_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An SSH host that refuses connections: ssh's own error (which names the address, here a
    project secret) goes to hooks.log masked, and the archive goes on."""
    from xum.store.secrets import set_project_secret

    with socket.socket() as sock:  # a loopback port nothing listens on
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = tmp_path / "ssh_config"
    config.write_text(f"Host xum-down\n  HostName 127.0.0.1\n  Port {port}\n")
    monkeypatch.setenv("XUM_SSH_CONFIG", str(config))
    set_trusted(repo)
    set_project_secret(str(repo), "BUILD_HOST", "127.0.0.1")
    record = registry.create_workspace(
        project_path=str(repo),
        runtime="ssh",
        name_hint="down",
        path_for=lambda name: f"/nowhere/{name}",
        host="xum-down",
    )
    assert (await lifecycle.archive_workspace(record.id)).archived_at is not None
    entry = hook_log(xum_root)[-1]
    assert entry["hook"] == ".xum/archive" and entry["workspaceId"] == record.id
    assert "[secret:BUILD_HOST]" in str(entry["error"])
    assert "127.0.0.1" not in (xum_root / "logs" / "hooks.log").read_text()


# Delete ----------------------------------------------------------------------------------------


async def test_delete_refuses_a_dirty_worktree_naming_the_files(repo: Path, xum_root: Path) -> None:
    created = await new_worktree(repo)
    record = created.record
    wt = Path(record.path)
    (wt / "README.md").write_text("changed\n")
    (wt / "new file.txt").write_text("new\n")
    (wt / "build").mkdir()
    (wt / "build" / "out.o").write_text("ignored: not dirty\n")
    with pytest.raises(lifecycle.DirtyWorkspaceError) as info:
        await lifecycle.delete_workspace(record.id)
    assert sorted(info.value.files) == ["README.md", "new file.txt"]
    assert "README.md" in info.value.message and "new file.txt" in info.value.message
    assert wt.exists() and registry.get_workspace(record.id) is not None

    scratch = xum_root / "scratch" / record.id
    SessionLog.open(record.id).append(ev.USER_MESSAGE, {"message": text_message("user", "x")})
    plan = plan_path(record)
    plan.parent.mkdir(parents=True, exist_ok=True)
    plan.write_text("plan")
    report = await lifecycle.delete_workspace(record.id, force=True)
    assert report.branch_deleted  # no commits of its own: merged into main
    assert not wt.exists() and not scratch.exists() and not plan.exists()
    assert not (xum_root / "sessions" / record.id).exists()
    assert registry.get_workspace(record.id) is None
    assert not git.branch_exists(repo, record.name)
    assert record.name not in sh_git(repo, "worktree", "list")


async def test_delete_keeps_an_unmerged_branch_by_default(repo: Path) -> None:
    record = (await new_worktree(repo)).record
    wt = Path(record.path)
    (wt / "work.txt").write_text("w\n")
    sh_git(wt, "add", ".")
    sh_git(wt, "commit", "-qm", "unmerged work")
    report = await lifecycle.delete_workspace(record.id)
    assert not report.branch_deleted and "kept branch" in report.notes[0]
    assert git.branch_exists(repo, record.name)
    other = (await new_worktree(repo)).record
    sh_git(Path(other.path), "commit", "-q", "--allow-empty", "-m", "x")
    assert (await lifecycle.delete_workspace(other.id, branch="always")).branch_deleted


async def test_delete_of_a_local_workspace_leaves_the_project_alone(repo: Path) -> None:
    (repo / "dirty.txt").write_text("the user's own work\n")
    record = (await lifecycle.create_workspace(repo, "local", name_hint="l")).record
    await lifecycle.delete_workspace(record.id)
    assert (repo / "dirty.txt").exists() and (repo / "README.md").exists()
    assert registry.get_workspace(record.id) is None


async def test_delete_of_a_workspace_busy_in_another_process_is_refused(repo: Path) -> None:
    record = (await new_worktree(repo)).record
    with turn_in_other_process(record.id), pytest.raises(WorkspaceBusyError):
        await lifecycle.delete_workspace(record.id, force=True)
    assert Path(record.path).exists() and registry.get_workspace(record.id) is not None
    with turn_in_other_process(record.id), pytest.raises(WorkspaceBusyError):
        await lifecycle.archive_workspace(record.id)


async def test_delete_hook_runs_before_the_dirty_check(repo: Path) -> None:
    (repo / ".xum").mkdir()
    hook = repo / ".xum" / "delete"
    hook.write_text('#!/bin/sh\necho "$TOKEN" > "$HOME/deleted"\n')
    hook.chmod(0o755)
    sh_git(repo, "add", ".")
    sh_git(repo, "commit", "-qm", "hook")
    set_trusted(repo)
    from xum.store.secrets import set_project_secret

    set_project_secret(str(repo), "TOKEN", "s3cret-value")
    record = (await new_worktree(repo)).record
    (Path(record.path) / "dirty").write_text("x")
    with pytest.raises(lifecycle.DirtyWorkspaceError):
        await lifecycle.delete_workspace(record.id)
    assert (Path(os.environ["HOME"]) / "deleted").read_text() == "s3cret-value\n"


async def test_a_delete_hook_that_hangs_is_killed_logged_and_does_not_block(
    repo: Path, xum_root: Path
) -> None:
    marker = hanging_hook(repo, "delete")
    sh_git(repo, "add", ".")
    sh_git(repo, "commit", "-qm", "hook")
    set_trusted(repo)
    record = (await new_worktree(repo)).record
    await lifecycle.delete_workspace(record.id, hook_timeout_s=0.5)
    assert registry.get_workspace(record.id) is None and not Path(record.path).exists()
    entry = hook_log(xum_root)[-1]
    assert entry["hook"] == ".xum/delete" and entry["timedOut"] is True
    assert_gone(marker)


def test_unknown_workspace_and_runtime_are_clear_errors() -> None:
    with pytest.raises(lifecycle.WorkspaceNotFoundError):
        lifecycle.get_workspace("nope")
    for spec in ("docker", "docker -v/:/h", "ssh", "ssh -oProxyCommand=x", "cloud"):
        with pytest.raises(XumError):
            lifecycle.parse_runtime(spec)
    assert lifecycle.parse_runtime("ssh user@host") == ("ssh", "user@host")
    assert lifecycle.parse_runtime("docker node:20") == ("docker", "node:20")


# Several processes, one $XUM_ROOT ---------------------------------------------------------------


def test_two_processes_creating_and_renaming_keep_every_record(repo: Path, xum_root: Path) -> None:
    rounds = 12
    script = textwrap.dedent(
        f"""
        import asyncio, sys
        from pathlib import Path
        from xum.workspaces import lifecycle
        me = sys.argv[1]
        async def main():
            for k in range({rounds}):
                made = await lifecycle.create_workspace(
                    Path({str(repo)!r}), "local", name_hint=f"p{{me}} {{k}}", run_init=False
                )
                await lifecycle.rename_workspace(made.record.id, f"r-{{me}}-{{k}}")
        asyncio.run(main())
        """
    )
    procs = [
        subprocess.Popen([sys.executable, "-c", script, str(i)], stderr=subprocess.PIPE, text=True)
        for i in range(2)
    ]
    for proc in procs:
        _out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
    config = json.loads((xum_root / "config.json").read_text())
    names = sorted(w["name"] for w in config["workspaces"].values())
    assert names == sorted(f"r-{i}-{k}" for i in range(2) for k in range(rounds))
    assert list(config["projects"]) == [str(repo)]
