"""The Docker runtime: what a container workspace costs to make, what each command costs, and
how many one host holds.

* `create_to_first_output_ms`: from `lifecycle.create_workspace(repo, <runtime>)` until the
  first command's output arrives, for `worktree`, `docker <image>` (the container started, the
  bundle synced into /src) and `devcontainer` (a worktree and `devcontainer up` of a config
  naming the same image; when the Dev Container CLI is installed, else the reason), creations
  of the kinds interleaved, each deleted afterwards; medians of the same run.
* per-command, interleaved so that load hits all alike: `true` through the local runtime
  (`local`), through the bubblewrap sandbox (`sandboxed`, when bwrap works here) and through
  the container runtime (`container`: the CLI's `exec -i`, the bootstrap, the lifeline);
  `container_over_sandboxed_ms` is what a container's `exec` costs beyond the sandbox.
* `density`: container workspaces running sleep-paced agents at once, doubling until the step
  overhead's p99 passes 100 ms (bench/container_density.py says how it is read).

The image: `XUM_BENCH_IMAGE` when set (it needs bash and git), else the tests' image built
from this machine's binaries (tests/support/container_image.py). Podman is used when present,
with the tests' containers.conf (`XUM_CONTAINER_CLI` and `CONTAINERS_CONF` set by the caller
win). `XUM_BENCH_CONTAINER_MAX` caps the density ramp (default 32 workspaces).
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from bench.util import GIT, git_repo, median_ms

CREATIONS = 5
REPEAT = 50


def run() -> dict[str, Any]:
    cli = os.environ.get("XUM_CONTAINER_CLI") or ("podman" if shutil.which("podman") else None)
    if cli is None:
        return {"skipped": "no container engine (install podman)"}
    with tempfile.TemporaryDirectory(prefix="xum-bench-container-") as tmp:
        os.environ["XUM_ROOT"] = str(Path(tmp, "root"))
        os.environ["XUM_CONTAINER_CLI"] = cli
        image = os.environ.get("XUM_BENCH_IMAGE") or _test_image(cli, Path(tmp))
        repo = git_repo(Path(tmp))
        figures = asyncio.run(_measure(repo, image))
    figures["cli"] = cli
    return figures


def _test_image(cli: str, work: Path) -> str:
    from tests.support.container_image import ensure_image, podman_conf

    if cli == "podman" and "CONTAINERS_CONF" not in os.environ:
        os.environ["CONTAINERS_CONF"] = str(podman_conf(work))
    return ensure_image(cli, work)


async def _measure(repo: Path, image: str) -> dict[str, Any]:
    from bench.container_density import density
    from xum.runtime.base import Runtime
    from xum.runtime.local import LocalRuntime
    from xum.workspaces import lifecycle

    specs = {"worktree": "worktree", "docker": f"docker {image}"}
    no_devcontainer = _devcontainer_config(repo, image)
    if no_devcontainer is None:
        specs["devcontainer"] = "devcontainer"
    creations: dict[str, list[float]] = {kind: [] for kind in specs}
    kept = None
    for i in range(CREATIONS):
        for kind, spec in specs.items():
            started = time.perf_counter()
            created = await lifecycle.create_workspace(
                repo, spec, name_hint=f"bench-{kind}{i}", run_init=False
            )
            first: list[float] = []  # when the first output arrived
            await created.runtime.exec("echo up", env={}, on_output=_stamp(first))
            assert first
            creations[kind].append(first[0] - started)
            if kind == "docker" and i == CREATIONS - 1:
                kept = created  # the per-command figures use the last container
            else:
                await lifecycle.delete_workspace(created.record.id, force=True)
    assert kept is not None
    container = kept.runtime
    runtimes: dict[str, Runtime] = {"local": LocalRuntime(str(repo)), "container": container}
    sandboxed = _sandboxed(repo)
    if sandboxed is not None:
        runtimes["sandboxed"] = sandboxed
    for runtime in runtimes.values():  # warm up
        assert (await runtime.exec("true", env={})).exit_code == 0
    samples: dict[str, list[float]] = {name: [] for name in runtimes}
    for _ in range(REPEAT):
        for name, runtime in runtimes.items():
            began = time.perf_counter()
            await runtime.exec("true", env={})
            samples[name].append(time.perf_counter() - began)
    await lifecycle.delete_workspace(kept.record.id, force=True)
    medians = {f"{name}_ms": median_ms(values) for name, values in samples.items()}
    figures: dict[str, Any] = {
        "create_to_first_output_ms": {
            **{kind: median_ms(values) for kind, values in creations.items()},
            **({"devcontainer": no_devcontainer} if no_devcontainer else {}),
        },
        **medians,
        "container_added_ms": round(medians["container_ms"] - medians["local_ms"], 2),
    }
    if "sandboxed_ms" in medians:
        over = medians["container_ms"] - medians["sandboxed_ms"]
        figures["container_over_sandboxed_ms"] = round(over, 2)
    figures["density"] = await density(repo, image, Path(os.environ["XUM_ROOT"]).parent)
    return figures


def _devcontainer_config(repo: Path, image: str) -> str | None:
    """Commit a devcontainer.json naming `image` into the bench's project; None when the Dev
    Container CLI is there, else why the runtime is left out."""
    from xum.core.errors import XumError
    from xum.workspaces.checkouts.devcontainer_ops import devcontainer_cli

    try:
        devcontainer_cli()
    except XumError as exc:
        return f"unavailable: {exc.message}"
    config = repo / ".devcontainer" / "devcontainer.json"
    config.parent.mkdir()
    config.write_text(json.dumps({"name": "bench", "image": image}) + "\n")
    subprocess.run([*GIT, "add", "."], cwd=repo, check=True)
    subprocess.run([*GIT, "commit", "-qm", "devcontainer"], cwd=repo, check=True)
    return None


def _stamp(first: list[float]) -> Callable[[bytes], None]:
    def sink(_chunk: bytes) -> None:
        if not first:
            first.append(time.perf_counter())

    return sink


def _sandboxed(repo: Path) -> Any:
    from xum.runtime.local import LocalRuntime
    from xum.runtime.sandbox import Layout, SandboxedRuntime, local_backend, read_git_layout

    if not local_backend().ok:
        return None
    scratch = Path(os.environ["XUM_ROOT"], "scratch", "bench")
    scratch.mkdir(parents=True, exist_ok=True)
    layout = Layout(
        workspace=str(repo),
        writable_workspace=True,
        temp_dir=str(scratch / "sandbox-tmp"),
        egress="shared",
        writable=(str(scratch),),
        git=read_git_layout(str(repo)),
        hidden=(os.environ["XUM_ROOT"],),
        drop_caps=os.geteuid() == 0,
    )
    return SandboxedRuntime(LocalRuntime(str(repo)), layout)
