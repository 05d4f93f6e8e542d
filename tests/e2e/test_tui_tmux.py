"""`xum` alone in a real terminal: tmux runs it on a pseudo-terminal, the test types with
`send-keys` and reads the screen with `capture-pane`, waiting on what the screen shows (a
bounded poll with a deadline), never on time."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.cli import XUM
from tests.gitrepo import make_repo
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed (make deps-system installs it)"
)
WAIT_S = 30.0


class Tmux:
    def __init__(self, socket: str) -> None:
        self.socket = socket
        self.session = "xum"

    def __call__(self, *args: str) -> str:
        done = subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, timeout=30
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def screen(self) -> str:
        return self("capture-pane", "-p", "-t", self.session)

    def wait_for(self, text: str) -> str:
        deadline = time.monotonic() + WAIT_S
        while True:
            screen = self.screen()
            if text in screen:
                return screen
            assert time.monotonic() < deadline, f"{text!r} never showed:\n{screen}"
            time.sleep(0.05)  # a poll of the screen, not an ordering of events

    def keys(self, *keys: str) -> None:
        self("send-keys", "-t", self.session, *keys)

    def alive(self) -> bool:
        done = subprocess.run(
            ["tmux", "-L", self.socket, "has-session", "-t", self.session], capture_output=True
        )
        return done.returncode == 0


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    server = Tmux(f"xum-test-{uuid.uuid4().hex[:8]}")
    try:
        yield server
    finally:
        subprocess.run(["tmux", "-L", server.socket, "kill-server"], capture_output=True)


def test_xum_alone_on_a_terminal_runs_a_turn(tmux: Tmux, fake_llm: FakeLLM, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    fake_llm.script(fakellm.text("Hello from the fake model."))
    env = {
        "XUM_ROOT": os.environ["XUM_ROOT"],
        "HOME": os.environ["HOME"],
        "PATH": os.environ["PATH"],
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake_llm.url,
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
    }
    command = " ".join(
        ["env", "-i", *(f"{k}={shlex.quote(v)}" for k, v in env.items()), shlex.quote(XUM)]
    )
    tmux("new-session", "-d", "-s", tmux.session, "-x", "100", "-y", "30", "-c", str(repo), command)
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
    tmux.keys("C-q")
    deadline = time.monotonic() + WAIT_S
    while tmux.alive():
        assert time.monotonic() < deadline, f"xum did not quit:\n{tmux.screen()}"
        time.sleep(0.05)
    ((ws_dir),) = (Path(os.environ["XUM_ROOT"]) / "sessions").iterdir()
    log = SessionLog.open(ws_dir.name)
    try:
        ends = [f.data.get("reason") for f in log.frames if f.type == "turn_end"]
    finally:
        log.close()
    assert ends == ["completed"]
