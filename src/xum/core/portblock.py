"""A workspace's block of TCP ports: a run of consecutive ports only that workspace is given.

The type lives at the bottom because three layers share it: the registry stores it on the
workspace record (`store`), the engine puts it in every command's environment (`engine`), and
the workspace layer decides whether the user's config switches the feature on
(`xum.workspaces.ports`).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

MAX_PORT = 65535


@dataclass(frozen=True, slots=True)
class PortBlock:
    """`count` ports starting at `first` (both ends inside 1..65535)."""

    first: int
    count: int

    def __post_init__(self) -> None:
        if self.first < 1 or self.count < 1 or self.first + self.count - 1 > MAX_PORT:
            raise ValueError(f"not a port block: first={self.first}, count={self.count}")

    @property
    def last(self) -> int:
        return self.first + self.count - 1

    @property
    def ports(self) -> range:
        return range(self.first, self.first + self.count)

    @property
    def label(self) -> str:
        """`first-last`, as `XUM_PORTS` and every front-end show it."""
        return f"{self.first}-{self.last}"

    def overlaps(self, other: PortBlock) -> bool:
        return self.first <= other.last and other.first <= self.last

    def env(self) -> dict[str, str]:
        """The variables a command or hook of the workspace gets. `PORT` is deliberately not
        among them: many tools read it, and a user's own `PORT` must keep its meaning."""
        return {"XUM_PORT": str(self.first), "XUM_PORTS": self.label}

    def to_json(self) -> dict[str, int]:
        return {"first": self.first, "count": self.count}

    @classmethod
    def from_json(cls, data: object) -> PortBlock | None:
        """The block a stored `{"first", "count"}` object describes; None for anything else (a
        hand-edited entry that makes no sense is treated as no block, and a new one is given)."""
        if not isinstance(data, Mapping):
            return None
        first, count = data.get("first"), data.get("count")
        if type(first) is not int or type(count) is not int:
            return None
        try:
            return cls(first, count)
        except ValueError:
            return None
