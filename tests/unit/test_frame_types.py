"""The session log's frame payloads are typed (`xum.store.frame_types`): mypy refuses a writer that
puts an unknown field or a wrong value in a frame, `FRAME_KINDS` names every kind the logs hold,
and the frames of the golden logs fit their types."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, NotRequired, get_origin, get_type_hints

import pytest

from xum.store import frame_types as ev
from xum.store.frames import Frame

ROOT = Path(__file__).resolve().parents[2]
GOLDEN = ROOT / "tests" / "golden"

GOOD_WRITER = """
from xum.core.messages import text_message
from xum.store import frame_types as ev

frames = [
    ev.spec(ev.TURN_START, {"turn_id": "t1", "model": "m"}),
    ev.spec(ev.USER_MESSAGE, {"message": text_message("user", "hi")}),
    ev.spec(ev.TURN_END, {"turn_id": "t1", "reason": "doom_loop", "steps": 2}),
]
"""

# A field nobody declared, a reason that is not one, a missing required field, and a frame
# appended without `spec` at all.
BAD_WRITER = """
from xum.store import frame_types as ev
from xum.store.sessionlog import SessionLog

frames = [
    ev.spec(ev.TURN_START, {"turn_id": "t1", "colour": "blue"}),
    ev.spec(ev.TURN_END, {"turn_id": "t1", "reason": "bored"}),
    ev.spec(ev.STEP_START, {"turn_id": "t1"}),
]


def write(log: SessionLog) -> None:
    log.append_many([("turn_start", {"turn_id": "t1"})])
"""


def mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    snippet = tmp_path / "writer.py"
    snippet.write_text(source)
    env = {**os.environ, "MYPYPATH": str(ROOT / "src")}
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--no-incremental",
            "--config-file",
            os.devnull,
            "--follow-imports",
            "silent",
            str(snippet),
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )


@pytest.mark.timeout(300)
def test_mypy_refuses_a_frame_writer_that_does_not_fit_the_kinds_type(tmp_path: Path) -> None:
    good = mypy(tmp_path, GOOD_WRITER)
    assert good.returncode == 0, good.stdout + good.stderr
    bad = mypy(tmp_path, BAD_WRITER)
    assert bad.returncode == 1, bad.stdout + bad.stderr
    lines = [line for line in bad.stdout.splitlines() if ": error:" in line]
    # One error per bad frame, each on its own line of the snippet.
    assert len({line.split(":")[1] for line in lines}) == 4, bad.stdout


def golden_frames() -> list[dict[str, Any]]:
    frames = []
    for log in sorted(GOLDEN.glob("v*/*/*/chat.jsonl")):
        if log.parent.parent.name == "damaged":
            continue
        frames.extend(json.loads(line) for line in log.read_text().splitlines() if line)
    return frames


# Kinds added after the newest golden logs were written (they are never regenerated); their
# replay is covered by their own tests until the next golden version holds them:
# model_fallback (tests/integration/test_model_fallbacks.py).
NEWER_THAN_GOLDEN = {ev.MODEL_FALLBACK}


def test_frame_kinds_names_every_kind_the_golden_logs_hold() -> None:
    kinds = {frame["type"] for frame in golden_frames()}
    assert kinds == set(ev.FRAME_KINDS) - NEWER_THAN_GOLDEN


def test_every_golden_frame_fits_the_type_of_its_kind() -> None:
    for frame in golden_frames():
        payload_type = ev.FRAME_KINDS[frame["type"]]
        hints = get_type_hints(payload_type, include_extras=True)
        declared = set(hints)
        # The module uses postponed annotations, so `NotRequired` is read from the hints.
        required = {
            name
            for name, hint in hints.items()
            if get_origin(hint) is not NotRequired and name in payload_type.__required_keys__  # type: ignore[attr-defined]
        }
        keys = set(frame["data"])
        assert keys <= declared, (frame["type"], keys - declared)
        assert required <= keys, (frame["type"], required - keys)


def test_payload_refuses_a_frame_of_another_kind() -> None:
    frame = Frame(seq=3, id="ev_1", ts=0, type=ev.TURN_START, data={"turn_id": "t"})
    assert ev.payload(frame, ev.TURN_START)["turn_id"] == "t"
    with pytest.raises(ValueError, match="'turn_start' frame, not 'turn_end'"):
        ev.payload(frame, ev.TURN_END)
