"""The command sandbox through the real middleware, the real bash tool and the real bubblewrap.

Each test runs `bash` calls the way the engine does (`run_one`: middleware, then the tool) in a
real git checkout, and looks at the host afterwards: what a sandboxed command could write, see
and reach. The settings come from the real `$XUM_ROOT/config.json`.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gitrepo import GIT, make_repo
from tests.sshd import Sshd, ssh_host, sshd  # noqa: F401 - fixtures
from tests.support.sandbox_rig import Rig, make_rig, set_sandbox
from tests.support.tools import wait_none_running
from xum.core.paths import xum_root
from xum.engine import events as E
from xum.runtime.sandbox import local_backend
from xum.tools.background import BackgroundProcesses
from xum.workspaces.safety.choice import SafetyChoice
from xum.workspaces.safety.sandboxing import SandboxMiddleware

pytestmark = pytest.mark.skipif(
    not local_backend().ok, reason=f"no working bubblewrap here: {local_backend().detail}"
)


@pytest.fixture
def outside_home(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A $HOME outside /tmp (which the sandbox replaces with a private one), so a write there
    meets the read-only root rather than a missing directory."""
    home = Path(tempfile.mkdtemp(prefix="xum-sandbox-home-", dir="/var/tmp"))
    monkeypatch.setenv("HOME", str(home))
    yield home
    subprocess.run(["rm", "-rf", str(home)], check=False)


@pytest.fixture
def rig(tmp_path: Path) -> Rig:
    return make_rig(make_repo(tmp_path / "repo"), xum_root() / "scratch" / "ws1")


async def test_workspace_write_keeps_writes_in_the_checkout(rig: Rig, outside_home: Path) -> None:
    set_sandbox(mode="workspace-write")
    escaped = outside_home / "escaped.txt"
    result = await rig.bash(f"echo x > {escaped}")
    assert result.is_error
    assert "Read-only file system" in result.output
    assert "xum's sandbox" in result.output  # the note says what is allowed
    assert result.meta["sandbox_denied"] is True
    assert not escaped.exists()

    inside = await rig.bash("echo kept > inside.txt && cat inside.txt")
    assert not inside.is_error, inside.output
    assert (rig.workspace / "inside.txt").read_text() == "kept\n"
    # $TMPDIR is the session's own; /tmp is shared with the host.
    tmp = await rig.bash('echo t > "$TMPDIR/own" && echo "$TMPDIR" && echo s > /tmp/shared-$$')
    assert not tmp.is_error, tmp.output
    own = Path(tmp.output.splitlines()[0])
    assert own == xum_root() / "scratch" / "ws1" / "sandbox-tmp"
    assert (own / "own").read_text() == "t\n"


async def test_private_tmp_keeps_slash_tmp_to_the_session(rig: Rig) -> None:
    set_sandbox(mode="workspace-write", privateTmp=True)
    marker = f"xum-sandbox-{os.getpid()}-{time.monotonic_ns()}"
    tmp = await rig.bash(f"echo t > /tmp/{marker} && cat /tmp/{marker} && echo $TMPDIR")
    assert not tmp.is_error and "t\n/tmp" in tmp.output, tmp.output
    assert not Path("/tmp", marker).exists()
    assert (xum_root() / "scratch" / "ws1" / "sandbox-tmp" / marker).exists()


async def test_xum_dir_and_git_internals_are_read_only(rig: Rig) -> None:
    set_sandbox(mode="workspace-write")
    # .xum/ does not exist yet: it cannot be created with a hook in it.
    planted = await rig.bash("mkdir -p .xum && echo 'echo pwned' > .xum/tool_pre")
    assert planted.is_error
    assert not (rig.workspace / ".xum" / "tool_pre").exists()
    # It exists now (the mount point): still nothing can be written into it.
    (rig.workspace / ".xum" / "agents").mkdir(parents=True)
    again = await rig.bash("echo x > .xum/agents/evil.md")
    assert again.is_error and not (rig.workspace / ".xum" / "agents" / "evil.md").exists()
    hook = await rig.bash("echo 'echo pwned' > .git/hooks/pre-commit")
    assert hook.is_error and not (rig.workspace / ".git" / "hooks" / "pre-commit").exists()
    config_before = (rig.workspace / ".git" / "config").read_bytes()
    config = await rig.bash("git config core.hooksPath /tmp/evil")
    assert config.is_error
    assert (rig.workspace / ".git" / "config").read_bytes() == config_before
    # What a commit needs still works.
    commit = await rig.bash(
        f"echo change >> app.py && {' '.join(GIT)} commit -qam 'from the sandbox' && git log -1 --format=%s"
    )
    assert not commit.is_error, commit.output
    assert "from the sandbox" in commit.output


