"""What the fleet spent today: one small JSON file per UTC day under `$XUM_ROOT/governor/`.

    $XUM_ROOT/governor/spend-2026-12-04.json  {"total": 3.21, "projects": {"/src/app": 2.5}}

Every xum process of the same `$XUM_ROOT` adds to the same file (read-modify-write under a
lock, replaced atomically), so the fleet budget (docs/governor.md) holds across processes and
restarts. Amounts come from the costs the sessions report (each reply's and each compaction's
`cost_usd`); a reply of unknown price adds nothing. Blocking file work: call from a thread.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from pathlib import Path

import orjson

from xum.core.fsutil import atomic_write_bytes
from xum.core.lock import locked
from xum.core.paths import ensure_private_dir, xum_root


def today() -> str:
    return dt.datetime.now(dt.UTC).date().isoformat()


def seconds_to_midnight() -> float:
    """Until the next UTC day, when the day's spending starts again from zero."""
    now = dt.datetime.now(dt.UTC)
    tomorrow = dt.datetime.combine(now.date() + dt.timedelta(days=1), dt.time(), dt.UTC)
    return max(1.0, (tomorrow - now).total_seconds())


@dataclass
class DaySpend:
    total: float = 0.0
    projects: dict[str, float] = field(default_factory=dict)


class SpendBook:
    def __init__(self, directory: Path | None = None) -> None:
        self.directory = directory or xum_root() / "governor"

    def path(self, day: str) -> Path:
        return self.directory / f"spend-{day}.json"

    def read(self, day: str | None = None) -> DaySpend:
        try:
            raw = orjson.loads(self.path(day or today()).read_bytes())
        except (OSError, orjson.JSONDecodeError):
            return DaySpend()  # no spending yet (or a damaged file, which the next add replaces)
        if not isinstance(raw, dict):
            return DaySpend()
        total = raw.get("total")
        projects = raw.get("projects")
        return DaySpend(
            float(total) if isinstance(total, int | float) else 0.0,
            {
                str(k): float(v)
                for k, v in (projects.items() if isinstance(projects, dict) else ())
                if isinstance(v, int | float)
            },
        )

    def add(self, amounts: dict[str, float], day: str | None = None) -> DaySpend:
        """Add each project's amount to the day's file; returns the day's new totals."""
        day = day or today()
        ensure_private_dir(self.directory)
        path = self.path(day)
        with locked(path.with_name(path.name + ".lock"), purpose="fleet spend"):
            spend = self.read(day)
            for project, usd in amounts.items():
                spend.total += usd
                spend.projects[project] = spend.projects.get(project, 0.0) + usd
            data = {"day": day, "total": spend.total, "projects": spend.projects}
            atomic_write_bytes(path, orjson.dumps(data) + b"\n", durable=False)
        return spend
