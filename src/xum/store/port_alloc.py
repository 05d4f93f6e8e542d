"""Port blocks: the user's settings (config.json `ports`) and the allocation of a free block.

`allocate` runs inside the registry's locked read-modify-write of config.json, so two processes
creating workspaces at the same moment see each other's blocks and never get overlapping ones.
A block is free when it overlaps no block stored on any workspace record, archived ones
included; deleting a workspace removes its record and with it its block.

    "ports": {"enabled": true, "base": 20000, "size": 10}

Blocks are laid out from `base` in steps of `size`, and the lowest free one is taken, so a
deleted workspace's block is given to the next new workspace. Changing `base` or `size` leaves
existing blocks alone; new blocks still avoid them.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from xum.core.errors import ConfigError
from xum.core.paths import config_path
from xum.core.portblock import MAX_PORT, PortBlock

PORTS_KEY: Final = "ports"
DEFAULT_BASE: Final = 20000
DEFAULT_SIZE: Final = 10
MIN_BASE: Final = 1024  # below it ports need privileges; no dev server should be told to use one
MAX_SIZE: Final = 1000


@dataclass(frozen=True, slots=True)
class PortSettings:
    """config.json's `ports` settings: whether blocks are given, from where and how big."""

    enabled: bool = True
    base: int = DEFAULT_BASE
    size: int = DEFAULT_SIZE


def port_settings(config: Mapping[str, Any]) -> PortSettings:
    """The `ports` settings of a parsed config.json; ConfigError naming the key when a value is
    unusable (the operation that needs a block stops, rather than hand out surprising ports)."""
    raw = config.get(PORTS_KEY)
    if raw is None:
        return PortSettings()
    if not isinstance(raw, Mapping):
        raise _bad('"ports" must be an object like {"enabled": true, "base": 20000, "size": 10}')
    enabled = raw.get("enabled", True)
    if not isinstance(enabled, bool):
        raise _bad('"ports.enabled" must be true or false')
    base = raw.get("base", DEFAULT_BASE)
    if type(base) is not int or not MIN_BASE <= base <= MAX_PORT:
        raise _bad(f'"ports.base" must be a whole number from {MIN_BASE} to {MAX_PORT}')
    size = raw.get("size", DEFAULT_SIZE)
    if type(size) is not int or not 1 <= size <= MAX_SIZE:
        raise _bad(f'"ports.size" must be a whole number from 1 to {MAX_SIZE}')
    if base + size - 1 > MAX_PORT:
        raise _bad(f'"ports.base" + "ports.size" must stay within port {MAX_PORT}')
    return PortSettings(enabled=enabled, base=base, size=size)


def _bad(message: str) -> ConfigError:
    return ConfigError(
        message,
        path=str(config_path()),
        hint='fix the value in config.json, or remove "ports" to use the defaults',
    )


def stored_blocks(workspaces: Mapping[str, Any], *, but: str | None = None) -> list[PortBlock]:
    """Every block stored on a workspace record (except `but`'s)."""
    out = []
    for ws_id, entry in workspaces.items():
        if ws_id == but or not isinstance(entry, Mapping):
            continue
        block = PortBlock.from_json(entry.get(PORTS_KEY))
        if block is not None:
            out.append(block)
    return out


def allocate(settings: PortSettings, taken: list[PortBlock]) -> PortBlock | None:
    """The lowest block of the layout that overlaps none of `taken`; None when the feature is
    off or every block up to port 65535 is in use (the workspace then runs without one)."""
    if not settings.enabled:
        return None
    ordered = sorted(taken, key=lambda b: b.first)
    first = settings.base
    while first + settings.size - 1 <= MAX_PORT:
        candidate = PortBlock(first, settings.size)
        clash = next((b for b in ordered if b.overlaps(candidate)), None)
        if clash is None:
            return candidate
        # Jump to the first slot of the layout past the block in the way.
        steps = (clash.last - settings.base) // settings.size + 1
        first = max(first + settings.size, settings.base + steps * settings.size)
    return None
