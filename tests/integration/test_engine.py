"""The engine's turn loop against the fake LLM server: interrupts, crashes, errors, queues,
concurrency and request stability. Real session logs in a temp $XUM_ROOT, real processes."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from tests.processes import alive
from tests.support.engine import Harness, valid_history
from xum.store import frame_types as ev
from xum.store.config import update_config
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


async def test_interrupt_mid_stream_keeps_the_text_and_the_next_turn_works(
    fake_llm: FakeLLM, harness: Harness
) -> None:
    fake_llm.script(
        fakellm.text("word " * 200, chunk_size=5, delay=0.01),
        fakellm.text("Continuing after the interrupt."),
    )
    session = harness.session()
    task = asyncio.create_task(session.run_turn("write a lot"))
    while not any(e["type"] == "text-delta" for e in harness.events):
        await asyncio.sleep(0.01)
    session.interrupt()
    result = await task
    assert result.reason == "interrupted"
    assert result.text.startswith("word")
    assert len(result.text) < len("word " * 200)
    frames = SessionLog.open(harness.ws_id).frames
    assert frames[-1].type == ev.TURN_END and frames[-1].data["reason"] == "interrupted"

    second = await session.run_turn("go on")
    assert second.reason == "completed"
    assert second.text == "Continuing after the interrupt."
    sent = fake_llm.requests[-1].json["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[1]["content"][0]["text"].startswith("word")


def pid_script(pids: Path) -> str:
    """A bash script that records its own pid and a background child's, then waits on it."""
    return f"echo $$ > {pids}; sleep 300 & echo $! >> {pids}; wait"


async def wait_for_pids(pids: Path, count: int = 2) -> list[int]:
    deadline = time.monotonic() + 20
    while True:
        lines = pids.read_text().split() if pids.exists() else []
        if len(lines) >= count:
            return [int(pid) for pid in lines]
        assert time.monotonic() < deadline, "the command never started"
        await asyncio.sleep(0.01)


async def test_interrupt_during_a_command_kills_it_and_history_stays_valid(
    fake_llm: FakeLLM, harness: Harness, tmp_path: Path
) -> None:
    pids = tmp_path / "pids"
    fake_llm.script(
        fakellm.tool_call("bash", {"script": pid_script(pids), "display_name": "s"}),
        fakellm.text("Resumed fine."),
    )
    session = harness.session()
    task = asyncio.create_task(session.run_turn("sleep"))
    shell, child = await wait_for_pids(pids)
    session.interrupt()
    result = await task
    assert result.reason == "interrupted"
    # The shell and its background child went with the process group.
    assert await gone(shell) and await gone(child)
    valid_history(harness.ws_id)

    reopened = harness.session()  # a new engine object over the same log, as after a restart
    again = await reopened.run_turn("continue")
    assert again.reason == "completed" and again.text == "Resumed fine."
    assert not fake_llm.errors


async def gone(pid: int) -> bool:
    """Whether `pid` has exited, allowing the kernel a moment to reap a killed process."""
    deadline = time.monotonic() + 5
    while alive(pid):
        if time.monotonic() > deadline:
            return False
        await asyncio.sleep(0.02)
    return True


CHILD = """
import asyncio, sys
sys.path.insert(0, {repo!r})
from tests.support.engine import Harness
from xum.testing.fakellm import FakeLLM

class Remote:
    url = {url!r}

async def main():
    h = Harness(Remote(), __import__("pathlib").Path({workdir!r}))
    await h.session().run_turn("sleep then crash")

asyncio.run(main())
"""


async def test_kill_9_mid_turn_is_recovered_on_the_next_open(
    fake_llm: FakeLLM, harness: Harness, tmp_path: Path
) -> None:
    marker = tmp_path / "child-running"
    fake_llm.script(
        fakellm.tool_call("bash", {"script": f"touch {marker}; sleep 300", "display_name": "s"}),
        fakellm.text("Recovered."),
    )
    repo = str(Path(__file__).resolve().parents[2])
    code = CHILD.format(repo=repo, url=fake_llm.url, workdir=str(tmp_path))
    child = subprocess.Popen([sys.executable, "-c", code], start_new_session=True)
    deadline = time.monotonic() + 30
    while not marker.exists():
        assert child.poll() is None and time.monotonic() < deadline
        await asyncio.sleep(0.02)
    os.killpg(child.pid, signal.SIGKILL)
    child.wait()

    session = harness.session()  # opening for writing heals the log and closes the turn
    result = await session.run_turn("are you there?")
    assert result.reason == "completed" and result.text == "Recovered."
    frames = SessionLog.open(harness.ws_id).frames
    crash_end = next(f for f in frames if f.type == ev.TURN_END)
    assert crash_end.data == {
        "turn_id": crash_end.data["turn_id"],
        "reason": "interrupted",
        "cause": "crash",
    }
    valid_history(harness.ws_id)
    assert not fake_llm.errors