async def test_a_worktree_can_commit_but_not_touch_the_main_checkout(
    tmp_path: Path, outside_home: Path
) -> None:
    """The main checkout lies outside /tmp here (which commands share with the host)."""
    set_sandbox(mode="workspace-write")
    repo = make_repo(outside_home / "main")
    tree = tmp_path / "tree"
    subprocess.run(["git", "worktree", "add", "-q", "-b", "side", str(tree)], cwd=repo, check=True)
    rig = make_rig(tree, xum_root() / "scratch" / "ws2")
    commit = await rig.bash(
        f"echo more >> app.py && {' '.join(GIT)} commit -qam side-work && git log -1 --format=%s"
    )
    assert not commit.is_error, commit.output
    log = subprocess.run(
        ["git", "log", "-1", "--format=%s", "side"], cwd=repo, capture_output=True, text=True
    )
    assert log.stdout.strip() == "side-work"  # visible from the main repository at once
    main_file = repo / "app.py"
    before = main_file.read_text()
    touched = await rig.bash(f"echo x >> {main_file}; echo x > {repo / '.git' / 'hooks' / 'h'}")
    assert touched.is_error
    assert main_file.read_text() == before
    assert not (repo / ".git" / "hooks" / "h").exists()


async def test_read_only_mode_writes_nothing(rig: Rig) -> None:
    set_sandbox(mode="read-only")
    result = await rig.bash("cat app.py; echo x > new.txt")
    assert result.is_error
    assert "def greet" in result.output  # reads work
    assert "Read-only file system" in result.output
    assert not (rig.workspace / "new.txt").exists()
    assert "nowhere but a throwaway $TMPDIR" in result.output


async def test_xum_root_is_hidden_from_commands(rig: Rig) -> None:
    set_sandbox(mode="workspace-write")
    root = xum_root()
    (root / "providers.jsonc").write_text('{"anthropic": {"apiKey": "sk-secret-value"}}')
    result = await rig.bash(f"cat {root}/providers.jsonc; ls -A {root}")
    assert "sk-secret-value" not in result.output
    assert "No such file" in result.output
    # The workspace's own scratch dir is there (spill files, $XUM_SCRATCH_DIR).
    scratch = await rig.bash('echo s > "$XUM_SCRATCH_DIR/note" && cat "$XUM_SCRATCH_DIR/note"')
    assert not scratch.is_error, scratch.output
    assert (root / "scratch" / "ws1" / "note").read_text() == "s\n"


async def test_granted_folders_are_writable(rig: Rig, outside_home: Path) -> None:
    cache = outside_home / ".cache"
    cache.mkdir()
    set_sandbox(mode="workspace-write", writable=[str(cache)])
    result = await rig.bash(f"echo c > {cache}/entry && echo d > {outside_home}/other")
    assert result.is_error  # the second write is outside every granted folder
    assert (cache / "entry").read_text() == "c\n"
    assert not (outside_home / "other").exists()


def _listener() -> socket.socket:
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(4)
    return server


async def test_egress_off_cannot_reach_the_hosts_loopback(rig: Rig) -> None:
    server = _listener()
    port = server.getsockname()[1]
    probe = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
    try:
        set_sandbox(mode="workspace-write", egress="shared")
        shared = await rig.bash(probe)
        assert "connected" in shared.output, shared.output
        set_sandbox(mode="workspace-write", egress="off")
        off = await rig.bash(probe)
        assert off.is_error
        assert "connected" not in off.output
        assert "Connection refused" in off.output  # the namespace's own loopback: nobody there
    finally:
        server.close()


@pytest.mark.parametrize("mode", ["workspace-write", "off"])
async def test_every_descendant_dies_with_the_command(rig: Rig, mode: str) -> None:
    """`setsid` leaves the process group; in the sandbox the PID namespace still ends it, and
    without it xum finds it through the output pipe it holds."""
    set_sandbox(mode=mode)
    tag = f"302.{os.getpid()}{len(mode)}"
    result = await rig.bash(f"setsid sleep {tag} & echo started")
    assert "started" in result.output
    left = await wait_none_running(tag, 10.0)
    for pid in left:
        os.kill(pid, 9)
    assert not left, f"sleep {tag} outlived its command ({mode})"


async def test_background_commands_run_in_the_sandbox(rig: Rig, outside_home: Path) -> None:
    set_sandbox(mode="workspace-write")
    background = BackgroundProcesses(str(xum_root() / "scratch" / "ws1"))
    rig.ctx = dataclasses.replace(rig.ctx, background=background)
    target = outside_home / "from-background"
    try:
        started = await rig.bash(f"echo x > {target}; echo done", run_in_background=True)
        assert not started.is_error, started.output
        proc = background.get(started.meta["taskId"])
        assert proc is not None and proc.task is not None
        await asyncio.wait_for(proc.task, 30)
        assert "Read-only file system" in proc.take().output
        assert not target.exists()
    finally:
        await background.close()


