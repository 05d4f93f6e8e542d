"""Runtime specs as users write them: `local`, `worktree`, `ssh <host>`, `docker <image>`,
`devcontainer` or `devcontainer <config-name>`.

Kept apart from `lifecycle` so that a front-end can check a spec while it parses its options
without importing the workspace lifecycle.
"""

from __future__ import annotations

import re

from xum.core.errors import XumError
from xum.store.registry import RuntimeName

# An image reference as docker and podman take it (`node:20`, `ghcr.io/org/app:1@sha256:...`),
# and never something the CLI would read as an option.
IMAGE_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._/:@+-]{0,254}")


def check_image(image: str) -> str:
    if not IMAGE_RE.fullmatch(image):
        raise ValueError(f"not a usable container image reference: {image!r}")
    return image


def parse_runtime(spec: str) -> tuple[RuntimeName, str | None]:
    """`local`, `worktree`, `ssh <host>`, `docker <image>` or `devcontainer [<config-name>]`
    -> (runtime, target): the target is the SSH host, the container image or the named
    devcontainer config, None for the others."""
    words = spec.split()
    if words in (["local"], ["worktree"], ["devcontainer"]):
        return words[0], None  # type: ignore[return-value]
    if len(words) == 2 and words[0] == "devcontainer":
        from xum.workspaces.devcontainer_configs import CONFIG_NAME_RE

        if not CONFIG_NAME_RE.fullmatch(words[1]):
            raise XumError(
                f"not a devcontainer config name: {words[1]!r}",
                hint='use -r "devcontainer <name>" for .devcontainer/<name>/devcontainer.json',
            )
        return "devcontainer", words[1]
    if len(words) == 2 and words[0] == "ssh":
        from xum.runtime.ssh import check_host

        try:
            return "ssh", check_host(words[1])
        except ValueError as exc:
            raise XumError(str(exc), hint='use -r "ssh <host>" with a host ssh accepts') from None
    if len(words) == 2 and words[0] == "docker":
        try:
            return "docker", check_image(words[1])
        except ValueError as exc:
            raise XumError(
                str(exc), hint='use -r "docker <image>", e.g. "docker node:20"'
            ) from None
    raise XumError(
        f"unknown runtime {spec!r}",
        hint='use "local", "worktree", "ssh <host>", "docker <image>" or "devcontainer '
        '[<config-name>]" (Coder is not available)',
    )


def format_runtime(kind: RuntimeName, target: str | None) -> str:
    """The spec `parse_runtime` reads back."""
    return kind if target is None else f"{kind} {target}"


def origin_target(kind: RuntimeName, target: str | None) -> dict[str, str | None]:
    """The `Origin` fields a parsed target fills: the SSH host, the container image, or the
    named devcontainer config."""
    if kind == "docker":
        return {"image": target}
    if kind == "devcontainer":
        return {"devcontainer_config": target}
    return {"host": target}
