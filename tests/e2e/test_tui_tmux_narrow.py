"""`xum` in a real 80x24 terminal (tmux): the transcript gets the width, follows a long reply to
its end, and PageUp and PageDown scroll it from the composer, with a hint while there is more
below. Waits are bounded polls of the screen."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from tests.support.tmux import Tmux, quit_xum, start_xum, tmux_server
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.skipif(
    shutil.which("tmux") is None, reason="tmux is not installed (make deps-system installs it)"
)

REPLY = "\n\n".join(
    [
        "The first paragraph of a long reply.",
        "\n".join(f"- item {i} of the list" for i in range(8)),
        "```python\ndef hello() -> None:\n    print('hello')\n```",
        "| name | value |\n|------|-------|\n| a | 1 |\n| b | 2 |\n| c | 3 |",
        "THE LAST LINE OF THE REPLY",
    ]
)


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    with tmux_server() as server:
        yield server


def test_at_80x24_the_transcript_follows_and_pages(
    tmux: Tmux, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    fake_llm.script(fakellm.text(REPLY, chunk_size=9, delay=0.005))
    start_xum(tmux, fake_llm, repo, 80, 24)
    screen = tmux.wait_for("F1 help")
    assert "+ new workspace" not in screen  # the list starts hidden at 80 columns
    tmux.keys("-l", "tell me everything")
    tmux.keys("Enter")
    screen = tmux.wait_for("THE LAST LINE OF THE REPLY")
    assert "more below" not in screen
    tmux.keys("PageUp")
    screen = tmux.wait_for("more below")
    assert "THE LAST LINE OF THE REPLY" not in screen
    tmux.keys("PageDown")
    screen = tmux.wait_gone("more below")
    assert "THE LAST LINE OF THE REPLY" in screen
    assert all(len(line) <= 80 for line in screen.splitlines())
    quit_xum(tmux)
