"""The sandbox's pure parts: settings, the mount plan, its shell form, the probes' parsing."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from xum.runtime.sandbox import (
    Backend,
    GitLayout,
    Layout,
    argv_for,
    mount_plan,
    parse_remote_probe,
    parse_settings,
    read_git_layout,
    shell_for,
)


def test_settings_default_and_validation(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    assert parse_settings(None).mode == "auto"
    monkeypatch.setenv("HOME", str(tmp_path))
    settings = parse_settings({"mode": "read-only", "egress": "off", "writable": ["~/.cache"]})
    assert (settings.mode, settings.egress) == ("read-only", "off")
    assert settings.writable == (str(tmp_path / ".cache"),)
    for bad, said in [
        ("auto", "must be an object"),
        ({"mode": "yolo"}, '"sandbox.mode" must be one of auto, workspace-write'),
        ({"egress": "proxy"}, '"sandbox.egress" must be "shared" or "off"'),
        ({"writable": "relative"}, "must be a list"),
        ({"writable": ["relative/dir"]}, "is not an absolute path"),
        ({"mood": "auto"}, "unknown keys: mood"),
        ({"privateTmp": "yes"}, "must be true or false"),
    ]:
        with pytest.raises(ValueError, match=said):
            parse_settings(bad)


def _layout(**overrides: object) -> Layout:
    values: dict[str, object] = {
        "workspace": "/w",
        "writable_workspace": True,
        "temp_dir": "/x/scratch/sandbox-tmp",
        "writable": ("/x/scratch",),
        "git": GitLayout("/w/.git", "/w/.git"),
        "hidden": ("/x",),
        "denied": ("/w/secrets",),
        "denied_files": ("/w/.env",),
    }
    values.update(overrides)
    return Layout(**values)  # type: ignore[arg-type]


def _mounts(argv: list[str]) -> list[tuple[str, str]]:
    """(option, destination) of each mount, in order."""
    out = []
    i = 0
    while i < len(argv):
        option = argv[i]
        if option in ("--bind", "--ro-bind"):
            out.append((option, argv[i + 2]))
            i += 3
        elif option in ("--tmpfs", "--remount-ro", "--dev", "--proc"):
            out.append((option, argv[i + 1]))
            i += 2
        else:
            i += 1
    return out


def test_mounts_go_from_the_read_only_root_to_the_denylist() -> None:
    argv = argv_for(mount_plan(_layout(), cwd="/w/sub"), exists=lambda _path: True)
    mounts = _mounts(argv)
    order = [m for m in mounts if m[1] in ("/", "/x", "/w", "/w/.xum", "/w/secrets", "/w/.env")]
    assert order == [
        ("--ro-bind", "/"),
        ("--tmpfs", "/x"),  # xum's root hidden
        ("--bind", "/w"),  # the workspace writable
        ("--ro-bind", "/w/.xum"),  # held read-only inside it
        ("--tmpfs", "/w/secrets"),  # the denylist over everything
        ("--remount-ro", "/w/secrets"),
        ("--ro-bind", "/w/.env"),
        ("--remount-ro", "/x"),  # xum's root read-only once what is inside is mounted
    ]
    assert ("--ro-bind", "/w/.git/hooks") in mounts and ("--ro-bind", "/w/.git/config") in mounts
    assert ("--bind", "/tmp") in mounts  # the host's /tmp, shared
    assert argv[argv.index("--bind", argv.index("--proc")) + 1] == "/tmp"
    assert argv[argv.index("--setenv") + 1 : argv.index("--setenv") + 3] == [
        "TMPDIR",
        "/x/scratch/sandbox-tmp",
    ]
    assert argv[argv.index("--chdir") + 1] == "/w/sub"
    assert argv[-1] == "--"
    assert "--unshare-net" not in argv and "--unshare-pid" in argv


def test_missing_paths_are_left_out_or_held_empty() -> None:
    argv = argv_for(mount_plan(_layout(), cwd="/w"), exists=lambda path: path in ("/", "/w"))
    mounts = _mounts(argv)
    # A missing .xum/ and .git/hooks become empty read-only directories; the rest is skipped.
    assert ("--tmpfs", "/w/.xum") in mounts and ("--remount-ro", "/w/.xum") in mounts
    assert ("--tmpfs", "/w/.git/hooks") in mounts
    assert ("--ro-bind", "/w/.git/config") not in mounts
    assert ("--tmpfs", "/w/secrets") not in mounts
    assert ("--bind", "/x/scratch") not in mounts


def test_a_worktree_gets_what_a_commit_writes_and_nothing_else() -> None:
    git = GitLayout("/main/.git/worktrees/t", "/main/.git")
    argv = argv_for(mount_plan(_layout(git=git), cwd="/w"), exists=lambda _p: True)
    mounts = _mounts(argv)
    assert mounts.index(("--ro-bind", "/main/.git")) < mounts.index(
        ("--bind", "/main/.git/objects")
    )
    for writable in ("objects", "refs", "logs", "worktrees/t"):
        assert ("--bind", f"/main/.git/{writable}") in mounts
    for held in ("hooks", "config", "info", "worktrees/t/config.worktree"):
        assert ("--ro-bind", f"/main/.git/{held}") in mounts
    assert ("--bind", "/main") not in mounts


def test_a_private_slash_tmp_is_the_sessions_temp_dir() -> None:
    argv = argv_for(mount_plan(_layout(private_slash_tmp=True), cwd="/w"), lambda _p: True)
    i = argv.index("/tmp")
    assert argv[i - 2 : i + 1] == ["--bind", "/x/scratch/sandbox-tmp", "/tmp"]
    assert argv[argv.index("--setenv") + 2] == "/tmp"


def test_read_only_and_egress_off() -> None:
    layout = _layout(writable_workspace=False, egress="off", drop_caps=True)
    argv = argv_for(mount_plan(layout, cwd="/w"), exists=lambda _p: True)
    mounts = _mounts(argv)
    assert ("--ro-bind", "/w") in mounts and ("--bind", "/w") not in mounts
    assert ("--tmpfs", "/x/scratch/sandbox-tmp") in mounts  # a throwaway $TMPDIR
    assert ("--tmpfs", "/tmp") not in mounts and ("--bind", "/tmp") not in mounts
    assert not [m for m in mounts if m[0] == "--bind"]
    assert "--unshare-net" in argv
    assert argv[argv.index("--cap-drop") + 1] == "ALL"


def test_the_shell_form_decides_the_same_plan_where_it_runs(tmp_path: Path) -> None:
    """`shell_for` (remote runtimes) yields the argv `argv_for` does, given the same paths."""
    (tmp_path / "w" / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "x" / "scratch").mkdir(parents=True)
    w, x = str(tmp_path / "w"), str(tmp_path / "x")
    layout = _layout(
        workspace=w,
        temp_dir=f"{x}/scratch/sandbox-tmp",
        writable=(f"{x}/scratch", "/no/such dir"),
        git=GitLayout(f"{w}/.git", f"{w}/.git"),
        hidden=(x,),
        denied=(f"{w}/secrets",),
        denied_files=(f"{w}/.env",),
    )
    plan = mount_plan(layout, cwd=w)
    script = shell_for(plan, "echo hi").replace('exec "$@" bash -c', 'printf "%s\\n" "$@" #')
    printed = subprocess.run(["bash", "-c", script], capture_output=True, text=True, check=True)
    assert printed.stdout.splitlines() == argv_for(plan)


def test_git_layout_of_a_checkout_and_of_a_worktree(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "main")
    assert read_git_layout(str(repo)) == GitLayout(str(repo / ".git"), str(repo / ".git"))
    tree = tmp_path / "tree"
    subprocess.run(["git", "worktree", "add", "-q", "-b", "t", str(tree)], cwd=repo, check=True)
    layout = read_git_layout(str(tree))
    assert layout == GitLayout(str(repo / ".git" / "worktrees" / "tree"), str(repo / ".git"))
    assert read_git_layout(str(tmp_path)) is None


def test_remote_probe_parsing() -> None:
    facts = parse_remote_probe(
        "bwrap-ok bubblewrap 0.8.0\nuid 0\ngitdir /r/.git/worktrees/a\ncommondir /r/.git\n", "h"
    )
    assert facts.backend == Backend(True, "bubblewrap 0.8.0 on h")
    assert facts.is_root
    assert facts.git == GitLayout("/r/.git/worktrees/a", "/r/.git")
    missing = parse_remote_probe("bwrap-missing\nuid 1000\n", "h")
    assert not missing.backend.ok and "not installed on h" in missing.backend.detail
    assert "apt-get install bubblewrap" in missing.backend.detail
    fails = parse_remote_probe("bwrap-fails setting up uid map: Permission denied\n", "h")
    assert not fails.backend.ok and "Permission denied" in fails.backend.detail
    assert not parse_remote_probe("", "h").backend.ok
