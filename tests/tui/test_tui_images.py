"""`/image <path>` in the terminal UI: the image is held (shown as "[image: name]"), goes with the
next message to the model, and a file that is not an image is refused at once."""

from __future__ import annotations

import base64
from pathlib import Path

import pytest

from tests.support.images import SVG, png
from tests.tui.support import MODEL, on_screen, project, type_text, until, use_fake_llm
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.tui.app import XumApp
from xum.tui.transcript import ErrorEntry, UserEntry

PICTURE = png(7, 7)


async def test_an_attached_image_goes_with_the_next_message(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    repo = project(tmp_path)
    (tmp_path / "shot.png").write_bytes(PICTURE)
    (tmp_path / "logo.svg").write_bytes(SVG)
    monkeypatch.chdir(tmp_path)
    fake_llm.script(fakellm.reply("A red square."))
    app = XumApp(repo)
    app.actions.draft_model = MODEL
    async with app.run_test(size=(100, 30)) as pilot:
        await until(pilot, app.ready.is_set, "the workspace list")
        await type_text(pilot, "/image logo.svg")
        await pilot.press("enter")
        await until(
            pilot,
            lambda: any(isinstance(e, ErrorEntry) for e in app.draft.entries),
            "the refusal",
        )
        await type_text(pilot, "/image shot.png")
        await pilot.press("enter")
        await until(pilot, lambda: app.actions.images.names == ["shot.png"], "the attachment")
        await on_screen(pilot, "[image: shot.png]")
        await type_text(pilot, "What is this?")
        await pilot.press("enter")
        await until(pilot, lambda: app.selected is not None, "a new workspace")
        ws = app.selected
        assert ws is not None
        await until(pilot, lambda: not ws.running and ws.transcript.last_seq > 0, "the turn")
        assert app.actions.images.names == []
        user = next(e for e in ws.transcript.entries if isinstance(e, UserEntry))
        assert user.text == "What is this?\n[image: shot.png]"
    (request,) = fake_llm.requests
    blocks = request.json["messages"][-1]["content"]
    assert blocks[-1]["source"]["data"] == base64.b64encode(PICTURE).decode()
