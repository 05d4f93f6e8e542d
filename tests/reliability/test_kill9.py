"""Kill -9 a writer at random points, 200 times: the log never shows a torn frame, its seqs stay
contiguous, and no frame published before a kill is lost.

A small "zygote" process imports xum once and forks one worker per round, so a round costs a fork
rather than an interpreter start. Each worker opens the log (healing what the previous kill left
behind), then appends single frames, batches (some with multi-KB payloads) and whole turns until
it is killed. After every publish it reports the seqs it got and a tag per frame in a side file.
The report is a plain write: SIGKILL ends the process, not the kernel, so written bytes survive it
(only a power cut would need an fsync, and this test does not simulate one).

It takes about 10-20 s on a 2-core machine (200 rounds of fork + up to 40 ms of work + checks);
nothing asserts that (pytest-timeout stops a hang). The random delay before each kill only picks
where it lands; the invariants hold wherever that is.
"""

from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.support.history import assert_valid
from xum.store.projection import rebuild_history
from xum.store.sessionlog import SessionLog
from xum.store.sessions import inspect

KILLS = 200
ROUNDS_PER_SESSION = 40  # a fresh session now and then keeps the open cost of each round small
MAX_DELAY_S = 0.04  # each worker is killed at a random point this far into its work

_ZYGOTE = textwrap.dedent(
    """
    import os, random, sys
    from xum.store.sessionlog import SessionLog

    def user(tag, size):
        text = "x" * size
        return {"message": {"role": "user", "content": [{"type": "text", "text": text}]}, "tag": tag}

    def work(ws, report_path, round_no):
        rng = random.Random(round_no * 7919 + os.getpid())
        report = os.open(report_path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
        log = SessionLog.open(ws, lock_timeout=5)
        counter = 0

        def publish(events):
            frames = log.append_many(events)
            os.write(report, b"".join(b"%d %s\\n" % (f.seq, f.data["tag"].encode()) for f in frames))

        def tag():
            nonlocal counter
            counter += 1
            return f"{round_no}-{counter}"

        while True:
            pick = rng.random()
            if pick < 0.35:
                publish([("user_message", user(tag(), rng.randint(10, 400)))])
            elif pick < 0.7:
                size = rng.choice([50, 300, 4000, 20000])
                publish([("user_message", user(tag(), size)) for _ in range(rng.randint(2, 10))])
            else:
                turn = tag()
                with log.writing("turn"):
                    publish([("turn_start", {"turn_id": turn, "tag": turn})])
                    calls = [f"call-{turn}-{i}" for i in range(rng.randint(1, 3))]
                    parts = [
                        {"type": "tool_call", "id": c, "name": "bash", "arguments": "{}"}
                        for c in calls
                    ]
                    publish([("assistant_message", {
                        "message": {"role": "assistant", "content": parts}, "tag": tag()
                    })])
                    for c in calls:
                        result = {"type": "tool_result", "call_id": c, "name": "bash",
                                  "output": "y" * rng.randint(10, 3000)}
                        publish([("tool_result", {
                            "message": {"role": "tool", "content": [result]}, "tag": tag()
                        })])
                    publish([("turn_end", {"turn_id": turn, "reason": "completed", "tag": tag()})])

    for line in sys.stdin:
        ws, report_path, round_no = line.split()
        pid = os.fork()
        if pid == 0:
            try:
                work(ws, report_path, int(round_no))
            finally:
                os._exit(3)
        print(pid, flush=True)
        os.waitpid(pid, 0)
        print("reaped", flush=True)
    """
)


def read_reports(path: Path) -> dict[int, str]:
    """seq -> tag for every complete report line."""
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        return {}
    out = {}
    for line in data.split(b"\n")[:-1]:  # a last line without newline was cut by the kill
        seq, tag = line.split(b" ")
        out[int(seq)] = tag.decode()
    return out


def check_session(ws: str, reports: dict[int, str]) -> tuple[bool, bool]:
    """Assert the invariants after a kill; returns (left an unpublished tail, left a turn open)."""
    report = inspect(ws)
    assert report.manifest in ("ok", "none"), report
    assert report.damaged == 0 and report.missing == [], report
    frames = SessionLog.open(ws).frames
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))  # contiguous, no torn frame
    assert not any(f.damaged for f in frames)
    for seq, tag in reports.items():  # every frame published before the kill is still there
        assert seq <= len(frames), f"published frame {seq} lost ({len(frames)} frames)"
        assert frames[seq - 1].data.get("tag") == tag, seq
    assert_valid(rebuild_history(frames))  # the provider history is valid even mid-turn
    return report.unpublished_tail_bytes > 0, report.open_turn is not None


@pytest.mark.slow
def test_kill9_never_loses_a_published_frame(xum_root: Path, tmp_path: Path) -> None:
    began = time.monotonic()
    rng = random.Random(1234)
    zygote = subprocess.Popen(
        [sys.executable, "-c", _ZYGOTE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=os.environ.copy(),
    )
    assert zygote.stdin is not None and zygote.stdout is not None
    tails = open_turns = 0
    published = 0
    try:
        for round_no in range(KILLS):
            ws = f"kill9-{round_no // ROUNDS_PER_SESSION}"
            report_path = tmp_path / f"{ws}.reports"
            zygote.stdin.write(f"{ws} {report_path} {round_no}\n")
            zygote.stdin.flush()
            pid = int(zygote.stdout.readline())
            time.sleep(rng.uniform(0, MAX_DELAY_S))
            os.kill(pid, signal.SIGKILL)
            assert zygote.stdout.readline().strip() == "reaped"

            reports = read_reports(report_path)
            tail, open_turn = check_session(ws, reports)
            tails += tail
            open_turns += open_turn
            published += len(reports)
    finally:
        zygote.kill()
        zygote.wait()

    # Each session heals on the next writer open: no tail, no open turn, history valid.
    for index in range(KILLS // ROUNDS_PER_SESSION):
        ws = f"kill9-{index}"
        SessionLog.open(ws).recover()
        report = inspect(ws)
        assert report.unpublished_tail_bytes == 0 and report.open_turn is None
        check_session(ws, read_reports(tmp_path / f"{ws}.reports"))
    # The kills really landed in the interesting places, not only between appends.
    assert published > KILLS
    assert tails > 0 and open_turns > 0
    print(
        f"kill9: {published} frames published, {tails} torn/unpublished tails, "
        f"{open_turns} open turns, {time.monotonic() - began:.1f}s"
    )
