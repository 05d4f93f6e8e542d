"""`xum run` tells the user a reply is stalling (field report S7): the `reply-stalled` notice
is printed on stderr and sent in `--json`, with the idle timeout configured small in
config.json `modelRequests` (a reply that pauses longer than a quarter of it between events
brings the notice and still finishes)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.e2e.cli import env_for, run_xum
from tests.gitrepo import make_repo
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


def _setup(tmp_path: Path, xum_root: Path) -> Path:
    xum_root.mkdir(mode=0o700, exist_ok=True)
    config = xum_root / "config.json"
    config.write_text(json.dumps({"modelRequests": {"idleTimeoutSeconds": 2, "maxRetries": 0}}))
    os.chmod(config, 0o600)
    return make_repo(tmp_path / "project", {"README.md": "hello\n"})


def pausing() -> fakellm.Reply:
    """A reply silent for 1 s after its first event, then whole: past the 0.5 s notice mark
    (a quarter of the 2 s idle timeout), well inside the timeout. One pause is all the notice
    needs (a pause before every event only made each run take seconds longer)."""
    return fakellm.text(
        "slow but whole", chunk_size=0, stall=fakellm.Stall(after_event=1, seconds=1.0)
    )


def test_a_pausing_reply_brings_the_stall_notice_and_finishes(
    fake_llm: FakeLLM, tmp_path: Path, xum_root: Path
) -> None:
    project = _setup(tmp_path, xum_root)
    fake_llm.script(pausing())
    result = run_xum("run", "--json", "hi", cwd=project, env=env_for(fake_llm))
    assert result.returncode == 0, result.stderr
    lines = [json.loads(line) for line in result.stdout.splitlines() if line.strip()]
    stalls = [e for e in lines if e["type"] == "reply-stalled"]
    assert stalls and stalls[0]["idle_s"] == 2 and stalls[0]["silent_s"] >= 0.5
    assert "modelRequests.idleTimeoutSeconds" in stalls[0]["message"]
    assert lines[-1]["type"] == "final" and lines[-1]["reason"] != "error"

    fake_llm.script(pausing())
    plain = run_xum("run", "hi", cwd=project, env=env_for(fake_llm))
    assert plain.returncode == 0, plain.stderr
    assert "note: the model has sent nothing for" in plain.stderr
    assert "slow but whole" in plain.stdout
