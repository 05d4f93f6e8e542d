"""A history read while a turn runs has every frame committed so far, even when a client
follows the workspace live (then the hub fills its subscribers' gaps from the session's own
log in memory and its view of the log is only brought up to date by such a read)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.server_support import (
    AUTH,
    create_workspace,
    idle,
    server_client,
    subscribed,
    use_fake_llm,
    wait_for,
)
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

WAIT_FOR_GO = "while [ ! -e go ]; do sleep 0.02; done; echo went"


@pytest.mark.repo(files={"README.md": "hi\n"})
def test_history_during_a_turn_has_what_was_committed(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(
        fakellm.tool_call("bash", {"script": WAIT_FOR_GO, "display_name": "wait"}),
        fakellm.text("It went."),
    )
    with server_client() as client:
        ws = create_workspace(client, repo)
        wid = ws["id"]
        with subscribed(client, wid):  # a live follower: the hub's own view lags
            res = client.post(
                f"/api/workspaces/{wid}/messages", json={"text": "mid-turn please"}, headers=AUTH
            )
            assert res.status_code < 300, res.text

            def history_types() -> list[str]:
                page = client.get(f"/api/workspaces/{wid}/history", headers=AUTH).json()
                return [e["type"] for e in page["events"]]

            # The command waits for `go`: the turn runs while the history is read.
            wait_for(lambda: "assistant-message" in history_types(), timeout=30)
            assert not idle(client, wid)
            page = client.get(f"/api/workspaces/{wid}/history", headers=AUTH).json()
            texts = [e.get("text") for e in page["events"]]
            assert "mid-turn please" in texts
            (Path(ws["path"]) / "go").write_text("")
            wait_for(lambda: idle(client, wid), timeout=30)
            assert "turn-end" in history_types()
