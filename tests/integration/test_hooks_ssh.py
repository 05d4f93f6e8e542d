"""Hooks, secrets and bash spill files on an SSH workspace, against a real sshd on 127.0.0.1
(tests/sshd.py). The "remote" is this machine, so each test proves the remote side did the work
by where it happened: the remote checkout (whose copy of a hook differs from the local one), the
remote scratch dir, the private staging dir on the host."""

from __future__ import annotations

import asyncio
import stat
from pathlib import Path

import pytest

from tests.sshd import Sshd, ssh_host, sshd  # noqa: F401 - fixtures
from tests.support.hooks import Harness, bash, harness, hook, sh_git
from tests.support.web_fetch import BIG_ITEMS, allow
from xum.store.secrets import set_project_secret
from xum.tools.background import BackgroundProcesses
from xum.tools.bounds import HEAD_BYTES, TAIL_BYTES
from xum.tools.web_fetch import WebFetchInput, WebFetchTool
from xum.workspaces import lifecycle
from xum.workspaces.safety.trust import set_trusted
from xum.workspaces.state import scratch_dir

pytestmark = pytest.mark.repo(name="proj", files={"app.py": "x = 1\n"}, message="first")


def commit_hooks(repo: Path) -> None:
    sh_git(repo, "add", ".")
    sh_git(repo, "commit", "-qm", "hooks")


async def remote_harness(repo: Path, host: Sshd) -> Harness:
    h = await harness(repo, f"ssh {host.alias}")
    assert h.record.runtime == "ssh"
    assert Path(h.record.path).is_relative_to(host.remote_home)
    return h


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


async def test_tool_pre_runs_from_the_remote_checkout_and_blocks(
    repo: Path,
    ssh_host: Sshd,  # noqa: F811
) -> None:
    hook(
        repo,
        "tool_pre",
        '#!/usr/bin/env bash\necho "remote copy in $PWD for $XUM_TOOL_INPUT_DISPLAY_NAME" >&2\n'
        "exit 1\n",
    )
    commit_hooks(repo)
    set_trusted(repo)
    h = await remote_harness(repo, ssh_host)
    # The local copy changes after the checkout was shipped: the remote one is what runs.
    hook(repo, "tool_pre", "#!/bin/sh\necho 'local copy' >&2\nexit 1\n")
    marker = Path(h.record.path) / "ran"
    result = await h.call("bash", **bash(f"touch {marker}"))
    assert result.is_error and "blocked by .xum/tool_pre: exited with 1" in result.output
    assert f"remote copy in {h.record.path} for t" in result.output
    assert "local copy" not in result.output
    assert not marker.exists()


async def test_a_user_tool_pre_is_staged_on_the_host_and_runs_there(
    repo: Path,
    xum_root: Path,
    ssh_host: Sshd,  # noqa: F811
) -> None:
    xum_root.mkdir(parents=True, exist_ok=True)
    user = xum_root / "tool_pre"
    user.write_text('#!/bin/sh\necho "staged at $0, in $PWD" >&2\nexit 3\n')
    user.chmod(0o755)
    h = await remote_harness(repo, ssh_host)  # untrusted: the user's own hook still runs
    result = await h.call("bash", **bash("echo never"))
    assert result.is_error and "~/.xum/tool_pre" in result.output
    said = result.output.split("staged at ", 1)[1]
    staged = Path(said.split(",", 1)[0])
    assert staged != user and staged.parent.name == f"xum-hooks-{h.record.id}"
    assert staged.read_bytes() == user.read_bytes()
    assert mode(staged) == 0o700 and mode(staged.parent) == 0o700
    assert f"in {h.record.path}" in said


async def test_tool_env_is_sourced_on_the_host(
    repo: Path,
    ssh_host: Sshd,  # noqa: F811
) -> None:
    hook(repo, "tool_env", 'export FROM_TOOL_ENV="sourced in $PWD"\n', executable=False)
    commit_hooks(repo)
    set_trusted(repo)
    h = await remote_harness(repo, ssh_host)
    result = await h.call("bash", **bash('echo "$FROM_TOOL_ENV"'))
    assert result.output.startswith(f"sourced in {h.record.path}\n")


async def test_init_runs_in_the_remote_checkout_at_creation(
    repo: Path,
    ssh_host: Sshd,  # noqa: F811
) -> None:
    hook(
        repo,
        "init",
        '#!/bin/sh\necho "init on $XUM_RUNTIME in $PWD"\necho "$XUM_WORKSPACE_ID" > init-ran\n',
    )
    commit_hooks(repo)
    set_trusted(repo)
    created = await lifecycle.create_workspace(repo, f"ssh {ssh_host.alias}", name_hint="init")
    assert created.init is not None
    lines = [line async for line in created.init.stream()]
    assert await created.init.wait() == "succeeded"
    record = created.record
    assert lines == [f"init on ssh in {record.path}"]
    assert (Path(record.path) / "init-ran").read_text() == f"{record.id}\n"
    assert not (repo / "init-ran").exists()


