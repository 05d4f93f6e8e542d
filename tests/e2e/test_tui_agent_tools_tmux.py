"""The terminal UI's view of what the agent does beside its replies, on a real terminal (issue
22's tmux side; tests/tui/test_tui_background.py and test_tui_images.py check the same through
Textual's pilot): xum runs in tmux against the fake LLM and the test reads the screen.

- F12 lists a background process the agent started with a monitor (name, status, last line);
  when the process prints the line its monitor watches for, the agent is woken: the transcript
  shows the wake-up's note and the model's next request carries the notice.
- `/image <path>` holds an image (shown as `[image: name]`) and the message sent next carries it
  to the model as an image block.

Ordering is by a barrier file the test creates and by bounded polls of the pane and of the fake
LLM's requests, never by sleeps."""

from __future__ import annotations

import base64
import os
import shutil
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.gitrepo import make_repo
from tests.support.images import png
from tests.support.tmux import WAIT_S, Tmux, quit_xum, start_xum, tmux_server
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = [
    pytest.mark.skipif(
        shutil.which("tmux") is None, reason="tmux is not installed (make deps-system installs it)"
    ),
    pytest.mark.timeout(180),
]

# Wide enough that the wake-up note and the list's rows stay on one line each.
WIDTH, HEIGHT = 160, 40


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    with tmux_server() as server:
        yield server


def _wait_for_requests(fake_llm: FakeLLM, count: int, tmux: Tmux) -> None:
    """Until the fake LLM has received `count` requests (a bounded poll)."""
    deadline = time.monotonic() + WAIT_S
    while len(fake_llm.requests) < count:
        assert time.monotonic() < deadline, (
            f"{len(fake_llm.requests)} of {count} requests arrived:\n{tmux.screen()}"
        )
        time.sleep(0.05)  # a poll of the fake's record, not an ordering of events


def _texts(message: dict[str, Any]) -> str:
    """The text of a request's message, its blocks joined."""
    content = message["content"]
    if isinstance(content, str):
        return content
    return "\n".join(str(block.get("text", "")) for block in content)


def test_f12_lists_a_watched_process_and_its_line_wakes_the_agent(
    tmux: Tmux, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    gate = tmp_path / "gate"
    script = (
        f"echo waiting for the gate; while [ ! -e {gate} ]; do sleep 0.05; done; echo BUILD READY"
    )
    fake_llm.script(
        fakellm.tool_call(
            "bash",
            {
                "script": script,
                "display_name": "Build watch",
                "run_in_background": True,
                # The matching line alone wakes the agent: one wake-up, whatever the load.
                "monitor": {"filter": "READY", "wake_on_exit": False},
            },
        ),
        fakellm.text("Watching the build."),
        fakellm.text("The build is done."),
    )
    start_xum(tmux, fake_llm, repo, WIDTH, HEIGHT)
    tmux.wait_for("+ new workspace")
    tmux.keys("-l", "watch the build")
    tmux.keys("Enter")
    tmux.wait_for("Watching the build.")
    _wait_for_requests(fake_llm, 2, tmux)

    tmux.keys("F12")
    tmux.wait_for("Background processes:")
    tmux.wait_for("│ waiting for the gate")  # its last line, under its row
    screen = tmux.wait_for("Build watch")
    assert "running · watched · since" in screen
    tmux.keys("Escape")
    tmux.wait_gone("Background processes:")

    gate.touch()  # the process prints the watched line and ends: the agent is woken
    _wait_for_requests(fake_llm, 3, tmux)
    notice = _texts(fake_llm.requests[2].json["messages"][-1])
    assert "(Build watch) printed lines its monitor watches for." in notice
    assert "  BUILD READY" in notice
    tmux.wait_for("(Build watch) printed lines its monitor watches for.")  # the note
    tmux.wait_for("The build is done.")
    assert len(fake_llm.requests) == 3  # its end woke nobody (wake_on_exit is false)
    quit_xum(tmux)


def test_image_is_held_shown_and_sent_with_the_next_message(
    tmux: Tmux, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    picture = png(5, 5)
    (Path(os.environ["HOME"]) / "shot.png").write_bytes(picture)
    fake_llm.script(fakellm.text("A red square."))
    start_xum(tmux, fake_llm, repo, WIDTH, HEIGHT)
    tmux.wait_for("+ new workspace")
    tmux.keys("-l", "/image ~/shot.png")  # `~` expands to the home the UI runs with
    tmux.keys("Enter")
    tmux.wait_for("[image: shot.png] Exec ·")  # held: in the bar under the composer
    tmux.keys("-l", "What is this?")
    tmux.keys("Enter")
    tmux.wait_for("A red square.")
    # Sent: gone from the bar (a toast saying it was attached may still show for a while), and
    # under the message in the transcript.
    lines = tmux.wait_gone("[image: shot.png] Exec ·").splitlines()
    (at,) = [i for i, line in enumerate(lines) if "› What is this?" in line]
    assert lines[at + 1].rstrip().endswith("│ [image: shot.png]"), "\n".join(lines)
    (request,) = fake_llm.requests
    blocks = request.json["messages"][-1]["content"]
    images = [block for block in blocks if block.get("type") == "image"]
    assert [image["source"]["data"] for image in images] == [base64.b64encode(picture).decode()]
    assert images[0]["source"]["media_type"] == "image/png"
    assert "What is this?" in _texts(request.json["messages"][-1])
    quit_xum(tmux)
