"""The approval layer's reading of bash scripts (`xum.tools.command_risk.assess`).

1. One-time cost, in fresh interpreters (medians of 5): `first_assess_ms`, importing
   `command_risk` and classifying one script (tree-sitter and the bash grammar load here), next
   to `import_only_ms`, importing `command_risk` alone (what start-up would pay if it did; it
   does not: the approvals module imports it at the first bash call). `grammar_load_ms` is the
   difference.
2. Per-script cost, warm (medians over 200 rounds): `assess_us` for short everyday agent
   commands, a long script (a 40-line CI step with heredocs and a function), and disguised
   critical commands that are read again (`bash -c`, `eval`, a pipe into `sh`); baseline
   `shlex_us`, `shlex.split` of the same short commands (roughly what the earlier reading did).
"""

from __future__ import annotations

import shlex
import statistics
import subprocess
import sys
import time

from bench.util import median_ms, time_call

SHORT = [
    "make test",
    "pytest -q tests/unit",
    "git add -A && git commit -qam 'Fix the parser'",
    "npm run build 2>&1 | tail -20",
    "grep -rn TODO src | head",
    "cd web && npm ci && cd ..",
]
LONG = "\n".join(
    [
        "set -euo pipefail",
        "log() { printf '%s\\n' \"$*\" >&2; }",
        *[f"log step {i} && python -m pytest tests/part{i} -q || exit 1" for i in range(30)],
        "cat > report.txt <<EOF",
        "built $(date) on $(uname -n)",
        "EOF",
        'for f in dist/*.whl; do pip install "$f"; done',
        "if [ -f Makefile ]; then make lint; else echo none; fi",
    ]
)
NESTED = [
    'bash -c "eval \'sh -c \\"ls -la\\"\'"',
    "echo 'make test' | sh",
    "env -S 'timeout 5 nice make test'",
]
ROUNDS = 200


def _fresh(code: str) -> float:
    """Seconds a fresh interpreter spends on `code`, measured inside it."""
    probe = f"import time; t = time.perf_counter(); {code}; print(time.perf_counter() - t)"
    done = subprocess.run([sys.executable, "-c", probe], check=True, capture_output=True, text=True)
    return float(done.stdout.strip())


def _per_script_us(scripts: list[str]) -> float:
    from xum.tools.command_risk import assess

    def once() -> None:
        for script in scripts:
            assess(script, workspace="/work/app")

    once()
    return round(statistics.median(time_call(once, ROUNDS)) / len(scripts) * 1e6, 1)


def run() -> dict[str, object]:
    imports = "import xum.tools.command_risk as r"
    first = [_fresh(f"{imports}; r.assess('ls', workspace='/w')") for _ in range(5)]
    only = [_fresh(imports) for _ in range(5)]

    def split() -> None:
        for script in SHORT:
            shlex.split(script)

    began = time.perf_counter()
    result: dict[str, object] = {
        "first_assess_ms": median_ms(first),
        "import_only_ms": median_ms(only),
        "grammar_load_ms": round(median_ms(first) - median_ms(only), 3),
        "assess_us": {
            "short": _per_script_us(SHORT),
            "long_40_lines": _per_script_us([LONG]),
            "nested": _per_script_us(NESTED),
        },
        "shlex_us": round(statistics.median(time_call(split, ROUNDS)) / len(SHORT) * 1e6, 1),
    }
    result["wall_s"] = round(time.perf_counter() - began, 1)
    return result
