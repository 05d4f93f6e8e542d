"""`xum` alone in a real terminal: tmux runs it on a pseudo-terminal, the test types with
`send-keys` and reads the screen with `capture-pane`, waiting on what the screen shows (a
bounded poll with a deadline), never on time."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.support.tmux import Tmux, quit_xum, start_xum, tmux_server
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed (make deps-system installs it)"
)


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    with tmux_server() as server:
        yield server


def test_xum_alone_on_a_terminal_runs_a_turn(tmux: Tmux, fake_llm: FakeLLM, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    fake_llm.script(fakellm.text("Hello from the fake model."))
    start_xum(tmux, fake_llm, repo, 100, 30)
    tmux.wait_for("+ new workspace")
    tmux.wait_for("F1 help")
    tmux.keys("-l", "first line")
    tmux.keys("C-j")  # a new line, not a send
    tmux.keys("-l", "second line")
    tmux.keys("Enter")
    screen = tmux.wait_for("Hello from the fake model.")
    assert "› first line" in screen and "second line" in screen
    (request,) = fake_llm.requests
    assert request.json["messages"][-1]["content"][0]["text"] == "first line\nsecond line"
    tmux.keys("F1")
    tmux.wait_for("Keys")
    tmux.keys("Escape")
    quit_xum(tmux)
    ((ws_dir),) = (Path(os.environ["XUM_ROOT"]) / "sessions").iterdir()
    log = SessionLog.open(ws_dir.name)
    try:
        ends = [f.data.get("reason") for f in log.frames if f.type == "turn_end"]
    finally:
        log.close()
    assert ends == ["completed"]
