"""The composer's history is kept across runs of the UI, per project, privately."""

from __future__ import annotations

import stat
from pathlib import Path

import pytest

from tests.tui.support import model_app, project, send, start_app, until
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tui import history
from xum.tui.app import XumApp


async def test_a_message_sent_in_one_run_is_offered_by_up_in_the_next(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = model_app(monkeypatch, fake_llm, tmp_path, fakellm.text("ok"))
    other = project(tmp_path / "other")
    history.append(str(other), "a message of another project")
    async with first.run_test(size=(100, 30)) as pilot:
        await start_app(pilot)
        await send(pilot, "run the migrations")
        await until(pilot, lambda: first.selected and not first.selected.running, "the turn")
    mode = stat.S_IMODE(history.history_path().stat().st_mode)
    assert mode == 0o600
    again = XumApp(first.project_dir)
    async with again.run_test(size=(100, 30)) as pilot:
        await start_app(pilot)
        await until(pilot, lambda: again.composer.sent, "the kept history")
        again.composer.focus()
        await pilot.press("up")
        assert again.composer.text == "run the migrations"
        await pilot.press("up")  # nothing older here: the other project's is not offered
        assert again.composer.text == "run the migrations"


def test_a_damaged_line_is_skipped_and_a_huge_message_is_not_kept(tmp_path: Path) -> None:
    history.append("/p", "one")
    with history.history_path().open("ab") as f:
        f.write(b"{not json\n")
    history.append("/p", "two")
    history.append("/p", "x" * (history.MAX_TEXT + 1))
    assert history.load("/p") == ["one", "two"]


def test_the_file_is_trimmed_to_its_newest_half(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(history, "KEEP_BYTES", 2_000)
    for i in range(100):
        history.append("/p", f"message {i}")
    kept = history.load("/p")
    assert kept[-1] == "message 99" and "message 0" not in kept
    assert history.history_path().stat().st_size <= 2_000
