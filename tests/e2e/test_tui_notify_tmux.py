"""The terminal UI's desktop notification on a real terminal: xum runs in tmux, told it is in
WezTerm, and everything it writes to the terminal is recorded (`pipe-pane`) before tmux reads
it; the agent's `notify` call must come out as an OSC 9 sequence (docs/notifications.md)."""

from __future__ import annotations

import shutil
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.support.tmux import WAIT_S, Tmux, quit_xum, start_xum, tmux_server
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed (make deps-system installs it)"
)


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    with tmux_server() as server:
        yield server


def _wait_for_bytes(path: Path, wanted: bytes) -> bytes:
    deadline = time.monotonic() + WAIT_S
    while True:
        data = path.read_bytes() if path.exists() else b""
        if wanted in data:
            return data
        assert time.monotonic() < deadline, f"{wanted!r} never written; the end: {data[-400:]!r}"
        time.sleep(0.05)  # a poll of the recording, not an ordering of events


def test_notify_writes_osc_9_to_the_terminal(tmux: Tmux, fake_llm: FakeLLM, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    recording = tmp_path / "terminal.bytes"
    fake_llm.script(
        fakellm.tool_call("notify", {"title": "Build finished", "message": "all green"}),
        fakellm.text("I told you so."),
    )
    start_xum(tmux, fake_llm, repo, 100, 30, {"TERM_PROGRAM": "WezTerm"})
    tmux("pipe-pane", "-o", "-t", tmux.session, f"cat >> {recording}")
    tmux.wait_for("+ new workspace")
    tmux.keys("-l", "build it")
    tmux.keys("Enter")
    tmux.wait_for("I told you so.")
    data = _wait_for_bytes(recording, b"\x1b]9;Build finished: ")
    assert b"\x1b]9;Build finished: " in data and b": all green\x07" in data
    quit_xum(tmux)
