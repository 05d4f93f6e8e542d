"""Settings over the API: provider keys are write-only and providers.jsonc is edited in place."""

from __future__ import annotations

import stat

import pytest

from tests.integration.server_support import AUTH, server_client
from xum.core.paths import providers_path
from xum.store.providers import load_providers

USER_FILE = """// My providers: hand-written, keep my notes.
{
  /* work proxy */
  "anthropic": {
    "baseUrl": "https://proxy.example/v1", // corporate
  },
  "openrouter": {"order": ["anthropic", "openai"]},
  "local": {"providerType": "openai-compatible", "baseUrl": "http://127.0.0.1:8080/v1", "models": ["qwen"]},
}
"""
SECRET = "sk-ant-0123456789abcdef"


@pytest.fixture
def user_file() -> str:
    path = providers_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(USER_FILE)
    return USER_FILE


def test_provider_list_shows_sources_never_values(
    user_file: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-env-value")
    with server_client() as client:
        res = client.get("/api/settings/providers", headers=AUTH)
        assert res.status_code == 200
        rows = {p["id"]: p for p in res.json()["providers"]}
        assert (
            rows["openai"]["usable"] and rows["openai"]["credentialSource"] == "env:OPENAI_API_KEY"
        )
        assert rows["anthropic"]["configured"] and not rows["anthropic"]["usable"]
        assert rows["anthropic"]["problem"]
        assert rows["local"]["custom"] and rows["local"]["usable"]
        assert "sk-openai-env-value" not in res.text


def test_setting_a_key_keeps_comments_and_other_keys(user_file: str) -> None:
    with server_client() as client:
        res = client.put(
            "/api/settings/providers/anthropic/key", json={"apiKey": SECRET}, headers=AUTH
        )
        assert res.status_code == 200
        assert SECRET not in res.text
        assert res.json()["usable"] is True
        assert res.json()["credentialSource"] == "providers.jsonc:apiKey"
        text = providers_path().read_text()
        for kept in (
            "// My providers: hand-written, keep my notes.",
            "/* work proxy */",
            "// corporate",
            '"openrouter": {"order": ["anthropic", "openai"]}',
            '"models": ["qwen"]',
        ):
            assert kept in text, kept
        config = load_providers()
        assert config.entries["anthropic"].api_key == SECRET
        assert config.entries["anthropic"].base_url == "https://proxy.example/v1"
        assert stat.S_IMODE(providers_path().stat().st_mode) == 0o600
        # Listing never shows it either.
        assert SECRET not in client.get("/api/settings/providers", headers=AUTH).text
        # Clearing removes only that key.
        cleared = client.delete("/api/settings/providers/anthropic/key", headers=AUTH)
        assert cleared.status_code == 200 and cleared.json()["usable"] is False
        assert providers_path().read_text() == user_file


def test_base_url_set_and_clear(user_file: str) -> None:
    with server_client() as client:
        res = client.put(
            "/api/settings/providers/openai/base-url",
            json={"baseUrl": "http://gateway.local:4000"},
            headers=AUTH,
        )
        assert res.status_code == 200
        assert load_providers().entries["openai"].base_url == "http://gateway.local:4000/v1"
        bad = client.put(
            "/api/settings/providers/openai/base-url", json={"baseUrl": "ftp://x"}, headers=AUTH
        )
        assert bad.status_code == 422
        client.put("/api/settings/providers/openai/base-url", json={"baseUrl": None}, headers=AUTH)
        assert load_providers().entries["openai"].base_url is None
        custom = client.put(
            "/api/settings/providers/local/base-url", json={"baseUrl": None}, headers=AUTH
        )
        assert custom.status_code == 422


def test_unparseable_file_is_refused_untouched() -> None:
    broken = '{\n  "anthropic": {"apiKey": "x",,}\n'
    providers_path().parent.mkdir(parents=True, exist_ok=True)
    providers_path().write_text(broken)
    with server_client() as client:
        res = client.put(
            "/api/settings/providers/anthropic/key", json={"apiKey": SECRET}, headers=AUTH
        )
        assert res.status_code == 422
        assert res.json()["error"]["code"] == "config_error"
        assert "providers.jsonc:2" in res.json()["error"]["message"]
        assert providers_path().read_text() == broken
        listed = client.get("/api/settings/providers", headers=AUTH)
        assert listed.status_code == 422


def test_missing_file_is_created_and_unknown_providers_refused() -> None:
    with server_client() as client:
        res = client.put(
            "/api/settings/providers/openai/key", json={"apiKey": SECRET}, headers=AUTH
        )
        assert res.status_code == 200
        assert load_providers().entries["openai"].api_key == SECRET
        unknown = client.put(
            "/api/settings/providers/nosuch/key", json={"apiKey": "k"}, headers=AUTH
        )
        assert unknown.status_code == 404
        multiline = client.put(
            "/api/settings/providers/openai/key", json={"apiKey": "a\nb"}, headers=AUTH
        )
        assert multiline.status_code == 422
        empty = client.put("/api/settings/providers/openai/key", json={"apiKey": ""}, headers=AUTH)
        assert empty.status_code == 422


def test_models_with_aliases(user_file: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    with server_client() as client:
        data = client.get("/api/settings/models", headers=AUTH).json()
        assert data["aliases"]["opus"] == "anthropic:claude-opus-5-5"
        assert data["defaultModel"] == "anthropic:claude-opus-5-5"
        models = {m["model"]: m for m in data["models"]}
        assert models["anthropic:claude-opus-5-5"]["usable"] is True
        assert models["anthropic:claude-opus-5-5"]["priced"] is True
        assert models["openai:gpt-6.1-sol"]["usable"] is False
        assert models["local:qwen"]["usable"] is True and models["local:qwen"]["priced"] is False
