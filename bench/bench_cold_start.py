"""Cold start: `xum --version` against `python -c pass` in the same run (the ratio is the
figure), plus `xum --help` and the import cost of the modules `xum run` needs first."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bench.util import median_ms, time_command

XUM = str(Path(sys.executable).with_name("xum"))
RUNS = 10


def _import_ms(module: str) -> float:
    code = f"import time; t=time.perf_counter(); import {module}; print(time.perf_counter()-t)"
    samples = []
    for _ in range(5):
        out = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        samples.append(float(out.stdout))
    return median_ms(samples)


def run() -> dict[str, object]:
    python = time_command([sys.executable, "-c", "pass"], RUNS)
    version = time_command([XUM, "--version"], RUNS)
    helps = time_command([XUM, "--help"], RUNS)
    return {
        "runs": RUNS,
        "python_c_pass_ms": median_ms(python),
        "xum_version_ms": median_ms(version),
        "xum_version_over_python": round(median_ms(version) / median_ms(python), 2),
        "xum_help_ms": median_ms(helps),
        "import_ms": {
            m: _import_ms(m)
            for m in ("xum.cli.app", "xum.engine.agent", "xum.llm.anthropic", "httpx")
        },
    }
