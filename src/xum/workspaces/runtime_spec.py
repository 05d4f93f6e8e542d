"""Runtime specs as users write them: `local`, `worktree`, `ssh <host>` or `docker <image>`.

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
    """`local`, `worktree`, `ssh <host>` or `docker <image>` -> (runtime, target): the target is
    the SSH host or the container image, None for the others."""
    words = spec.split()
    if words in (["local"], ["worktree"]):
        return words[0], None  # type: ignore[return-value]
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
        hint='use "local", "worktree", "ssh <host>" or "docker <image>" (devcontainer and Coder '
        "are not available)",
    )


def format_runtime(kind: RuntimeName, target: str | None) -> str:
    """The spec `parse_runtime` reads back."""
    return kind if target is None else f"{kind} {target}"


def origin_target(kind: RuntimeName, target: str | None) -> dict[str, str | None]:
    """The `Origin` fields a parsed target fills: the SSH host, or the container image."""
    return {"image": target} if kind == "docker" else {"host": target}
