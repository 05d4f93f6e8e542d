"""Quitting while a turn runs: what the stopped turn last does is not drawn once the app has
begun to exit (mounting then raised Textual's MountError, which failed the quit)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.tui.support import running_forever
from xum.testing.fakellm import FakeLLM


async def test_a_frame_due_after_the_app_began_to_exit_draws_nothing(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    async with running_forever(monkeypatch, fake_llm, tmp_path) as (app, _pilot, ws):
        # A change comes in (a turn stopping says "interrupted"); its frame is scheduled ...
        app.transcript_changed(ws, ws.transcript.note("a late line"))
        app.exit()
        # ... and falls due after the exit began (called here rather than waited for: the
        # timer's exact moment is the race this test pins down).
        app.transcript_view._flush()
        app.status_changed(ws)
