"""Refusal fallbacks through the server: Settings → Models → Model Fallbacks reads and writes
config.json `modelFallbacks` with the sessions' own checks, and a workspace whose model refuses
goes on with the next model, the switch in the transcript a browser replays."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.integration.server_support import (
    AUTH,
    WS_URL,
    create_workspace,
    events_of,
    server_client,
    subscribe,
    use_fake_llm,
    wait_for,
)
from xum.core.paths import config_path
from xum.store.config import load_config
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

URL = "/api/settings/model-fallbacks"


def test_the_chains_are_read_written_checked_and_reset() -> None:
    with server_client() as client:
        built_in = client.get(URL, headers=AUTH).json()
        assert built_in["builtIn"] is True and built_in["error"] is None
        assert {
            "model": "anthropic:claude-sonnet-5-5",
            "models": ["anthropic:claude-sonnet-5"],
        } in (built_in["chains"])

        chains = [{"model": "sonnet", "models": ["haiku", " anthropic:claude-sonnet-5 ", ""]}]
        res = client.put(URL, json={"chains": chains}, headers=AUTH)
        assert res.status_code == 200, res.text
        assert res.json() == {
            "chains": [
                {
                    "model": "anthropic:claude-sonnet-5-5",
                    "models": ["anthropic:claude-haiku-5-5", "anthropic:claude-sonnet-5"],
                }
            ],
            "builtIn": False,
            "error": None,
        }
        # Stored as the user wrote it (trimmed), in the documented shape.
        assert load_config()["modelFallbacks"] == {
            "sonnet": {"models": ["haiku", "anthropic:claude-sonnet-5"]}
        }

        # The sessions' parser refuses what a session would refuse; nothing is written.
        for bad in (
            [{"model": "sonet", "models": ["haiku"]}],
            [{"model": "sonnet", "models": ["sonnet"]}],
            [{"model": "sonnet", "models": []}, {"model": "sonnet", "models": []}],
        ):
            refused = client.put(URL, json={"chains": bad}, headers=AUTH)
            assert refused.status_code == 422, bad
            assert refused.json()["error"]["code"] == "invalid_request"
        assert "sonnet" in load_config()["modelFallbacks"]

        # No chains at all is a choice; null brings the built-in chains back.
        assert client.put(URL, json={"chains": []}, headers=AUTH).json()["chains"] == []
        assert load_config()["modelFallbacks"] == {}
        reset = client.put(URL, json={"chains": None}, headers=AUTH).json()
        assert reset["builtIn"] is True and "modelFallbacks" not in load_config()


def test_a_hand_edited_value_that_cannot_be_used_is_reported() -> None:
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_bytes(orjson.dumps({"modelFallbacks": {"sonnet": "haiku"}}))
    with server_client() as client:
        shown = client.get(URL, headers=AUTH).json()
    assert shown["chains"] == [] and shown["builtIn"] is False
    assert 'entry "sonnet" must be an object whose "models"' in shown["error"]


def test_a_refusing_workspace_goes_on_with_the_next_model(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(fakellm.refusal(text="Not this."), fakellm.text("Here it is."))
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]  # Sonnet 5.5: the built-in chain applies
        client.post(f"/api/workspaces/{wid}/messages", json={"text": "please"}, headers=AUTH)
        wait_for(
            lambda: (
                client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["status"]["state"]
                == "idle"
            )
        )
        with client.websocket_connect(WS_URL, headers=AUTH) as ws:
            assert ws.receive_json()["type"] == "hello"
            replayed: list[dict[str, Any]] = events_of(subscribe(ws, wid), wid)
        costs = client.get(f"/api/workspaces/{wid}/costs", headers=AUTH).json()
    (switch,) = [e for e in replayed if e["type"] == "model-fallback"]
    assert switch["message"] == (
        "anthropic:claude-sonnet-5-5 refused (cyber); continued with anthropic:claude-sonnet-5"
    )
    assert switch["text"] == "Not this."
    (reply,) = [e for e in replayed if e["type"] == "assistant-message"]
    assert reply["text"] == "Here it is." and reply["model"] == "anthropic:claude-sonnet-5"
    assert [r.model for r in fake_llm.requests if r.wire] == [
        "claude-sonnet-5-5",
        "claude-sonnet-5",
    ]

    # The costs API charges each model for its own reply; the refused step is a step.
    by_model = {m["model"]: m for m in costs["byModel"]}
    assert list(by_model) == ["anthropic:claude-sonnet-5-5", "anthropic:claude-sonnet-5"]
    refused = by_model["anthropic:claude-sonnet-5-5"]
    assert refused["costUsd"] == pytest.approx(switch["cost_usd"]) and refused["costUsd"] > 0
    assert refused["usage"]["outputTokens"] == 10
    # Claude Sonnet 5 has no built-in price: its reply's cost is unknown, and so is the total.
    assert by_model["anthropic:claude-sonnet-5"]["costUsd"] is None
    assert costs["costUsd"] is None
    (turn,) = costs["turns"]
    assert turn["steps"] == 2 and turn["model"] == "anthropic:claude-sonnet-5"
