"""The SSH runtime against a real sshd on 127.0.0.1 (see tests/sshd.py)."""

from __future__ import annotations

import asyncio
import os
import shlex
import socket
import subprocess
import time
from pathlib import Path

import pytest

from tests.sshd import Sshd, ssh_host, sshd  # noqa: F401 - fixtures
from xum.runtime.base import NotRegularFileError
from xum.runtime.ssh import _BOOTSTRAP, SshError, SshRuntime, check_host, ssh_command


@pytest.fixture
def remote(ssh_host: Sshd) -> SshRuntime:  # noqa: F811
    workspace = ssh_host.remote_home / "ws" / f"t{os.urandom(3).hex()}"
    workspace.mkdir(parents=True)
    return SshRuntime(ssh_host.alias, str(workspace), home=str(ssh_host.remote_home))


async def run(rt: SshRuntime, script: str, **kw: object) -> tuple[str, int | None]:
    chunks: list[bytes] = []
    result = await rt.exec(script, env=kw.pop("env", {}), on_output=chunks.append, **kw)  # type: ignore[arg-type]
    return b"".join(chunks).decode(), result.exit_code


def alive(marker: str) -> list[str]:
    out = subprocess.run(["pgrep", "-f", marker], capture_output=True, text=True).stdout
    return out.split()


