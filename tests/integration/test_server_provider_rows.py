"""What providers.jsonc's `displayName` and `models` show through the server's settings routes
(the settings dialog and the model picker read exactly these)."""

from __future__ import annotations

import os

import pytest

from tests.integration.server_support import AUTH, server_client
from xum.core.paths import providers_path

PROVIDERS = """{
  "openai": { "displayName": "Work OpenAI", "models": ["ft:gpt-team-2026"] },
  "lab-vllm": {
    "providerType": "openai-compatible",
    "baseUrl": "http://127.0.0.1:8000",
    "displayName": "Lab vLLM",
    "models": ["qwen3-coder", "llama-4-scout"],
  },
  "bare": { "providerType": "openai-compatible", "baseUrl": "http://127.0.0.1:9000/v1" },
}
"""


@pytest.fixture(autouse=True)
def providers_file() -> None:
    path = providers_path()
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    path.write_text(PROVIDERS)
    os.chmod(path, 0o600)


def test_display_names_reach_the_provider_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    with server_client() as client:
        res = client.get("/api/settings/providers", headers=AUTH)
    assert res.status_code == 200, res.text
    names = {p["id"]: p["displayName"] for p in res.json()["providers"]}
    assert names["openai"] == "Work OpenAI"  # the file's name wins over the built-in one
    assert names["lab-vllm"] == "Lab vLLM"
    assert names["bare"] == "bare"  # no displayName: the id
    assert names["anthropic"] == "Anthropic"  # untouched built-in: its own name


def test_configured_models_reach_the_model_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-env")
    with server_client() as client:
        res = client.get("/api/settings/models", headers=AUTH)
    assert res.status_code == 200, res.text
    rows = {m["model"]: m for m in res.json()["models"]}
    for model, provider, model_id in (
        ("lab-vllm:qwen3-coder", "lab-vllm", "qwen3-coder"),
        ("lab-vllm:llama-4-scout", "lab-vllm", "llama-4-scout"),
        ("openai:ft:gpt-team-2026", "openai", "ft:gpt-team-2026"),
    ):
        row = rows[model]
        assert (row["provider"], row["id"], row["displayName"]) == (provider, model_id, model_id)
        assert row["usable"] is True  # lab-vllm needs no key; openai has one from the env
        assert row["priced"] is False  # not in the price table: cost unknown, not zero
    assert not [m for m in rows if m.startswith("bare:")]  # no models listed, none shown
