"""`xum run` under the governor (docs/governor.md): a turn held by a spent fleet budget is
announced in `--json` as a `governor-wait` event, and Ctrl-C ends the wait with exit 130
without the turn running."""

from __future__ import annotations

import json
import os
import signal
import subprocess
from pathlib import Path

from tests.e2e.cli import XUM, env_for, events
from xum.store.config import update_config
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


def test_a_held_run_says_why_and_ctrl_c_ends_it(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.set_default(fakellm.text("never sent"))
    update_config(lambda c: c.__setitem__("governor", {"budget": {"usdPerDay": 0}}))
    proc = subprocess.Popen(
        [XUM, "run", "--json", "hello"],
        cwd=repo,
        env={**os.environ, **env_for(fake_llm)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert proc.stdout is not None
        first = json.loads(proc.stdout.readline())
        assert first["type"] == "governor-wait" and first["reason"] == "budget", first
        assert "governor.budget.usdPerDay" in first["message"]
        proc.send_signal(signal.SIGINT)
        rest, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    evts = events(rest)
    assert [e["type"] for e in evts] == ["governor-wait-end", "error"]
    assert evts[-1]["code"] == "held_turn_stopped" and evts[-1]["reason"] == "interrupted"
    assert [r for r in fake_llm.requests if r.wire is not None] == []
