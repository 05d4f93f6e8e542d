"""The sandbox settings on a Docker (or Dev Container) workspace: the container is the boundary.

Commands in a container workspace never run under bubblewrap: the container already keeps them
away from the user's machine (its files, xum's own state, the user's keys), so the sandbox modes
map onto the container instead:

* `auto`, `workspace-write`, `off`: commands run in the container as its default user.
* `read-only` (the mode, or the read-only permission mode): commands run as an unprivileged
  user (`nobody`, uid 65534) that cannot write the checkout (owned by the container's default
  user); `/tmp` stays writable, like the sandbox's throwaway `$TMPDIR`.
* Dev Container workspaces (`runtime.devcontainer`) map the same way, except egress `off`: their
  network is their config's, so bash refuses to run while egress is off.
* egress `off`: the container was made with `--network none` when egress was off at its
  creation. A container made with a network cannot lose it later: bash then refuses to run,
  fail-closed, and says so (a new workspace made with egress off has none).
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING

from xum.runtime.base import Runtime

if TYPE_CHECKING:
    from xum.runtime.container import ContainerRuntime
    from xum.runtime.sandbox import SandboxSettings
    from xum.tools.base import ToolContext, ToolResult


def container_call(ctx: ToolContext, settings: SandboxSettings) -> ToolResult | ToolContext | None:
    """The call's context for `settings` on a container runtime (None: unchanged), or the error
    that refuses it."""
    from xum.runtime.container import READ_ONLY_USER, ContainerRuntime
    from xum.tools.base import error

    runtime = _container(ctx.runtime)
    if settings.egress == "off" and runtime is not None and runtime.kind == "devcontainer":
        return error(
            "bash was not run: the sandbox's egress is off, but a Dev Container workspace's "
            "network is what its devcontainer.json gives it, and xum cannot take it away. "
            'Set "sandbox.egress" to "shared" to run commands in it, or use a Docker workspace '
            "made while egress is off (it gets `--network none`).",
            sandbox="unavailable",
        )
    if settings.egress == "off" and (runtime is None or runtime.network):
        return error(
            "bash was not run: the sandbox's egress is off, but this Docker workspace's "
            "container was made with a network (egress was on when it was created), and a "
            "container cannot lose its network. Create a new Docker workspace while egress is "
            'off (it gets `--network none`), or set "sandbox.egress" to "shared".',
            sandbox="unavailable",
        )
    if settings.mode != "read-only":
        return None
    if runtime is None or not isinstance(ctx.runtime, ContainerRuntime):
        # Wrapped by another layer: it cannot be switched to the read-only user; fail closed.
        return error(
            "bash was not run: the read-only sandbox mode cannot be applied to this container "
            "runtime",
            sandbox="unavailable",
        )
    return dataclasses.replace(ctx, runtime=runtime.as_user(READ_ONLY_USER))


def _container(runtime: Runtime) -> ContainerRuntime | None:
    from xum.runtime.container import ContainerRuntime
    from xum.runtime.forwarding import ForwardingRuntime

    while isinstance(runtime, ForwardingRuntime):
        runtime = runtime.inner
    return runtime if isinstance(runtime, ContainerRuntime) else None
