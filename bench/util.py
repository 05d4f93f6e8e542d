"""Helpers shared by benchmarks: medians, percentiles, timing of subprocesses."""

from __future__ import annotations

import statistics
import subprocess
import time
from collections.abc import Callable, Sequence


def median_ms(samples: Sequence[float]) -> float:
    return round(statistics.median(samples) * 1000, 3)


def percentile(samples: Sequence[float], pct: float) -> float:
    ordered = sorted(samples)
    if not ordered:
        return float("nan")
    k = min(len(ordered) - 1, max(0, round(pct / 100 * (len(ordered) - 1))))
    return ordered[k]


def time_call(fn: Callable[[], object], repeat: int) -> list[float]:
    out = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        fn()
        out.append(time.perf_counter() - t0)
    return out


def time_command(argv: list[str], repeat: int, env: dict[str, str] | None = None) -> list[float]:
    def once() -> None:
        subprocess.run(argv, check=True, stdout=subprocess.DEVNULL, env=env)

    once()  # warm the page cache
    return time_call(once, repeat)