async def test_provider_error_ends_the_turn_cleanly(fake_llm: FakeLLM, harness: Harness) -> None:
    fake_llm.script(
        fakellm.error(
            401, {"type": "error", "error": {"type": "authentication_error", "message": "bad key"}}
        ),
        fakellm.text("ok now"),
    )
    session = harness.session()
    result = await session.run_turn("hi")
    assert result.reason == "error"
    assert result.error is not None and result.error["kind"] == "auth"
    assert any(e["type"] == "error" for e in harness.events)
    assert (await session.run_turn("again")).text == "ok now"
    valid_history(harness.ws_id)


async def test_message_queued_after_the_step_arrives_after_the_tool_results(
    fake_llm: FakeLLM, harness: Harness, tmp_path: Path
) -> None:
    started, release = tmp_path / "started", tmp_path / "release"
    # The command runs until the test has queued its messages: they arrive during the step.
    script = f"touch {started}; while [ ! -e {release} ]; do sleep 0.01; done"
    fake_llm.script(
        fakellm.tool_call("bash", {"script": script, "display_name": "s"}),
        fakellm.text("saw it"),
    )
    session = harness.session()
    task = asyncio.create_task(session.run_turn("start"))
    deadline = time.monotonic() + 20
    while not started.exists():
        assert time.monotonic() < deadline, "the command never started"
        await asyncio.sleep(0.01)
    session.queue_message("also do this", "step")
    session.queue_message("and later this", "turn")
    release.touch()
    result = await task
    assert result.text == "saw it"
    last = fake_llm.requests[1].json["messages"][-1]
    # Anthropic's wire carries tool results in a user message; the queued text follows them.
    assert last["role"] == "user"
    assert [b["type"] for b in last["content"]] == ["tool_result", "text"]
    assert last["content"][1]["text"] == "also do this"
    assert session.take_turn_queue() == ["and later this"]


async def test_step_limit_is_the_backstop(fake_llm: FakeLLM, harness: Harness) -> None:
    fake_llm.set_default(fakellm.tool_call("todo_read", {}))
    fake_llm.script(
        *(fakellm.tool_call("bash", {"script": f"echo {i}", "display_name": "e"}) for i in range(3))
    )
    result = await harness.session(max_steps=3).run_turn("loop")
    assert result.reason == "max_steps"
    assert result.steps == 3
    valid_history(harness.ws_id)


class _Barrier(BaseHTTPRequestHandler):
    barrier = threading.Barrier(2)

    def do_GET(self) -> None:
        try:
            self.barrier.wait(timeout=5)
            body, status = b"<html><body><p>both arrived</p></body></html>", 200
        except threading.BrokenBarrierError:
            body, status = b"alone", 504
        self.send_response(status)
        self.send_header("content-type", "text/html")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args: object) -> None:
        pass


async def test_read_only_calls_in_one_step_run_concurrently(
    fake_llm: FakeLLM, harness: Harness
) -> None:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Barrier)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        host = f"127.0.0.1:{server.server_address[1]}"
        update_config(lambda c: c.update(webFetch={"allowHosts": [host]}))
        fake_llm.script(
            fakellm.reply(
                fakellm.ToolCall("web_fetch", {"url": f"http://{host}/a"}),
                fakellm.ToolCall("web_fetch", {"url": f"http://{host}/b"}),
            ),
            fakellm.text("done"),
        )
        result = await harness.session().run_turn("fetch both")
    finally:
        server.shutdown()
    outputs = [e["output"] for e in harness.events if e["type"] == "tool-result"]
    assert len(outputs) == 2
    assert all("both arrived" in o for o in outputs), outputs
    assert result.reason == "completed"


async def test_each_request_is_a_byte_prefix_of_the_next(
    fake_llm: FakeLLM, harness: Harness
) -> None:
    fake_llm.script(
        fakellm.tool_call("bash", {"script": "echo one", "display_name": "a"}),
        fakellm.tool_call("bash", {"script": "echo two", "display_name": "b"}),
        fakellm.text("done"),
    )
    session = harness.session()
    await session.run_turn("go")
    fake_llm.script(fakellm.text("second turn"))
    await session.run_turn("again")

    def without_breakpoints(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: without_breakpoints(v) for k, v in value.items() if k != "cache_control"}
        if isinstance(value, list):
            return [without_breakpoints(v) for v in value]
        return value

    bodies = [without_breakpoints(r.json) for r in fake_llm.requests]
    for before, after in itertools.pairwise(bodies):
        assert json.dumps(after["system"]) == json.dumps(before["system"])
        assert json.dumps(after["tools"]) == json.dumps(before["tools"])
        n = len(before["messages"])
        assert json.dumps(after["messages"][:n]) == json.dumps(before["messages"])
    assert fake_llm.requests[-1].cache.read_tokens > 0