def wait_gone(marker: str, seconds: float = 20) -> list[str]:
    deadline = time.monotonic() + seconds
    while alive(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive(marker)


async def test_exec_runs_in_the_workspace_with_only_the_given_env(
    remote: SshRuntime, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("LOCAL_ONLY_SECRET", "must-not-travel")
    monkeypatch.setenv("SSH_AUTH_SOCK", "/tmp/fake-agent.sock")
    out, code = await run(
        remote,
        'pwd; echo "v=$GIVEN"; echo "local=${LOCAL_ONLY_SECRET:-unset}"; '
        'echo "agent=${SSH_AUTH_SOCK:-none}"; echo "scratch=${XUM_SCRATCH_DIR:-unset}"; '
        "echo err >&2; exit 3",
        env={"GIVEN": 'it\'s "quoted" $x', "XUM_SCRATCH_DIR": "/local/only"},
    )
    assert code == 3
    lines = out.splitlines()
    assert lines[0] == remote.workspace_path
    assert lines[1] == 'v=it\'s "quoted" $x'
    assert lines[2] == "local=unset"
    assert lines[3] == "agent=none"  # no agent forwarding
    assert lines[4] == "scratch=unset"  # a local path means nothing remotely
    assert lines[5] == "err"


async def test_the_script_and_its_env_never_appear_in_a_remote_argv(remote: SshRuntime) -> None:
    token = f"tok{os.urandom(6).hex()}"
    marker = f"/xum-ssh-argv-{os.urandom(4).hex()}"
    task = asyncio.create_task(
        run(remote, f"bash -c 'sleep 300; : {marker}'", env={"SOME_SECRET": token})
    )
    # Look only once the command runs (its child is there), with the script and env delivered.
    deadline = time.monotonic() + 20
    while not alive(marker):
        assert time.monotonic() < deadline, "the remote command never started"
        await asyncio.sleep(0.05)
    ps = subprocess.run(["ps", "-eo", "args"], capture_output=True, text=True).stdout
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert marker in ps  # the listing was taken while the command ran
    assert token not in ps
    assert wait_gone(marker) == []


async def test_stdin_is_empty_and_background_jobs_do_not_hold_the_call(
    remote: SshRuntime,
) -> None:
    finished = Path(remote.workspace_path) / "job-finished"  # the remote is this machine
    out, code = await run(
        remote, f"cat; echo read-nothing; bash -c 'sleep 300; touch {finished}' & echo started"
    )
    assert code == 0
    assert out == "read-nothing\nstarted\n"
    # The call ended without waiting for the job: it was stopped, not finished.
    assert wait_gone(str(finished)) == []
    assert not finished.exists()


async def test_timeout_kills_the_remote_process_tree(remote: SshRuntime) -> None:
    marker = f"/xum-ssh-timeout-{os.urandom(4).hex()}"
    script = f"echo begin; bash -c 'sleep 301; : {marker}' & bash -c 'sleep 302; : {marker}'; wait"
    chunks: list[bytes] = []
    result = await remote.exec(script, env={}, timeout_s=1.0, on_output=chunks.append)
    assert result.timed_out and result.exit_code is None
    assert b"begin" in b"".join(chunks)
    assert wait_gone(marker) == []


async def test_cancellation_kills_the_remote_process_tree(remote: SshRuntime) -> None:
    marker = f"/xum-ssh-cancel-{os.urandom(4).hex()}"
    task = asyncio.create_task(
        remote.exec(f"bash -c 'sleep 303; : {marker}' & bash -c 'sleep 304; : {marker}'", env={})
    )
    deadline = time.monotonic() + 10
    while len(alive(marker)) < 2:
        assert time.monotonic() < deadline, "the remote command never started"
        await asyncio.sleep(0.05)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert wait_gone(marker) == []


def test_killing_xum_side_ssh_kills_the_remote_tree(ssh_host: Sshd) -> None:  # noqa: F811
    """The dead-man switch: when the local ssh client dies (xum was kill -9ed), the remote group
    is stopped because its lifeline reached end-of-file."""
    marker = f"/xum-ssh-deadman-{os.urandom(4).hex()}"
    proc = subprocess.Popen(
        ssh_command(ssh_host.alias, "exec bash -c " + shlex.quote(_BOOTSTRAP)),
        stdin=subprocess.PIPE,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdin is not None
    proc.stdin.write(f"bash -c 'sleep 305; : {marker}'\n".encode() + b"\0")
    proc.stdin.flush()
    deadline = time.monotonic() + 10
    while not alive(marker):
        assert time.monotonic() < deadline
        time.sleep(0.05)
    proc.kill()
    proc.wait()
    assert wait_gone(marker) == []


async def test_file_operations(remote: SshRuntime) -> None:
    await remote.write_bytes_atomic("sub/dir/a.txt", b"hello\x00world")
    assert await remote.read_bytes("sub/dir/a.txt") == b"hello\x00world"
    assert await remote.read_bytes("sub/dir/a.txt", limit=3) == b"hel"
    st = await remote.stat("sub/dir/a.txt")
    assert st.exists and st.is_file and not st.is_dir and st.size == 11
    assert st.mtime_ns > 0
    assert (await remote.stat("sub")).is_dir
    assert not (await remote.stat("missing")).exists
    with pytest.raises(FileNotFoundError):
        await remote.read_bytes("missing")
    with pytest.raises(IsADirectoryError):
        await remote.read_bytes("sub")
    fifo = Path(remote.workspace_path) / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(NotRegularFileError):
        await remote.read_bytes("pipe")
    # permissions survive a rewrite
    target = Path(remote.workspace_path) / "script.sh"
    target.write_text("old")
    target.chmod(0o751)
    await remote.write_bytes_atomic("script.sh", b"new")
    assert target.read_text() == "new" and (target.stat().st_mode & 0o777) == 0o751
    assert not [p for p in target.parent.iterdir() if p.name.endswith(".xum-tmp")]


async def test_paths_and_realpath(remote: SshRuntime) -> None:
    ws = remote.workspace_path
    assert remote.resolve("a/../b") == f"{ws}/b"
    assert remote.resolve("/etc/x") == "/etc/x"
    assert remote.resolve("~/f") == f"{remote.home}/f"
    Path(ws, "real").mkdir()
    Path(ws, "link").symlink_to(Path(ws, "real"))
    assert await remote.realpath("link/new.txt") == os.path.realpath(f"{ws}/real/new.txt")


async def test_an_unreachable_host_is_an_ssh_error(ssh_host: Sshd) -> None:  # noqa: F811
    rt = SshRuntime("xum-no-such-host.invalid", "/tmp", home="/root")
    with pytest.raises(SshError):
        await rt.stat("x")
    result = await rt.exec("true", env={})
    assert result.exit_code == 255


async def test_a_refused_connection_is_exit_255_with_ssh_s_message(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ssh can exit before reading the script on its stdin; that must read as ssh's failure
    (255 and its message), never as a broken pipe inside xum."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    config = tmp_path / "ssh_config"
    config.write_text(f"Host xum-refused\n  HostName 127.0.0.1\n  Port {port}\n")
    monkeypatch.setenv("XUM_SSH_CONFIG", str(config))
    rt = SshRuntime("xum-refused", "/tmp", home="/root")
    for _ in range(5):
        out, code = await run(rt, "echo never")
        assert code == 255 and "Connection refused" in out


def test_hosts_that_look_like_options_are_refused() -> None:
    for bad in ("-oProxyCommand=touch /tmp/x", "", "a b", "host\nx"):
        with pytest.raises(ValueError):
            check_host(bad)
    argv = ssh_command("example.com", "true")
    assert "-a" in argv and "BatchMode=yes" in argv and "ForwardAgent=no" in argv
    assert argv[argv.index("--") + 1] == "example.com"


async def test_ssh_workspace_lifecycle(
    ssh_host: Sshd,  # noqa: F811
    tmp_path: Path,
) -> None:
    from xum.runtime import git
    from xum.workspaces import lifecycle
    from xum.workspaces.safety.trust import set_trusted

    repo = tmp_path / "proj"
    repo.mkdir()
    sh = ["git", "-c", "user.name=T", "-c", "user.email=t@example.com"]
    subprocess.run([*sh, "init", "-q", "-b", "main"], cwd=repo, check=True)
    (repo / "a.txt").write_text("committed\n")
    (repo / ".xum").mkdir()
    (repo / ".xum" / "archive").write_text('#!/bin/sh\necho "$XUM_RUNTIME" > archived-here\n')
    (repo / ".xum" / "archive").chmod(0o755)
    subprocess.run([*sh, "add", "."], cwd=repo, check=True)
    subprocess.run([*sh, "commit", "-qm", "c"], cwd=repo, check=True)
    (repo / "a.txt").write_text("uncommitted\n")
    set_trusted(repo)

    created = await lifecycle.create_workspace(
        repo, f"ssh {ssh_host.alias}", name_hint="remote", model="m", thinking="low"
    )
    record = created.record
    remote_dir = Path(record.path)
    assert remote_dir.parent == ssh_host.remote_home / "xum" / "src" / "proj"
    assert (remote_dir / "a.txt").read_text() == "committed\n"
    assert record.host == ssh_host.alias and record.branch == record.name
    assert git.current_branch(remote_dir) == record.name

    forked = await lifecycle.fork_workspace(record.id, "remote-fork")
    assert forked.record.runtime == "ssh" and forked.record.thinking == "low"
    assert (Path(forked.record.path) / "a.txt").read_text() == "committed\n"
    assert git.current_branch(forked.record.path) == "remote-fork"

    renamed = await lifecycle.rename_workspace(forked.record.id, "remote-renamed")
    assert Path(renamed.path).name == "remote-renamed" and renamed.branch == "remote-renamed"
    assert not Path(forked.record.path).exists()

    await lifecycle.archive_workspace(record.id)
    assert (remote_dir / "archived-here").read_text() == "ssh\n"
    with pytest.raises(lifecycle.DirtyWorkspaceError, match="archived-here"):
        await lifecycle.delete_workspace(record.id)
    await lifecycle.delete_workspace(record.id, force=True)
    assert not remote_dir.exists()
    await lifecycle.delete_workspace(renamed.id)
    assert not Path(renamed.path).exists()
