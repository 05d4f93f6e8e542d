"""Helpers shared by benchmarks: medians, percentiles, timing of subprocesses, scratch state."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any


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


GIT = ["git", "-c", "user.name=b", "-c", "user.email=b@b"]


def git_repo(root: Path, branch: str | None = None) -> Path:
    """`root/repo`: a git repository with one commit (a README)."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    init = ["git", "init", "-q", *(["-b", branch] if branch else [])]
    subprocess.run(init, cwd=repo, check=True)
    (repo / "README").write_text("bench\n")
    subprocess.run([*GIT, "add", "."], cwd=repo, check=True)
    subprocess.run([*GIT, "commit", "-qm", "init"], cwd=repo, check=True)
    return repo


@contextlib.contextmanager
def scratch_home(prefix: str) -> Iterator[Path]:
    """A new directory whose `xum-root` and `home` are $XUM_ROOT and $HOME until the block
    ends; then both are restored and the directory is removed."""
    root = Path(tempfile.mkdtemp(prefix=prefix))
    saved = {k: os.environ.get(k) for k in ("XUM_ROOT", "HOME")}
    os.environ["XUM_ROOT"] = str(root / "xum-root")
    os.environ["HOME"] = str(root / "home")
    (root / "home").mkdir()
    try:
        yield root
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(root, ignore_errors=True)


class FakeServerProcess:
    """`bench.fake_server` in its own process (no GIL shared with what is measured): `steps`
    tool-call replies per conversation, each after `think_s`; `dump` returns its request
    timestamps."""

    def __init__(self, steps: int, think_s: float = 0.0) -> None:
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "bench.fake_server",
                "--steps",
                str(steps),
                "--think",
                str(think_s),
            ],
            cwd=Path(__file__).resolve().parents[1],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        assert self.proc.stdout is not None
        self.url = self.proc.stdout.readline().strip()
        if not self.url.startswith("http"):
            raise RuntimeError(f"the fake server did not start: {self.url!r}")

    def dump(self, path: Path) -> list[dict[str, Any]]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(f"dump {path}\n")
        self.proc.stdin.flush()
        if self.proc.stdout.readline().strip() != "ok":
            raise RuntimeError("the fake server did not answer")
        rows: list[dict[str, Any]] = json.loads(path.read_bytes())
        return rows

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


async def subscribe_all(ws: Any, ids: Sequence[str]) -> None:
    """Subscribe a server WebSocket (`websockets`' client) to every workspace of `ids`, from
    the start of each log, and wait until the server confirmed each."""
    for wid in ids:
        await ws.send(json.dumps({"type": "subscribe", "workspaceId": wid, "afterSeq": 0}))
    subscribed = 0
    while subscribed < len(ids):
        if json.loads(await ws.recv())["type"] == "subscribed":
            subscribed += 1
