"""The workspace's port block published from its dev container, as the Docker runtime publishes
it: the same numbers on this machine's loopback (`-p 127.0.0.1:first-last:first-last`), so a
dev server the agent starts on `$XUM_PORT` in the container answers here at the same port.

The Dev Container CLI has no option for more `run` arguments, so `up` is given an override
config (`--override-config`): the project's devcontainer.json as it is, with the publishing
appended to its `runArgs`. The CLI reads the override instead of the config but resolves the
config's relative paths (a Dockerfile, a build context) against the config's own folder, so
nothing else changes; the override lives in a temporary directory, never in the worktree.

A Docker Compose config (`dockerComposeFile`) does not use `runArgs`: its override lists one
more compose file after the project's, written beside the override, which gives the config's
`service` the same `ports` (a compose file layered on the others adds to them; it carries the
first file's `version`, which Compose v1 wants to match). The project's compose files keep their
paths (relative ones still resolve against the config's folder).

When a port of the block is taken here, the engine refuses to start the container: that
container is removed and `up` runs again without publishing (a warning says so), as on Docker.
(Compose's own message does not reach the CLI's output: a failed `up` whose block has a port
taken here counts as that too.)
"""

from __future__ import annotations

import contextlib
import json
import logging
import re
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from xum.core.jsonc import parse_jsonc
from xum.core.portblock import PortBlock
from xum.runtime.container import ContainerError
from xum.workspaces.checkouts import devcontainer_ops
from xum.workspaces.checkouts.devcontainer_ops import UpFailed, UpResult

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Started:
    up: UpResult
    published: bool  # whether the port block is published from the container


def publish_args(block: PortBlock) -> list[str]:
    """The `run` arguments that publish `block` on 127.0.0.1 at the same numbers."""
    span = f"{block.first}-{block.last}" if block.count > 1 else str(block.first)
    return ["-p", f"127.0.0.1:{span}:{span}"]


def override_config(config: Path, block: PortBlock, directory: Path) -> dict[str, Any]:
    """The config with the block's publishing added to `runArgs`, or for a Docker Compose config
    to its compose files (one more written into `directory`, see the module docstring).
    ContainerError when the config is not a JSON object."""
    try:
        data = parse_jsonc(config.read_text(encoding="utf-8"), path=str(config))
    except (OSError, UnicodeDecodeError, ValueError) as exc:
        raise ContainerError(
            f"could not read {config}: {exc}", hint="fix the devcontainer.json"
        ) from None
    if not isinstance(data, dict):
        raise ContainerError(f"{config} is not a JSON object", hint="fix the devcontainer.json")
    if "dockerComposeFile" in data:
        return _compose_override(config, data, block, directory)
    run_args = data.get("runArgs")
    existing = [str(a) for a in run_args] if isinstance(run_args, list) else []
    return {**data, "runArgs": [*existing, *publish_args(block)]}


_VERSION = re.compile(r"""^version:\s*["']?([^"'\s#]+)""", re.MULTILINE)


def _compose_override(
    config: Path, data: dict[str, Any], block: PortBlock, directory: Path
) -> dict[str, Any]:
    listed = data.get("dockerComposeFile")
    files = [listed] if isinstance(listed, str) else listed
    service = data.get("service")
    if not isinstance(files, list) or not files or not isinstance(service, str):
        raise ContainerError(
            f"{config}: a Docker Compose config needs `dockerComposeFile` and `service`",
            hint="fix the devcontainer.json",
        )
    span = publish_args(block)[1]
    layer: dict[str, Any] = {"services": {service: {"ports": [span]}}}
    try:
        found = _VERSION.search((config.parent / str(files[0])).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError):
        found = None
    if found:
        layer = {"version": found.group(1), **layer}
    ports_file = directory / "xum-ports.compose.yml"
    # JSON is YAML: no YAML writer needed.
    ports_file.write_text(json.dumps(layer, indent=2) + "\n", encoding="utf-8")
    return {**data, "dockerComposeFile": [*(str(f) for f in files), str(ports_file)]}


def _block_taken(block: PortBlock) -> bool:
    """Whether a port of `block` is taken on this machine's loopback now."""
    for port in range(block.first, block.last + 1):
        with socket.socket() as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                return True
    return False


def up(
    tool: str,
    engine: str,
    folder: Path,
    config: Path,
    *,
    workspace_id: str,
    project: str,
    mounts: list[str],
    ports: PortBlock | None,
) -> Started:
    """`devcontainer up`, publishing `ports` when given (see the module docstring)."""

    def plain() -> UpResult:
        return devcontainer_ops.up(
            tool, engine, folder, config, workspace_id=workspace_id, project=project, mounts=mounts
        )

    if ports is None:
        return Started(plain(), False)
    with tempfile.TemporaryDirectory(prefix="xum-devcontainer-") as directory:
        override = override_config(config, ports, Path(directory))
        path = Path(directory) / "devcontainer.json"
        path.write_text(json.dumps(override, indent=2) + "\n", encoding="utf-8")
        try:
            return Started(
                devcontainer_ops.up(
                    tool,
                    engine,
                    folder,
                    config,
                    workspace_id=workspace_id,
                    project=project,
                    mounts=mounts,
                    override=path,
                ),
                True,
            )
        except UpFailed as failed:
            # The engine says so; Compose's message does not reach the CLI's output, so a port
            # of the block taken here now counts too.
            if "in use" not in failed.output.lower() and not _block_taken(ports):
                raise
            # The container was made but could not start: the next `up` would find it by its
            # labels and start it again, so it goes first (Compose's is not named in the
            # CLI's answer: every container labelled with the workspace goes).
            from xum.workspaces.checkouts.container_ops import labelled, remove_container

            made = {failed.container} if failed.container else set()
            with contextlib.suppress(ContainerError):
                for container in made | set(labelled(engine, workspace_id)):
                    remove_container(engine, container)
    log.warning(
        "workspace %s: ports %s are taken here: the dev container's are not published",
        workspace_id,
        ports.label,
    )
    return Started(plain(), False)


__all__ = ["Started", "override_config", "publish_args", "up"]