def _path_without_bwrap(tmp_path: Path) -> str:
    """A PATH with bash and coreutils but no bwrap."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "cat", "echo", "true"):
        found = subprocess.run(["which", tool], capture_output=True, text=True).stdout.strip()
        if found:
            (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


async def test_an_explicit_mode_fails_closed_without_bubblewrap(
    rig: Rig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", _path_without_bwrap(tmp_path))
    for mode in ("workspace-write", "read-only"):
        set_sandbox(mode=mode)
        result = await rig.bash("echo ran > ran.txt")
        assert result.is_error
        assert f"the sandbox mode is {mode}" in result.output
        assert "apt-get install bubblewrap" in result.output
        assert not (rig.workspace / "ran.txt").exists()


async def test_auto_runs_unsandboxed_without_bubblewrap_and_says_so_once(
    rig: Rig, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", _path_without_bwrap(tmp_path))
    set_sandbox(mode="auto")
    for _ in range(2):
        result = await rig.bash("echo ran > ran.txt")
        assert not result.is_error, result.output
    assert (rig.workspace / "ran.txt").exists()
    warnings = [e for e in rig.events if isinstance(e, E.Advisory)]
    assert [w.kind for w in warnings] == ["sandbox-unavailable"]
    assert "apt-get install bubblewrap" in warnings[0].message


async def test_the_run_choice_overrides_the_config(rig: Rig, outside_home: Path) -> None:
    set_sandbox(mode="workspace-write")
    off = make_rig(rig.workspace, xum_root() / "scratch" / "ws1", SafetyChoice(sandbox="off"))
    target = outside_home / "allowed"
    result = await off.bash(f"echo x > {target}")
    assert not result.is_error, result.output
    assert target.exists()


async def test_a_malformed_sandbox_config_refuses_commands(rig: Rig) -> None:
    set_sandbox(mode="sometimes")
    result = await rig.bash("echo ran > ran.txt")
    assert result.is_error
    assert '"sandbox.mode" must be one of' in result.output
    assert not (rig.workspace / "ran.txt").exists()


async def test_a_users_tool_env_is_sourced_inside(rig: Rig) -> None:
    """The user's own `$XUM_ROOT/tool_env` (hidden with the rest of the root) is shown to the
    command that sources it."""
    set_sandbox(mode="workspace-write")
    tool_env = xum_root() / "tool_env"
    tool_env.write_text("export FROM_TOOL_ENV=yes\n")
    rig.ctx = dataclasses.replace(rig.ctx, env_source=str(tool_env))
    result = await rig.bash('echo "env=$FROM_TOOL_ENV"')
    assert "env=yes" in result.output, result.output


async def test_in_the_sandbox_even_a_detached_job_dies(rig: Rig) -> None:
    """A job that left the group and let go of the output (`setsid ... >/dev/null &`) cannot be
    found through the pipe; the PID namespace ends it anyway."""
    set_sandbox(mode="workspace-write")
    tag = f"303.{os.getpid()}"
    result = await rig.bash(f"setsid sleep {tag} >/dev/null 2>&1 < /dev/null & echo started")
    assert "started" in result.output
    left = await wait_none_running(tag, 10.0)
    for pid in left:
        os.kill(pid, 9)
    assert not left, f"sleep {tag} outlived its sandboxed command"


async def test_ssh_workspaces_use_the_remote_hosts_bubblewrap(ssh_host: Sshd) -> None:  # noqa: F811
    from xum.runtime.ssh import SshRuntime

    set_sandbox(mode="workspace-write")
    workspace = make_repo(ssh_host.remote_home / "ws" / f"t{os.urandom(3).hex()}")
    runtime = SshRuntime(ssh_host.alias, str(workspace), home=str(ssh_host.remote_home))
    rig = make_rig(workspace, xum_root() / "scratch" / "ws3")
    rig.ctx = dataclasses.replace(rig.ctx, runtime=runtime)
    rig.middleware = SandboxMiddleware(
        runtime,
        workspace_id="ws3",
        scratch_dir=Path(rig.ctx.scratch_dir),
        emit=rig.events.append,
        choice=SafetyChoice(),
    )
    outside = Path(tempfile.mkdtemp(prefix="xum-ssh-outside-", dir="/var/tmp"))
    try:
        result = await rig.bash(
            f"echo in > inside.txt; echo out > {outside}/escaped; echo x > .xum/tool_pre; true"
        )
        assert not result.is_error, result.output
        assert (workspace / "inside.txt").read_text() == "in\n"
        assert not (outside / "escaped").exists()
        assert not (workspace / ".xum" / "tool_pre").exists()
        assert result.output.count("Read-only file system") == 2, result.output
        tag = f"304.{os.getpid()}"
        await rig.bash(f"setsid sleep {tag} >/dev/null 2>&1 & echo started")
        left = await wait_none_running(tag, 10.0)
        for pid in left:
            os.kill(pid, 9)
        assert not left
    finally:
        await runtime.close()
        subprocess.run(["rm", "-rf", str(outside)], check=False)
