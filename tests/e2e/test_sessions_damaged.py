"""`xum sessions` lists each damaged frame of a session (field report C2): in text, a line per
frame with its line number, seq and why it was quarantined; in `--json`, a `damaged` list beside
the `damaged_frames` count."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.cli import env_for, events, run_xum
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


def test_sessions_lists_each_damaged_frame(fake_llm: FakeLLM, repo: Path, xum_root: Path) -> None:
    fake_llm.script(fakellm.text("first answer"))
    result = run_xum("run", "--json", "hello", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 0, result.stderr
    ws_id = events(result.stdout)[-1]["workspace_id"]

    log_path = xum_root / "sessions" / ws_id / "chat.jsonl"
    lines = log_path.read_bytes().splitlines(keepends=True)
    victim = next(i for i, line in enumerate(lines) if b"hello" in line)
    lines[victim] = lines[victim].replace(b"hello", b"HELLO")  # the checksum no longer matches
    log_path.write_bytes(b"".join(lines))
    seq = json.loads(lines[victim])["seq"]

    listing = run_xum("sessions", cwd=repo)
    assert listing.returncode == 0, listing.stderr
    assert "1 damaged frame(s)" in listing.stdout
    assert f"line {victim + 1}, seq {seq}: its checksum does not match" in listing.stdout

    as_json = run_xum("sessions", "--json", cwd=repo)
    (row,) = [json.loads(line) for line in as_json.stdout.splitlines()]
    assert row["damaged_frames"] == 1
    assert row["damaged"] == [
        {"line": victim + 1, "seq": seq, "why": "its checksum does not match (edited or cut short)"}
    ]
