"""A hand-corrupted line inside a session log: the workspace still opens, the frame is
quarantined, `xum doctor` reports it without repairing anything, and the provider history a
new turn sends stays valid."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

from tests.e2e.cli import env_for, events, run_xum
from tests.gitrepo import APP_AND_BINARY_FILES, make_repo
from tests.support.engine import Harness, valid_history
from xum.store import frame_types as ev
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


def test_corrupted_frame_is_quarantined_reported_and_skipped(
    fake_llm: FakeLLM, tmp_path: Path, xum_root: Path
) -> None:
    repo = make_repo(tmp_path / "repo", APP_AND_BINARY_FILES)
    fake_llm.script(
        fakellm.tool_call("bash", {"script": "echo original-output", "display_name": "e"}),
        fakellm.text("first answer"),
    )
    result = run_xum("run", "--json", "first", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 0, result.stderr
    ws_id = events(result.stdout)[-1]["workspace_id"]

    log_path = xum_root / "sessions" / ws_id / "chat.jsonl"
    lines = log_path.read_bytes().splitlines(keepends=True)
    victim = next(i for i, line in enumerate(lines) if b'"type":"tool_result"' in line)
    # A hand edit that changes the line's length, in the middle of the published region.
    lines[victim] = lines[victim].replace(b"original-output", b"edited by hand!!")
    log_path.write_bytes(b"".join(lines))
    corrupted = log_path.read_bytes()

    doctor = run_xum("doctor", "--json")
    report = json.loads(doctor.stdout)
    assert report["sessions"]["damaged_frames"] == 1
    assert report["sessions"]["damaged"][0]["session"] == ws_id
    check = next(c for c in report["checks"] if c["name"] == "sessions")
    assert check["status"] == "warn" and ws_id in check["detail"]
    assert log_path.read_bytes() == corrupted  # doctor never repairs

    replay = run_xum("session", ws_id)
    assert replay.returncode == 0
    assert "damaged and was quarantined" in replay.stdout
    assert "first answer" in replay.stdout  # frames after the damage survive

    log = SessionLog.open(ws_id)
    assert [f.damaged for f in log.frames].count(True) == 1
    assert log.frames[-1].type == ev.TURN_END

    async def next_turn() -> str:
        harness = Harness(fake_llm, repo, ws_id=ws_id)
        fake_llm.script(fakellm.text("second answer"))
        try:
            return (await harness.session().run_turn("second")).text
        finally:
            await harness.close()

    assert asyncio.run(next_turn()) == "second answer"
    assert not fake_llm.errors  # the fake server validated the history it was sent
    history = valid_history(ws_id)
    assert "edited by hand" not in json.dumps(history)
