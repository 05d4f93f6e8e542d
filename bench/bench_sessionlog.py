"""Session log: durable append rate, open + full projection by session size, and the cost of the
incremental projection for the next request at 100k frames.

Baselines measured in the same run, on the same disk:
* append: one raw `write` + `fdatasync` of the same bytes (the least a durable append costs);
* open: reading the file and `orjson.loads` of each line into a list, with the GC paused as the
  loader does (the least a parse of the log costs);
* incremental projection: the same step at 1k frames (a ratio near 1 means it does not grow
  with the history);
* publish: the log's and the manifest's flushes side by side against the same bytes flushed one
  after the other (interleaved); the gain is large while other writes are syncing to the disk
  and small on an idle one.
"""

from __future__ import annotations

import os
import random
import shutil
import statistics
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson

from bench.util import median_ms, time_call
from xum.core.fsutil import atomic_write_bytes
from xum.store import frame_types as ev
from xum.store.frames import encode_frame
from xum.store.manifest import Manifest
from xum.store.projection import HistoryProjection
from xum.store.publish import sync_and_publish
from xum.store.scan import gc_paused
from xum.store.sessionlog import LOG_NAME, MANIFEST_NAME, SessionLog

SIZES = (1_000, 10_000, 100_000)


def _user(rng: random.Random) -> tuple[str, dict[str, Any]]:
    text = f"please look at the failing test in module {rng.randint(0, 999)} " * 2
    return ev.USER_MESSAGE, {
        "message": {"role": "user", "content": [{"type": "text", "text": text}]}
    }


def _assistant(rng: random.Random, call_id: str) -> tuple[str, dict[str, Any]]:
    return ev.ASSISTANT_MESSAGE, {
        "message": {
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Let me check the file first. " * rng.randint(1, 3)},
                {
                    "type": "tool_call",
                    "id": call_id,
                    "name": "read_file",
                    "arguments": f'{{"path": "src/pkg/module_{rng.randint(0, 99)}.py"}}',
                },
            ],
        },
        "usage": {"input_tokens": 12000, "output_tokens": 80},
        "finish_reason": "tool_calls",
        "model": "claude-sonnet",
    }


def _result(rng: random.Random, call_id: str) -> tuple[str, dict[str, Any]]:
    # Most tool results are short; about one in 25 is a multi-KB file read or command output.
    size = rng.randint(1_500, 6_000) if rng.random() < 0.04 else rng.randint(20, 160)
    message = ev.tool_result_message(call_id, "read_file", "x" * size, is_error=False)
    return ev.TOOL_RESULT, {"message": message}


def realistic_events(n: int, seed: int = 7) -> list[tuple[str, dict[str, Any]]]:
    """Turns of: turn_start, user message, then steps of step_start + assistant + tool result."""
    rng = random.Random(seed)
    out: list[tuple[str, dict[str, Any]]] = []
    turn = 0
    while len(out) < n:
        turn += 1
        turn_id = f"turn-{turn}"
        out += [(ev.TURN_START, {"turn_id": turn_id}), _user(rng)]
        for step in range(rng.randint(1, 6)):
            call_id = f"call-{turn}-{step}"
            out += [
                (ev.STEP_START, {"turn_id": turn_id, "step": step}),
                _assistant(rng, call_id),
                _result(rng, call_id),
            ]
        out.append((ev.TURN_END, {"turn_id": turn_id, "reason": "completed"}))
    return out[:n]


def _build(directory: Path, n: int) -> SessionLog:
    log = SessionLog(directory)
    events = realistic_events(n)
    with log.writing("bench"):
        for start in range(0, n, 2_000):
            log.append_many(events[start : start + 2_000])
    return log


def _append_figures(root: Path) -> dict[str, Any]:
    log = SessionLog(root / "appends")
    frame = realistic_events(3)[1]  # a ~300-byte user message
    log.append(*frame)  # create the files
    with log.writing("bench"):
        single = time_call(lambda: log.append(*frame), 400)
        batch = time_call(lambda: log.append_many([frame] * 10), 150)
    size = len((root / "appends" / LOG_NAME).read_bytes().splitlines()[-1]) + 1

    raw_path = root / "raw.bin"
    fd = os.open(raw_path, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)
    line = b"x" * (size - 1) + b"\n"
    try:
        raw = time_call(lambda: (os.write(fd, line), os.fdatasync(fd)), 400)
    finally:
        os.close(fd)
    return {
        "frame_bytes": size,
        "single_median_ms": median_ms(single),
        "single_per_s": round(1 / statistics.median(single)),
        "batch10_median_ms": median_ms(batch),
        "batch10_frames_per_s": round(10 / statistics.median(batch)),
        "baseline_write_fdatasync_median_ms": median_ms(raw),
        "single_vs_baseline": round(statistics.median(single) / statistics.median(raw), 2),
    }


