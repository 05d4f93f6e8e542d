"""Driving `xum` in a real terminal: tmux runs it on a pseudo-terminal, tests type with
`send-keys` and read the screen with `capture-pane`, waiting on what the screen shows (a bounded
poll with a deadline), never on time."""

from __future__ import annotations

import os
import shlex
import subprocess
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.e2e.cli import XUM
from xum.testing.fakellm import FakeLLM

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

    def wait_gone(self, text: str) -> str:
        deadline = time.monotonic() + WAIT_S
        while True:
            screen = self.screen()
            if text not in screen:
                return screen
            assert time.monotonic() < deadline, f"{text!r} never went:\n{screen}"
            time.sleep(0.05)  # a poll of the screen, not an ordering of events

    def keys(self, *keys: str) -> None:
        self("send-keys", "-t", self.session, *keys)

    def alive(self) -> bool:
        done = subprocess.run(
            ["tmux", "-L", self.socket, "has-session", "-t", self.session], capture_output=True
        )
        return done.returncode == 0


@contextmanager
def tmux_server() -> Iterator[Tmux]:
    """A tmux server of its own (killed at the end, with what runs in it)."""
    server = Tmux(f"xum-test-{uuid.uuid4().hex[:8]}")
    try:
        yield server
    finally:
        subprocess.run(["tmux", "-L", server.socket, "kill-server"], capture_output=True)


def start_xum(
    tmux: Tmux,
    fake_llm: FakeLLM,
    repo: Path,
    width: int,
    height: int,
    extra_env: dict[str, str] | None = None,
) -> None:
    """`xum` alone in `repo`, on a `width` x `height` terminal, its model the fake LLM (and
    `extra_env` added to its environment)."""
    env = {
        "XUM_ROOT": os.environ["XUM_ROOT"],
        "HOME": os.environ["HOME"],
        "PATH": os.environ["PATH"],
        "PYTHONPATH": os.environ.get("PYTHONPATH", ""),
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake_llm.url,
        "TERM": "xterm-256color",
        "LANG": "C.UTF-8",
        **(extra_env or {}),
    }
    command = " ".join(
        ["env", "-i", *(f"{k}={shlex.quote(v)}" for k, v in env.items()), shlex.quote(XUM)]
    )
    size = ["-x", str(width), "-y", str(height)]
    tmux("new-session", "-d", "-s", tmux.session, *size, "-c", str(repo), command)


def quit_xum(tmux: Tmux) -> None:
    tmux.keys("C-q")
    deadline = time.monotonic() + WAIT_S
    while tmux.alive():
        assert time.monotonic() < deadline, f"xum did not quit:\n{tmux.screen()}"
        time.sleep(0.05)