async def test_project_secrets_reach_remote_commands_and_are_masked(
    repo: Path,
    ssh_host: Sshd,  # noqa: F811
) -> None:
    value = "sk-remote-0123456789abcdef"
    set_project_secret(str(repo), "API_TOKEN", value)
    h = await remote_harness(repo, ssh_host)
    result = await h.call(
        "bash",
        **bash(f'echo "token=$API_TOKEN in $PWD"; [ "$API_TOKEN" = {value} ] && echo same'),
    )
    assert not result.is_error
    assert f"token=[secret:API_TOKEN] in {h.record.path}\nsame\n" in result.output
    assert value not in result.output
    streamed = h.streamed
    assert value.encode() not in streamed and b"[secret:API_TOKEN]" in streamed


# Spill files -------------------------------------------------------------------------------------


async def test_a_spill_file_is_written_on_the_host_where_file_read_finds_it(
    repo: Path,
    ssh_host: Sshd,  # noqa: F811
) -> None:
    h = await remote_harness(repo, ssh_host)
    result = await h.call("bash", **bash("seq 1 50000"))
    assert not result.is_error
    expected = b"".join(b"%d\n" % i for i in range(1, 50001))
    assert len(expected) > HEAD_BYTES + TAIL_BYTES
    remote = result.meta["spill_path"]
    scratch = ssh_host.remote_home / "xum" / "scratch" / h.record.id
    assert Path(remote).parent == scratch / "tool-output"
    assert f"bytes omitted; full output: {remote} ...]" in result.output
    assert Path(remote).read_bytes() == expected
    assert mode(Path(remote)) == 0o600 and mode(scratch) == 0o700
    local = Path(scratch_dir(h.record.id)) / "tool-output"
    assert not local.exists() or not list(local.iterdir())  # nothing left on xum's side

    # The model can follow the marker: file_read resolves the path on the host.
    read = await h.call("file_read", path=remote, offset=49990, limit=3)
    assert not read.is_error and "49990" in read.output and "49992" in read.output

    await lifecycle.delete_workspace(h.record.id, force=True)
    assert not scratch.exists()


async def test_a_background_command_s_spill_file_moves_to_the_host_when_it_ends(
    repo: Path,
    tmp_path: Path,
    ssh_host: Sshd,  # noqa: F811
) -> None:
    h = await remote_harness(repo, ssh_host)
    procs = BackgroundProcesses(str(tmp_path / "scratch"), ring_bytes=64 * 1024)
    try:
        proc = procs.start(h.runtime, "seq 1 100000", env={}, display_name="count", timeout_s=60)
        assert proc.task is not None
        await asyncio.wait_for(asyncio.shield(proc.task), 60)
        read = proc.take()
    finally:
        await procs.close()
    assert read.status == "exited" and read.missed_bytes > 0
    assert read.spill_path is not None
    scratch = ssh_host.remote_home / "xum" / "scratch" / h.record.id / "tool-output"
    assert Path(read.spill_path).parent == scratch
    assert f"full output: {read.spill_path}" in read.output
    assert Path(read.spill_path).read_bytes() == b"".join(b"%d\n" % i for i in range(1, 100001))
    assert not proc.spill_path.exists()  # the local copy is gone


async def test_when_the_host_cannot_take_the_spill_file_the_marker_says_where_it_is(
    repo: Path,
    ssh_host: Sshd,  # noqa: F811
) -> None:
    h = await remote_harness(repo, ssh_host)
    scratch = ssh_host.remote_home / "xum" / "scratch" / h.record.id
    scratch.parent.mkdir(parents=True, exist_ok=True)
    scratch.write_text("a file where the directory should be\n")
    result = await h.call("bash", **bash("seq 1 50000"))
    local = Path(result.meta["spill_path"])
    assert local.parent == Path(scratch_dir(h.record.id)) / "tool-output"
    assert local.read_bytes() == b"".join(b"%d\n" % i for i in range(1, 50001))
    assert f"the full output is kept on xum's machine at {local}, which tools on the remote " in (
        result.output
    )
    assert "full output: " not in result.output


async def test_a_long_web_page_spills_to_the_host_too(
    repo: Path,
    ssh_host: Sshd,  # noqa: F811
    web_server: tuple[int, list[dict[str, str]]],
) -> None:
    # web_fetch runs on xum's machine, but the model reads its spill file with file_read, which
    # resolves paths on the host: the file must end up there, as bash's does.
    port, _seen = web_server
    allow(f"127.0.0.1:{port}")
    h = await remote_harness(repo, ssh_host)
    result = await WebFetchTool().run(WebFetchInput(url=f"http://127.0.0.1:{port}/json-big"), h.ctx)
    remote = result.meta["spill_path"]
    assert remote is not None
    scratch = ssh_host.remote_home / "xum" / "scratch" / h.record.id / "tool-output"
    assert Path(remote).parent == scratch
    assert f"full output: {remote}" in result.output
    assert Path(remote).read_text().count('"n"') == BIG_ITEMS
