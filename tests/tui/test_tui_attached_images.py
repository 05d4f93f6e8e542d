"""`/image` in the terminal UI attached to a running `xum server` (a real subprocess): the image
is uploaded to the server and goes with the message the server's session sends."""

from __future__ import annotations

import base64
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.images import png
from tests.tui.support import start_app, type_text, until
from xum.host.server_target import ServerTarget
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.webui import XumServer, make_repo, start_server
from xum.tui.app import XumApp
from xum.tui.attached_actions import attach_to
from xum.tui.transcript import UserEntry

TOKEN = "tui-attached-images-token"
PICTURE = png(3, 3)


@pytest.fixture
def server(fake_llm: FakeLLM, tmp_path: Path) -> Iterator[XumServer]:
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_llm.url}
    running = start_server(tmp_path / "srv", TOKEN, env, repo=make_repo(tmp_path / "repo"))
    try:
        yield running
    finally:
        running.stop()


async def test_an_attached_ui_uploads_the_image_to_the_server(
    fake_llm: FakeLLM, server: XumServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake_llm.set_default(fakellm.text("A tiny red square."))
    (tmp_path / "shot.png").write_bytes(PICTURE)
    monkeypatch.chdir(tmp_path)
    ws = server.create_workspace("pictures", runtime="local")
    app = XumApp(server.repo, workspace=ws["id"], attach=attach_to(ServerTarget(server.url, TOKEN)))
    async with app.run_test(size=(110, 40)) as pilot:
        await start_app(pilot)
        selected = app.selected
        assert selected is not None and selected.id == ws["id"]
        await type_text(pilot, "/image shot.png")
        await pilot.press("enter")
        await until(pilot, lambda: app.actions.images.names == ["shot.png"], "the attachment")
        await type_text(pilot, "What is this?")
        await pilot.press("enter")
        await until(
            pilot,
            lambda: any(
                isinstance(e, UserEntry) and "[image: shot.png]" in e.text
                for e in selected.transcript.entries
            ),
            "the message with its image in the transcript",
        )
        await until(pilot, lambda: bool(fake_llm.requests), "the model request")
    blocks = fake_llm.requests[0].json["messages"][0]["content"]
    assert blocks[-1]["source"]["data"] == base64.b64encode(PICTURE).decode()
