"""Kill -9 a session in the middle of `/compact`, 60 times at random points: every session opens
afterwards, and its context is either the old one or the new one, never a mix.

A "zygote" imports xum once and forks one worker per round. Each worker opens the engine on the
round's workspace (healing what the previous kill left), takes a normal turn so there is
something new to summarize, says "compacting" on its stdout and runs `/compact`, whose summary
the fake LLM server (in this process) streams in small chunks. The first rounds let the
compaction finish and time it; after that the test kills the worker at a random point from that
line to a little past the measured duration: before the boundary's start frame, mid-stream,
during the final append or after it. The random delay only picks where the kill lands; nothing
waits on it to order events (the worker's line is the barrier).

About 10-20 s on a 2-core machine; nothing asserts that (pytest-timeout stops a hang).
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests.support.engine import engine_session
from tests.support.history import assert_valid
from xum.context import compaction as texts
from xum.engine.agent import SessionSettings
from xum.engine.route import resolve_route
from xum.llm.client import open_client
from xum.store import frame_types as ev
from xum.store.projection import rebuild_history
from xum.store.sessionlog import SessionLog
from xum.store.sessions import inspect
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.fakellm.record import RecordedRequest

KILLS = 60
ROUNDS_PER_SESSION = 15
CALIBRATION_ROUNDS = 2  # timed, not killed early: how long a compaction takes here
SUMMARY = "The user is building an INI parser; tokenizer done, comments pending. " * 6
SYSTEM = "You are a test."

_ZYGOTE = textwrap.dedent(
    """
    import asyncio, os, sys
    from xum.engine.route import resolve_route
    from xum.engine.agent import AgentSession, SessionSettings, WorkspaceInfo
    from xum.llm.client import open_client
    from xum.runtime.local import LocalRuntime
    from xum.store.sessionlog import SessionLog

    async def work(ws, workdir, round_no):
        route = resolve_route("anthropic:claude-sonnet-5-5")
        client = open_client(route.endpoint)
        session = AgentSession(
            workspace=WorkspaceInfo(ws, "kill9", workdir, workdir, "local"),
            log=SessionLog.open(ws, lock_timeout=5),
            runtime=LocalRuntime(workdir, workdir),
            route=route,
            client=client,
            settings=SessionSettings(system_prompt="You are a test.", tools=["bash"]),
            scratch_dir=workdir,
        )
        await session.run_turn(f"round {round_no}: keep going with the parser")
        os.write(1, b"compacting\\n")
        await session.run_turn("/compact")
        os.write(1, b"compacted\\n")
        await asyncio.sleep(3600)  # the test kills us

    for line in sys.stdin:
        ws, workdir, round_no = line.split()
        pid = os.fork()
        if pid == 0:
            try:
                asyncio.run(work(ws, workdir, int(round_no)))
            finally:
                os._exit(3)
        print(pid, flush=True)
        os.waitpid(pid, 0)
        print("reaped", flush=True)
    """
)


def respond(request: RecordedRequest) -> fakellm.Reply:
    system = "".join(b["text"] for b in request.json.get("system", []))
    if '<agent id="compact"' in system:
        return fakellm.text(SUMMARY, chunk_size=24, delay=0.005)
    return fakellm.text("noted")


def check_context(ws: str) -> str:
    """The session's context after a kill; returns "new", "old" or "later" (what it shows)."""
    report = inspect(ws)
    assert report.damaged == 0 and report.missing == [], report
    frames = list(SessionLog.open(ws).frames)
    assert [f.seq for f in frames] == list(range(1, len(frames) + 1))
    for frame in frames:
        if frame.type == ev.COMPACTION:  # a boundary is whole or absent
            assert frame.data["summary"] == texts.COMPACTION_LEAD + SUMMARY.strip()
    history = rebuild_history(frames)
    assert_valid(history)
    starts = [i for i, f in enumerate(frames) if f.type == ev.COMPACTION_START]
    if not starts:
        return "later"
    after = frames[starts[-1] + 1 :]
    boundary = next((f for f in after if f.type == ev.COMPACTION), None)
    if boundary is not None:  # the new context: the summary, then whatever followed
        assert history[0] == ev.summary_message(boundary.data["summary"])
        return "new"
    if all(f.type not in ev.MESSAGE_ROLES for f in after):  # the old context, untouched
        assert history == rebuild_history(frames[: starts[-1]])
        return "old"
    return "later"


async def opens_and_builds_a_request(ws: str, workdir: Path, server: FakeLLM) -> None:
    route = resolve_route(
        "anthropic:claude-sonnet-5-5",
        env={"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.url},
        config={},
    )
    client = open_client(route.endpoint)
    try:
        log = SessionLog.open(ws)
        log.recover()  # what the next writer does: closes the turn the kill left open
        session = engine_session(
            workdir,
            route,
            client,
            ws_id=ws,
            name="kill9",
            log=log,
            settings=SessionSettings(system_prompt=SYSTEM, tools=["bash"]),
            scratch_dir=workdir,
        )
        request = await session.next_request()
        assert_valid(request.messages)
        assert request.messages, "the session lost its context"
    finally:
        await client.aclose()


@pytest.mark.slow
def test_kill9_during_compaction_leaves_the_old_or_the_new_context(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    began = time.monotonic()
    fake_llm.set_responder(respond)
    rng = random.Random(4321)
    env = {**os.environ, "ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake_llm.url}
    zygote = subprocess.Popen(
        [sys.executable, "-c", _ZYGOTE],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert zygote.stdin is not None and zygote.stdout is not None
    outcomes: dict[str, int] = {"new": 0, "old": 0, "later": 0}
    finished = 0
    took: list[float] = []
    workspaces: set[str] = set()
    try:
        for round_no in range(KILLS):
            ws = f"kill9c-{round_no // ROUNDS_PER_SESSION}"
            workspaces.add(ws)
            zygote.stdin.write(f"{ws} {tmp_path} {round_no}\n")
            zygote.stdin.flush()
            lines: list[str] = []
            while "compacting" not in lines:  # the pid and the worker's barrier, in any order
                line = zygote.stdout.readline().strip()
                assert line, "the zygote ended early"
                lines.append(line)
            pid = int(next(line for line in lines if line.isdigit()))
            if round_no < CALIBRATION_ROUNDS:
                started = time.monotonic()
                assert zygote.stdout.readline().strip() == "compacted"
                took.append(time.monotonic() - started)
            else:
                time.sleep(rng.uniform(0, 1.3 * max(took)))
            os.kill(pid, signal.SIGKILL)
            while (line := zygote.stdout.readline().strip()) != "reaped":
                assert line, "the zygote ended early"
                finished += line == "compacted"
            outcomes[check_context(ws)] += 1
    finally:
        zygote.kill()
        zygote.wait()
    for ws in sorted(workspaces):
        asyncio.run(opens_and_builds_a_request(ws, tmp_path, fake_llm))
        check_context(ws)
    # The kills really landed on both sides of the boundary.
    assert outcomes["new"] > 0 and outcomes["old"] > 0, outcomes
    print(
        f"kill9 compaction: {outcomes}, {finished} finished before the kill, "
        f"a compaction took {max(took) * 1000:.0f} ms, "
        f"{time.monotonic() - began:.1f}s"
    )
