"""Every workspace's own block of ports, so the dev servers of parallel workspaces never collide.

The registry gives a new workspace a free block when it records it (`xum.store.port_alloc`, in
the same locked write, so concurrent creates get disjoint blocks); a workspace made before the
feature gets one when it is next opened (`ensure_block`). Commands, hooks and MCP servers of the
workspace see the block as `XUM_PORT` (its first port) and `XUM_PORTS` (`first-last`); the
front-ends show it. Anything else that needs the block (a runtime that publishes ports from a
container, say) asks `block_for`.

config.json `ports.enabled: false` switches it off: no new blocks, and `block_for` answers None
for every workspace (stored blocks are kept, so switching it on again gives them back).
"""

from __future__ import annotations

from collections.abc import Mapping

from xum.core.errors import ConfigError
from xum.core.portblock import PortBlock
from xum.store import registry
from xum.store.config import read_config
from xum.store.port_alloc import PORTS_KEY, port_settings
from xum.store.registry import WorkspaceRecord

__all__ = ["PortBlock", "block_for", "ensure_block", "ports_env"]


def _enabled() -> bool:
    config = read_config()
    try:
        return port_settings(config).enabled
    except ConfigError:
        # A bad `base` or `size` stops only what needs a new block (the registry raises there);
        # showing and passing on the blocks workspaces have goes on, unless clearly switched off.
        raw = config.get(PORTS_KEY)
        return not (isinstance(raw, Mapping) and raw.get("enabled") is False)


def block_for(record: WorkspaceRecord) -> PortBlock | None:
    """The block the workspace's commands get; None when it has none or the feature is off."""
    if record.ports is None or not _enabled():
        return None
    return record.ports


def ports_env(record: WorkspaceRecord) -> dict[str, str]:
    """`XUM_PORT` and `XUM_PORTS` for the workspace's block (empty without one)."""
    block = block_for(record)
    return block.env() if block is not None else {}


def ensure_block(record: WorkspaceRecord) -> WorkspaceRecord:
    """The record with a block, giving it one first when it has none and the feature is on (a
    locked registry write; nothing is written when it has one already)."""
    if record.ports is not None or not _enabled():
        return record
    try:
        return registry.assign_ports(record.id)
    except registry.RegistryError:  # a record that was never registered has nowhere to keep one
        return record
