"""A Docker workspace on a remote container engine: xum passes its environment through to the
container CLI, so `CONTAINER_HOST` pointing at podman's API service (`podman system service`)
is all it takes. Commands, the stdin lifeline that stops them, and delete all go through the
service."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from tests.support.podman_service import podman_api_service
from xum.runtime.container import ContainerError, ContainerRuntime
from xum.workspaces import lifecycle

pytestmark = pytest.mark.slow


@pytest.fixture
def podman_service(container_engine: Engine, tmp_path: Path) -> Iterator[str]:  # noqa: F811
    if container_engine.cli != "podman":
        pytest.skip("the API service test needs podman")
    with podman_api_service(tmp_path / "api.sock", container_engine.env) as socket:
        yield f"unix://{socket}"


@pytest.mark.repo(identity=True)
def test_container_host_reaches_a_podman_api_service(
    repo: Path,
    podman_service: str,
    container_engine: Engine,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Pointed at nothing, the CLI fails: the variable reaches it.
    monkeypatch.setenv("CONTAINER_HOST", f"unix://{repo.parent / 'nothing.sock'}")
    with pytest.raises(ContainerError) as unreachable:
        asyncio.run(
            lifecycle.create_workspace(
                repo, f"docker {container_engine.image}", name_hint="none", run_init=False
            )
        )
    assert "cannot reach the container engine" in unreachable.value.message
    monkeypatch.setenv("CONTAINER_HOST", podman_service)
    created = asyncio.run(
        lifecycle.create_workspace(
            repo, f"docker {container_engine.image}", name_hint="remote", run_init=False
        )
    )
    runtime = created.runtime
    assert isinstance(runtime, ContainerRuntime)
    name = created.record.extra["container"]
    marker = f"xum{os.urandom(4).hex()}"

    async def scenario() -> None:
        out = bytearray()
        done = await runtime.exec(
            ". /etc/os-release; echo $ID; git branch --show-current",
            env={},
            on_output=out.extend,
        )
        assert done.exit_code == 0, out
        assert out.decode().split() == ["xum-test", created.record.name]
        stopped = await runtime.exec(f"bash -c 'sleep 300; : {marker}'", env={}, timeout_s=1)
        assert stopped.timed_out
        listing = bytearray()
        for _ in range(100):  # bounded poll: the group is stopped inside the container
            listing.clear()
            probe = f"grep -l '{marker[:4]}''{marker[4:]}' /proc/[0-9]*/cmdline || true"
            await runtime.exec(probe, env={}, on_output=listing.extend)
            if not listing.strip():
                break
            await asyncio.sleep(0.1)
        assert not listing.strip(), listing

    asyncio.run(scenario())
    # The container is the service's: the local engine sees the same storage here (rootful).
    asyncio.run(lifecycle.delete_workspace(created.record.id, force=True))
    assert container_engine.state(name) is None
