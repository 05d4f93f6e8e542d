"""The Docker runtime against a real container engine (podman here): commands stop inside the
container on a timeout or an interrupt, fork/archive/unarchive/delete act on containers, and the
sandbox settings map onto the container (read-only user, no network)."""

from __future__ import annotations

import asyncio
import json
import os
import socket
from pathlib import Path

import pytest

from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from tests.support.tools import make_ctx
from xum.runtime.container import READ_ONLY_USER, ContainerRuntime
from xum.runtime.sandbox import SandboxSettings
from xum.store import registry
from xum.tools.base import ToolContext, ToolResult
from xum.workspaces import lifecycle
from xum.workspaces.checkouts.protocol import DirtyWorkspaceError
from xum.workspaces.review import review
from xum.workspaces.safety.container_sandbox import container_call

pytestmark = [pytest.mark.slow, pytest.mark.repo(identity=True)]


def create(repo: Path, engine: Engine, hint: str = "box") -> lifecycle.CreatedWorkspace:
    return asyncio.run(
        lifecycle.create_workspace(repo, f"docker {engine.image}", name_hint=hint, run_init=False)
    )


async def run(runtime: ContainerRuntime, script: str, **kw: float) -> tuple[int | None, str]:
    out = bytearray()
    done = await runtime.exec(script, env={}, on_output=out.extend, **kw)
    return done.exit_code, out.decode(errors="replace")


async def wait_no_process_with(runtime: ContainerRuntime, marker: str) -> str:
    """Poll the container's /proc (bounded) until no command line names `marker`; returns the
    last listing (empty when none was left)."""
    found = ""
    for _ in range(100):
        # The marker is split in the probe so that the probe never finds itself.
        probe = f"grep -l '{marker[:4]}''{marker[4:]}' /proc/[0-9]*/cmdline 2>/dev/null || true"
        _, found = await run(runtime, probe)
        if not found.strip():
            return ""
        await asyncio.sleep(0.1)
    return found


