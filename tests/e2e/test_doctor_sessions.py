"""`xum doctor`, `xum sessions` and `xum session` on sessions a user would really have: one whose
`xum run` was killed mid-turn, one a writer holds right now, one whose frames file became a
directory. Doctor shows the open turn, the unpublished tail, the frame counts and the lock
holder; one unreadable session is reported as damaged and never hides the others."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

from tests.e2e.cli import XUM, env_for, events, run_xum
from tests.gitrepo import APP_AND_BINARY_FILES, make_repo
from xum.store import sessions as session_files
from xum.store.registry import list_workspaces
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


def killed_mid_turn(fake_llm: FakeLLM, repo: Path) -> str:
    """A `xum run` killed with SIGKILL while it waits for the model; its workspace id."""
    fake_llm.script(fakellm.text("never sent", first_byte_delay=60))
    before = {r.id for r in list_workspaces(None)}
    sent = len(fake_llm.requests)
    proc = subprocess.Popen(
        [XUM, "run", "--json", "killed task"],
        cwd=repo,
        env={**os.environ, **env_for(fake_llm)},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 30
        while (
            len(fake_llm.requests) == sent
        ):  # the turn is under way: its request reached the model
            assert proc.poll() is None, "xum run ended before its request"
            assert time.monotonic() < deadline, "xum run sent no request in 30 s"
            time.sleep(0.02)
    finally:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
    (new,) = {r.id for r in list_workspaces(None)} - before
    return new


def finished_run(fake_llm: FakeLLM, repo: Path, message: str) -> str:
    fake_llm.script(fakellm.text(f"answer to {message}"))
    result = run_xum("run", "--json", message, cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 0, result.stderr
    return str(events(result.stdout)[-1]["workspace_id"])


def test_doctor_and_listings_report_what_killed_held_and_broken_sessions_left(
    fake_llm: FakeLLM, tmp_path: Path, xum_root: Path
) -> None:
    repo = make_repo(tmp_path / "repo", APP_AND_BINARY_FILES)
    killed = killed_mid_turn(fake_llm, repo)
    held = finished_run(fake_llm, repo, "held task")
    broken = finished_run(fake_llm, repo, "broken task")
    fine = finished_run(fake_llm, repo, "fine task")

    # A kill in the middle of an append leaves bytes past the published boundary, too.
    with (xum_root / "sessions" / killed / "chat.jsonl").open("ab") as fh:
        fh.write(b'{"v":1,"seq":99,"id":"ev_torn","ts":1,"ty')
    log = xum_root / "sessions" / broken / "chat.jsonl"
    log.unlink()
    log.mkdir()

    with session_files.hold(held, "a test holding the lock"):
        doctor = run_xum("doctor", "--json")
        human = run_xum("doctor")
    assert "Traceback" not in doctor.stderr + human.stderr
    assert doctor.returncode == 1  # an unreadable session is a failure to fix
    report = json.loads(doctor.stdout)
    checks = {c["name"]: c for c in report["checks"]}
    sessions = report["sessions"]
    assert sessions["count"] == 4

    each = {row["session"]: row for row in sessions["each"]}
    assert set(each) == {killed, held, broken, fine}
    assert each[killed]["open_turn"] and each[killed]["unpublished_tail_bytes"] == 41
    assert each[fine]["frames"] > 0 and each[fine]["frames"] == each[fine]["last_seq"]
    assert sessions["frames"] == sum(row["frames"] for row in each.values())
    assert sessions["open_turns"] == [{"session": killed, "turn_id": each[killed]["open_turn"]}]
    assert sessions["tails"] == [{"session": killed, "bytes": 41}]
    interrupted = checks["interrupted sessions"]
    assert interrupted["status"] == "warn" and killed in interrupted["detail"]
    assert "41 unpublished tail byte(s)" in interrupted["detail"]

    holder = each[held]["writer"]
    assert holder["pid"] == os.getpid() and holder["purpose"] == "a test holding the lock"
    assert checks["sessions in use"]["status"] == "ok"
    assert f"{held} by pid {os.getpid()}" in checks["sessions in use"]["detail"]

    assert each[broken]["manifest"] == "unreadable"
    assert "not a regular file" in each[broken]["problem"]
    assert checks["unreadable sessions"]["status"] == "fail"
    assert broken in checks["unreadable sessions"]["detail"]

    assert "[WARN] interrupted sessions:" in human.stdout
    assert "all good" not in human.stdout

    # Listings go on around the broken session and say what is wrong with it.
    listed = run_xum("sessions", "--json", "--all")
    assert listed.returncode == 0 and "Traceback" not in listed.stderr
    rows = {row["id"]: row for row in events(listed.stdout)}
    assert set(rows) == {killed, held, broken, fine}
    assert "not a regular file" in rows[broken]["problem"]
    assert rows[fine]["problem"] is None and rows[fine]["turns"] == 1
    text = run_xum("sessions", "--all")
    assert text.returncode == 0 and f"{broken}" in text.stdout and "DAMAGED:" in text.stdout
    replay = run_xum("session", broken)
    assert replay.returncode == 1 and "Traceback" not in replay.stderr
    assert "not a regular file" in replay.stderr and "hint:" in replay.stderr
    assert run_xum("session", fine).returncode == 0


def test_doctor_says_all_good_only_when_nothing_warns(
    fake_llm: FakeLLM, tmp_path: Path, xum_root: Path
) -> None:
    repo = make_repo(tmp_path / "repo", APP_AND_BINARY_FILES)
    finished_run(fake_llm, repo, "a task")
    keyed = env_for(fake_llm)  # a usable credential, or that would warn
    assert run_xum("doctor", env=keyed).stdout.rstrip().endswith("all good")
    killed_mid_turn(fake_llm, repo)
    human = run_xum("doctor", env=keyed)
    assert human.returncode == 0
    assert human.stdout.rstrip().endswith("1 warning(s): see WARN lines above (nothing failed)")
