"""Session logs written by earlier versions of xum (tests/golden/v*/, made by
tests/golden/make_golden.py) keep opening: today's reader replays the same events, projects the
same provider history and rebuilds every recorded request, and today's writer appends a turn."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from xum.core.messages import text_message
from xum.engine.derive import replay_events
from xum.engine.replay import rebuild_requests
from xum.engine.resume import resume
from xum.store import frame_types as ev
from xum.store.projection import HistoryProjection, rebuild_history
from xum.store.sessionlog import SessionLog

GOLDEN = Path(__file__).resolve().parent.parent / "golden"
SESSIONS = sorted(p.parent for p in GOLDEN.glob("v*/*/*/chat.jsonl"))


def json_of(value: Any) -> Any:
    return json.loads(json.dumps(value))


def expected(session: Path, name: str) -> Any:
    return json.loads((session / name).read_text())


def opened(session: Path, xum_root: Path) -> SessionLog:
    """The golden log copied into this test's $XUM_ROOT (the original is never written) and
    opened as its workspace's session."""
    target = xum_root / "sessions" / session.name
    target.mkdir(parents=True)
    for name in ("chat.jsonl", "chat.manifest.json"):
        shutil.copy2(session / name, target / name)
    return SessionLog.open(session.name)


def ident(session: Path) -> str:
    return str(session.relative_to(GOLDEN))


def test_every_version_has_the_scenarios() -> None:
    versions = sorted(p.name for p in GOLDEN.glob("v*") if p.is_dir())
    assert versions and versions[0] == "v1"
    for version in versions:
        scenarios = {p.parent.name for p in SESSIONS if p.parent.parent.name == version}
        assert {"basics", "damaged", "goal", "plan", "subagents"} <= scenarios, version


@pytest.mark.parametrize("session", SESSIONS, ids=ident)
def test_a_golden_log_replays_the_events_and_history_it_was_written_with(
    session: Path, xum_root: Path
) -> None:
    log = opened(session, xum_root)
    frames = log.frames
    events = [event.to_dict() for event in replay_events(frames)]
    assert json_of(events) == expected(session, "events.json")
    history = rebuild_history(frames)
    assert json_of(history) == expected(session, "history.json")
    # The incremental projection a live session keeps agrees with the one from scratch.
    assert HistoryProjection().update(log) == history
    # Every step's request is on record and can be rebuilt.
    steps = [f for f in frames if not f.damaged and f.type == ev.STEP_START]
    assert len(rebuild_requests(frames)) == len(steps) > 0
    resume(frames)  # what a session reopening the log starts from
    log.close()


@pytest.mark.parametrize("session", SESSIONS, ids=ident)
def test_todays_writer_appends_a_turn_to_a_golden_log(session: Path, xum_root: Path) -> None:
    log = opened(session, xum_root)
    before = [event.to_dict() for event in replay_events(log.frames)]
    turn = "golden-next-turn"
    with log.writing("golden test"):
        log.append_many(
            [
                ev.spec(ev.TURN_START, {"turn_id": turn, "model": "anthropic:claude-sonnet-5-5"}),
                ev.spec(ev.USER_MESSAGE, {"message": text_message("user", "one more thing")}),
                ev.spec(ev.STEP_START, {"turn_id": turn, "step": 1}),
                ev.spec(
                    ev.ASSISTANT_MESSAGE,
                    {
                        "message": text_message("assistant", "done again"),
                        "usage": {"input_tokens": 10, "output_tokens": 2},
                        "finish_reason": "stop",
                        "model": "anthropic:claude-sonnet-5-5",
                        "cost_usd": None,
                        "step": 1,
                    },
                ),
                ev.spec(ev.TURN_END, {"turn_id": turn, "reason": "completed", "steps": 1}),
            ]
        )
    log.close()

    reopened = SessionLog.open(session.name)
    after = [event.to_dict() for event in replay_events(reopened.frames)]
    assert after[: len(before)] == before
    assert [e["type"] for e in after[len(before) :]] == [
        "turn-start",
        "user-message",
        "assistant-message",
        "turn-end",
    ]
    history = rebuild_history(reopened.frames)
    assert history[-2:] == [
        text_message("user", "one more thing"),
        text_message("assistant", "done again"),
    ]
    reopened.close()


def test_the_damaged_log_quarantines_one_frame_and_keeps_the_rest() -> None:
    damaged = [p for p in SESSIONS if p.parent.name == "damaged"]
    assert damaged
    for session in damaged:
        log = SessionLog(session)
        assert [f.damaged for f in log.frames].count(True) == 1
        assert log.frames[-1].type == ev.TURN_END
        events = expected(session, "events.json")
        assert [e["type"] for e in events].count("damaged-frame") == 1