def _publish_figures(root: Path, rounds: int = 300) -> dict[str, Any]:
    """An append's flushes and publish (`xum.store.publish`): side by side, as a session log
    does it when the append is the process's only one in flight, against the same bytes flushed
    one after the other (the log, then the manifest's temp file: how appends published before),
    interleaved so that both see the same disk. Then 8 sessions appending at once (they flush
    one after the other, joining each other's filesystem commits)."""
    frame = realistic_events(3)[1]
    line = encode_frame(1, "ev_bench", 0, *frame)
    manifest = Manifest(size=len(line), frames=1, last_seq=1)
    fds = {}
    for name in ("side", "sequential"):
        (root / name).mkdir()
        fds[name] = os.open(root / name / LOG_NAME, os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o600)

    def side() -> None:
        os.write(fds["side"], line)
        sync_and_publish(fds["side"], root / "side" / MANIFEST_NAME, manifest)

    def sequential() -> None:
        os.write(fds["sequential"], line)
        os.fdatasync(fds["sequential"])
        atomic_write_bytes(root / "sequential" / MANIFEST_NAME, manifest.to_bytes())

    samples: dict[str, list[float]] = {"side": [], "sequential": []}
    try:
        for i in range(rounds):
            for name, fn in [("side", side), ("sequential", sequential)][:: 1 if i % 2 else -1]:
                samples[name] += time_call(fn, 1)
    finally:
        for fd in fds.values():
            os.close(fd)
    logs = [SessionLog(root / f"many-{i}") for i in range(8)]
    together: list[float] = []

    def appender(target: SessionLog) -> None:
        with target.writing("bench"):
            together.extend(time_call(lambda: target.append(*frame), rounds // 3))

    threads = [threading.Thread(target=appender, args=(target,)) for target in logs]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    side_s, seq_s = statistics.median(samples["side"]), statistics.median(samples["sequential"])
    return {
        "side_by_side_median_ms": median_ms(samples["side"]),
        "one_after_the_other_median_ms": median_ms(samples["sequential"]),
        "side_vs_one_after_the_other": round(side_s / seq_s, 2),
        "eight_sessions_appending_at_once_median_ms": median_ms(together),
    }


def _timed(fn: Callable[[], object], repeat: int) -> list[float]:
    """Like `time_call`, but the result is freed after the clock stops: tearing down the
    previous 100k-frame log is not part of opening the next one."""
    samples = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        samples.append(time.perf_counter() - t0)
        del result
    return samples


def _open_figures(directory: Path, repeat: int) -> dict[str, Any]:
    data = (directory / LOG_NAME).read_bytes()

    def baseline() -> object:
        with gc_paused():
            return [orjson.loads(line) for line in (directory / LOG_NAME).read_bytes().splitlines()]

    def open_and_project() -> object:
        log = SessionLog(directory)
        return log, HistoryProjection().update(log)

    opened = _timed(lambda: SessionLog(directory), repeat)
    projected = _timed(open_and_project, repeat)
    base = _timed(baseline, repeat)
    return {
        "mb": round(len(data) / 1e6, 1),
        "avg_frame_bytes": round(len(data) / data.count(b"\n")),
        "open_median_ms": median_ms(opened),
        "open_and_project_median_ms": median_ms(projected),
        "baseline_read_and_parse_median_ms": median_ms(base),
        "open_vs_baseline": round(statistics.median(opened) / statistics.median(base), 2),
    }


def _incremental(log: SessionLog, repeat: int) -> dict[str, list[float]]:
    """The next request after a model step: the step's assistant message (one tool call) is
    appended, then its tool result (timed), then the projection is brought up to date (timed).
    Also timed: projecting while the call is still pending, which hands out a fresh list."""
    projection = HistoryProjection()
    projection.update(log)
    rng = random.Random(5)
    out: dict[str, list[float]] = {"append": [], "update": [], "pending": []}
    with log.writing("bench"):
        for i in range(repeat):
            call_id = f"bench-{log.last_seq}-{i}"
            log.append(*_assistant(rng, call_id))
            if i % 4 == 0:
                t0 = time.perf_counter()
                projection.update(log)
                out["pending"].append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            log.append(*_result(rng, call_id))
            t1 = time.perf_counter()
            projection.update(log)
            out["update"].append(time.perf_counter() - t1)
            out["append"].append(t1 - t0)
    return out


def run() -> dict[str, Any]:
    root = Path(tempfile.mkdtemp(prefix="xum-bench-sessionlog-"))
    try:
        out: dict[str, Any] = {"appends": _append_figures(root)}
        out["publish"] = _publish_figures(root)
        logs = {}
        for n in SIZES:
            t0 = time.perf_counter()
            logs[n] = _build(root / f"s{n}", n)
            built = time.perf_counter() - t0
            figures = _open_figures(root / f"s{n}", repeat=3 if n >= 100_000 else 7)
            figures["build_s"] = round(built, 2)
            out[f"open_{n // 1000}k"] = figures
        small = _incremental(logs[1_000], 200)
        big = _incremental(logs[100_000], 200)
        out["incremental_projection"] = {
            "at_100k_median_ms": median_ms(big["update"]),
            "at_1k_median_ms": median_ms(small["update"]),
            "ratio_100k_vs_1k": round(
                statistics.median(big["update"]) / statistics.median(small["update"]), 2
            ),
            "at_100k_messages": len(HistoryProjection().update(logs[100_000])),
            "at_100k_with_a_call_pending_median_ms": median_ms(big["pending"]),
            "append_tool_result_at_100k_median_ms": median_ms(big["append"]),
        }
        out["aims"] = {
            "open_100k_under_1s": out["open_100k"]["open_median_ms"] < 1000,
            "incremental_100k_under_1ms": out["incremental_projection"]["at_100k_median_ms"] < 1,
        }
        out["disk"] = str(root.parent)
        return out
    finally:
        shutil.rmtree(root, ignore_errors=True)
