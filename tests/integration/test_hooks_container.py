"""Hooks and bash spill files on a Docker workspace, against a real container engine (podman
here): the init hook and the tool hooks run in the container's checkout, a user's own hook is
staged into the container, and a long output's spill file is copied to the container's scratch
directory, where file_read finds it."""

from __future__ import annotations

import asyncio
import dataclasses
from pathlib import Path

import pytest

from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from tests.support.hooks import Harness, bash, harness, hook, sh_git
from xum.runtime.container import ContainerRuntime
from xum.tools.bounds import HEAD_BYTES, TAIL_BYTES
from xum.workspaces import lifecycle
from xum.workspaces.safety.trust import set_trusted

pytestmark = [
    pytest.mark.slow,
    pytest.mark.repo(name="proj", files={"app.py": "x = 1\n"}, message="first"),
]


async def in_container(runtime: ContainerRuntime, script: str) -> str:
    out = bytearray()
    await runtime.exec(script, env={}, on_output=out.extend)
    return out.decode(errors="replace")


async def container_harness(repo: Path, engine: Engine) -> Harness:
    h = await harness(repo, f"docker {engine.image}")
    assert h.record.runtime == "docker" and h.record.path == "/src"
    return h


async def test_init_runs_in_the_container_at_creation(
    repo: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    hook(
        repo,
        "init",
        '#!/bin/sh\necho "init on $XUM_RUNTIME in $PWD"\necho "$XUM_WORKSPACE_ID" > init-ran\n',
    )
    sh_git(repo, "add", ".")
    sh_git(repo, "commit", "-qm", "hooks")
    set_trusted(repo)
    created = await lifecycle.create_workspace(
        repo, f"docker {container_engine.image}", name_hint="init"
    )
    assert created.init is not None
    lines = [line async for line in created.init.stream()]
    assert await created.init.wait() == "succeeded"
    assert lines == ["init on docker in /src"]
    runtime = created.runtime
    assert isinstance(runtime, ContainerRuntime)
    assert await in_container(runtime, "cat init-ran") == f"{created.record.id}\n"
    assert not (repo / "init-ran").exists()


async def test_tool_hooks_run_in_the_container(
    repo: Path,
    xum_root: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    hook(repo, "tool_env", 'export FROM_TOOL_ENV="sourced in $PWD"\n', executable=False)
    sh_git(repo, "add", ".")
    sh_git(repo, "commit", "-qm", "hooks")
    set_trusted(repo)
    xum_root.mkdir(parents=True, exist_ok=True)
    user = xum_root / "tool_pre"
    user.write_text('#!/bin/sh\necho "staged at $0, in $PWD" >&2\n')
    user.chmod(0o755)
    h = await container_harness(repo, container_engine)
    result = await h.call("bash", **bash('echo "$FROM_TOOL_ENV"; . /etc/os-release; echo $ID'))
    assert not result.is_error, result.output
    assert result.output.startswith("sourced in /src\nxum-test\n")

    user.write_text('#!/bin/sh\necho "staged at $0, in $PWD" >&2\nexit 3\n')
    blocked = await h.call("bash", **bash("echo never"))
    assert blocked.is_error and "~/.xum/tool_pre" in blocked.output
    staged = blocked.output.split("staged at ", 1)[1].split(",", 1)[0]
    assert staged.startswith(f"/tmp/xum-hooks-{h.record.id}/")
    assert "in /src" in blocked.output


async def test_a_spill_file_is_copied_to_the_container_where_file_read_finds_it(
    repo: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    h = await container_harness(repo, container_engine)
    result = await h.call("bash", **bash("seq 1 50000"))
    assert not result.is_error
    expected = b"".join(b"%d\n" % i for i in range(1, 50001))
    assert len(expected) > HEAD_BYTES + TAIL_BYTES
    spilled = result.meta["spill_path"]
    assert spilled.startswith(f"/tmp/xum-scratch/{h.record.id}/tool-output/")
    assert f"full output: {spilled}" in result.output
    runtime = h.runtime
    assert isinstance(runtime, ContainerRuntime)
    assert await runtime.read_bytes(spilled) == expected
    read = await h.call("file_read", path=spilled, offset=49990, limit=3)
    assert not read.is_error and "49990" in read.output and "49992" in read.output
    await asyncio.shield(lifecycle.delete_workspace(h.record.id, force=True))


async def test_the_read_only_sandbox_mode_reaches_bash_through_the_session_wiring(
    repo: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    from xum.workspaces.safety.choice import SafetyChoice

    h = await harness(repo, f"docker {container_engine.image}", safety=SafetyChoice("read-only"))
    result = await h.call("bash", **bash("cat app.py && echo y > app.py"))
    assert result.is_error and "x = 1" in result.output
    assert "Permission denied" in result.output
    writable = await harness(repo, f"docker {container_engine.image}")
    wrote = await writable.call("bash", **bash("echo y > app.py && cat app.py"))
    assert not wrote.is_error and wrote.output.startswith("y\n")


async def test_a_container_removed_behind_xum_s_back_is_a_tool_error_naming_it(
    repo: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    h = await container_harness(repo, container_engine)
    name = h.record.extra["container"]
    container_engine.run("rm", "-f", name)
    # A runtime opened now (a new session) finds the container gone at its first command.
    h.ctx = dataclasses.replace(h.ctx, runtime=ContainerRuntime(container_engine.cli, name))
    result = await h.call("bash", **bash("echo hi"))
    assert result.is_error and f"container {name} no longer exists" in result.output
    # A runtime that had seen it running says the same at its next command.
    h.ctx = dataclasses.replace(h.ctx, runtime=h.runtime)
    again = await h.call("bash", **bash("echo hi"))
    assert again.is_error and f"container {name} no longer exists" in again.output
