"""Runtime specs as users write them: `local`, `worktree` or `ssh <host>`.

Kept apart from `lifecycle` so that a front-end can check a spec while it parses its options
without importing the workspace lifecycle.
"""

from __future__ import annotations

from xum.core.errors import XumError
from xum.store.registry import RuntimeName


def parse_runtime(spec: str) -> tuple[RuntimeName, str | None]:
    """`local`, `worktree` or `ssh <host>` -> (runtime, host)."""
    words = spec.split()
    if words in (["local"], ["worktree"]):
        return words[0], None  # type: ignore[return-value]
    if len(words) == 2 and words[0] == "ssh":
        from xum.runtime.ssh import check_host

        try:
            return "ssh", check_host(words[1])
        except ValueError as exc:
            raise XumError(str(exc), hint='use -r "ssh <host>" with a host ssh accepts') from None
    raise XumError(
        f"unknown runtime {spec!r}",
        hint='use "local", "worktree" or "ssh <host>" (docker and devcontainer are not available)',
    )
