"""`make bench`: run every `bench/bench_*.py` module's `run()` and print one JSON document.

Each module returns a dict of figures. Timings are medians, reported next to a baseline measured
in the same run, because these machines are noisy. `python -m bench NAME...` runs a subset.
"""

from __future__ import annotations

import importlib
import json
import os
import pkgutil
import platform
import subprocess
import sys
import time
from pathlib import Path


def _compile_bytecode() -> None:
    """Measure xum as users run it: a pip install compiles bytecode, so do that here too
    (some environments set PYTHONDONTWRITEBYTECODE, which would leave an editable checkout
    compiling every module from source on every start)."""
    import compileall

    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    compileall.compile_dir(str(Path(__file__).resolve().parents[1] / "src" / "xum"), quiet=1)


def main(argv: list[str]) -> int:
    _compile_bytecode()
    here = Path(__file__).resolve().parent
    names = sorted(m.name for m in pkgutil.iter_modules([str(here)]) if m.name.startswith("bench_"))
    wanted = set(argv)
    if wanted:
        names = [n for n in names if n in wanted or n.removeprefix("bench_") in wanted]
    results: dict[str, object] = {
        "machine": {"python": platform.python_version(), "platform": platform.platform()},
        "started": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    for name in names:
        began = time.monotonic()
        results[name.removeprefix("bench_")] = _run_isolated(name)
        print(f"bench {name}: {time.monotonic() - began:.1f}s", file=sys.stderr)
    print(json.dumps(results, indent=2))
    return 0


def _run_isolated(name: str) -> object:
    """Each benchmark runs in a fresh interpreter, so one cannot skew the next (memory
    high-water marks of forked children, warm caches, leftover threads)."""
    repo = Path(__file__).resolve().parents[1]
    proc = subprocess.run(
        [sys.executable, "-m", "bench", "--one", name],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    sys.stderr.write(proc.stderr)
    try:
        return json.loads(proc.stdout)
    except json.JSONDecodeError:
        return {"error": f"exit {proc.returncode}: {proc.stderr.strip()[-500:]}"}


def _run_one(name: str) -> int:
    module = importlib.import_module(f"bench.{name}")
    try:
        result = module.run()
    except Exception as exc:  # reported in the JSON, so one broken benchmark hides nothing
        result = {"error": f"{type(exc).__name__}: {exc}"}
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    if sys.argv[1:2] == ["--one"]:
        sys.exit(_run_one(sys.argv[2]))
    sys.exit(main(sys.argv[1:]))