def test_a_timeout_or_an_interrupt_stops_the_command_inside_the_container(
    repo: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    created = create(repo, container_engine)
    runtime = created.runtime
    assert isinstance(runtime, ContainerRuntime)
    marker = f"xum{os.urandom(4).hex()}"

    async def scenario() -> None:
        script = f"bash -c 'sleep 300; : {marker}a' & bash -c 'sleep 301; : {marker}b'"
        done = await runtime.exec(script, env={}, timeout_s=1)
        assert done.timed_out and done.exit_code is None
        assert await wait_no_process_with(runtime, marker) == ""

        task = asyncio.create_task(runtime.exec(f"bash -c 'sleep 302; : {marker}c'", env={}))
        for _ in range(100):  # started (bounded poll), then interrupted
            _, listing = await run(
                runtime, f"grep -l '{marker[:4]}''{marker[4:]}c' /proc/[0-9]*/cmdline || true"
            )
            if listing.strip():
                break
            await asyncio.sleep(0.1)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        assert await wait_no_process_with(runtime, marker) == ""

    asyncio.run(scenario())


def test_fork_archive_unarchive_and_delete_act_on_containers(
    repo: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    created = create(repo, container_engine)
    record = created.record
    runtime = created.runtime
    assert isinstance(runtime, ContainerRuntime)
    name = record.extra["container"]
    assert container_engine.state(name) == "running"

    async def commit_in_parent() -> None:
        code, out = await run(
            runtime,
            "echo parent > committed.txt && git add committed.txt && git commit -qm parent && "
            "echo loose > uncommitted.txt && git log --format=%an -1",
        )
        assert code == 0, out
        assert out.strip() == "Test"  # the project's identity was given to the checkout

    asyncio.run(commit_in_parent())
    # The review compares with where the workspace started: the agent's commit shows.
    changes = asyncio.run(review(record))
    assert changes.base is not None and changes.base.ref == "origin/main"
    assert changes.ahead == 1
    assert {f.path for f in changes.files} == {"committed.txt", "uncommitted.txt"}

    fork = asyncio.run(lifecycle.fork_workspace(record.id, "forked")).record
    assert fork.runtime == "docker" and fork.branch == "forked"
    assert fork.extra["container"] != name
    child = ContainerRuntime(container_engine.cli, fork.extra["container"])
    code, out = asyncio.run(
        run(child, "git branch --show-current; cat committed.txt; ls; git log --oneline | wc -l")
    )
    assert code == 0, out
    assert out.split()[:2] == ["forked", "parent"]
    assert "uncommitted.txt" not in out  # committed work only, as for every fork
    forked = asyncio.run(review(fork))
    assert forked.base is not None and forked.base.ref == f"origin/{record.branch}"
    assert forked.ahead == 0 and forked.files == []

    asyncio.run(lifecycle.archive_workspace(record.id))
    assert container_engine.state(name) == "exited"
    asyncio.run(lifecycle.unarchive_workspace(record.id))
    assert container_engine.state(name) == "running"

    # A container stopped behind xum's back (a reboot) is started by the next command.
    container_engine.run("stop", "-t", "1", name)
    reopened = ContainerRuntime(container_engine.cli, name)
    assert asyncio.run(run(reopened, "cat committed.txt")) == (0, "parent\n")

    with pytest.raises(DirtyWorkspaceError) as refused:
        asyncio.run(lifecycle.delete_workspace(record.id))
    assert "uncommitted.txt" in refused.value.files
    report = asyncio.run(lifecycle.delete_workspace(record.id, force=True))
    assert report.removed[0].kind == "container"
    assert container_engine.state(name) is None
    assert registry.get_workspace(record.id) is None
    asyncio.run(lifecycle.delete_workspace(fork.id, force=True))
    assert container_engine.state(fork.extra["container"]) is None


def test_read_only_mode_runs_commands_as_a_user_that_cannot_write_the_checkout(
    repo: Path,
    tmp_path: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    created = create(repo, container_engine)
    runtime = created.runtime
    assert isinstance(runtime, ContainerRuntime)
    ctx = make_ctx(tmp_path, runtime=runtime)
    changed = container_call(ctx, SandboxSettings(mode="read-only"))
    assert isinstance(changed, ToolContext)
    assert isinstance(changed.runtime, ContainerRuntime)
    assert changed.runtime.user == READ_ONLY_USER
    _, out = asyncio.run(
        run(changed.runtime, "git status --short; cat app.py >/dev/null && echo read; "
            "echo x > app.py || echo refused; echo t > /tmp/t && echo tmp-ok")
    )  # fmt: skip
    assert "read" in out and "refused" in out and "tmp-ok" in out, out
    assert "dubious" not in out
    # The other modes leave the call alone: the container is the boundary.
    assert container_call(ctx, SandboxSettings(mode="workspace-write")) is None


def test_egress_off_gives_new_containers_no_network_and_refuses_older_ones(
    repo: Path,
    tmp_path: Path,
    xum_root: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    with_network = create(repo, container_engine, "net")
    xum_root.mkdir(parents=True, exist_ok=True)
    (xum_root / "config.json").write_text(json.dumps({"sandbox": {"egress": "off"}}))
    without = create(repo, container_engine, "nonet")
    assert without.record.extra["container_network"] is False
    runtime = without.runtime
    assert isinstance(runtime, ContainerRuntime)
    # Only the loopback interface: `--network none`.
    code, out = asyncio.run(run(runtime, "ls /sys/class/net"))
    assert code == 0 and out.split() == ["lo"], out

    off = SandboxSettings(egress="off")
    assert container_call(make_ctx(tmp_path, runtime=runtime), off) is None
    refused = container_call(make_ctx(tmp_path, runtime=with_network.runtime), off)
    assert isinstance(refused, ToolResult) and refused.is_error
    assert "cannot lose its network" in refused.output


def test_a_missing_image_is_a_clear_error_and_leaves_nothing_behind(
    repo: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    from xum.runtime.container import ContainerError

    spec = f"docker localhost/xum-no-such-image-{os.urandom(3).hex()}:1"
    with pytest.raises(ContainerError) as missing:
        asyncio.run(lifecycle.create_workspace(repo, spec, name_hint="x", run_init=False))
    assert "is not on this machine and could not be pulled" in missing.value.message
    assert registry.list_workspaces() == []  # the record went with the failed container
    assert container_engine.containers(repo) == set()


def test_rename_moves_the_branch_and_a_sharing_sub_agent_opens_the_same_container(
    repo: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    from xum.workspaces.checkouts.factory import checkout_for
    from xum.workspaces.checkouts.protocol import NewWorkspace

    created = create(repo, container_engine)
    renamed = asyncio.run(lifecycle.rename_workspace(created.record.id, "renamed"))
    assert renamed.name == "renamed" and renamed.branch == "renamed" and renamed.path == "/src"
    runtime = checkout_for(renamed).open_runtime()
    assert isinstance(runtime, ContainerRuntime)
    assert asyncio.run(run(runtime, "git branch --show-current")) == (0, "renamed\n")

    # What a sub-agent with `isolation: "none"` records (subagents.records.ChildRecord).
    child = {"parent_id": renamed.id, "extra": {"task_isolation": "none"}}
    shared = checkout_for(renamed).share(NewWorkspace("child", fields=child), runtime)
    assert shared.record.runtime == "docker" and shared.record.path == "/src"
    opened = checkout_for(shared.record).open_runtime()
    assert isinstance(opened, ContainerRuntime) and opened.container == runtime.container
    assert asyncio.run(run(opened, "git branch --show-current")) == (0, "renamed\n")
    # Deleting the sub-agent's workspace leaves the container (it is the parent's).
    asyncio.run(lifecycle.delete_workspace(shared.record.id))
    assert container_engine.state(runtime.container) == "running"


def test_a_port_block_taken_on_this_machine_is_not_published_and_the_workspace_is_made(
    repo: Path,
    xum_root: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        xum_root.mkdir(parents=True, exist_ok=True)
        (xum_root / "config.json").write_text(json.dumps({"ports": {"base": port, "size": 1}}))
        created = create(repo, container_engine)
    record = created.record
    assert record.ports is not None and record.ports.first == port
    assert record.extra["container_ports_published"] is False
    assert container_engine.state(record.extra["container"]) == "running"
