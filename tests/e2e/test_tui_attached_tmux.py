"""`xum` alone in a real terminal (tmux) beside a running `xum server` on the same `$XUM_ROOT`:
it finds the server through `server.lock` and attaches to it. A message typed in the terminal
runs on the server and its reply streams back; a message sent through the server's REST API (as
the browser sends one) shows in the terminal live."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests.gitrepo import make_repo
from tests.support.tmux import Tmux, quit_xum, start_xum, tmux_server
from tests.support.xum_server import xum_server
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = [
    pytest.mark.skipif(
        shutil.which("tmux") is None, reason="tmux is not installed (make deps-system installs it)"
    ),
    pytest.mark.timeout(120),
]

TOKEN = "tui-attached-token-0123456789abcdef"


@pytest.fixture
def tmux() -> Iterator[Tmux]:
    with tmux_server() as server:
        yield server


def api(url: str, method: str, path: str, body: object = None) -> dict[str, object]:
    headers = {"Authorization": f"Bearer {TOKEN}"}
    res = httpx.request(method, url + path, json=body, headers=headers, timeout=15)
    assert res.status_code < 400, res.text
    data = res.json()
    assert isinstance(data, dict)
    return data


def test_xum_alone_attaches_to_the_server_of_its_root(
    tmux: Tmux, fake_llm: FakeLLM, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    fake_llm.script(
        fakellm.text("Hello from the server's turn.", chunk_size=4, delay=0.01),
        fakellm.text("Answered for the browser.", chunk_size=4, delay=0.01),
    )
    env = {
        "XUM_SERVER_AUTH_TOKEN": TOKEN,
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake_llm.url,
    }
    with xum_server(env=env) as url:
        start_xum(tmux, fake_llm, repo, 110, 30)
        tmux.wait_for("attached to the xum")
        tmux.wait_for("+ new workspace")
        tmux.keys("-l", "hello server")
        tmux.keys("Enter")
        tmux.wait_for("Hello from the server's turn.")
        # The workspace is the server's, and so was the turn.
        listed = api(url, "GET", "/api/workspaces")["workspaces"]
        assert isinstance(listed, list) and len(listed) == 1
        ws = listed[0]
        assert ws["projectPath"] == str(repo)
        history = api(url, "GET", f"/api/workspaces/{ws['id']}/history")
        assert "Hello from the server's turn." in str(history["events"])
        # What the browser sends shows here, live.
        api(url, "POST", f"/api/workspaces/{ws['id']}/messages", {"text": "from the browser"})
        tmux.wait_for("from the browser")
        tmux.wait_for("Answered for the browser.")
        quit_xum(tmux)
        assert len(fake_llm.requests) == 2
