"""Custom models over the API: `models` in providers.jsonc edited in place, suggestions from the
provider's own model list (the fake LLM's `GET /v1/models`), and config.json `defaultModel`."""

from __future__ import annotations

import json
import stat
from collections.abc import Iterator

import pytest

from tests.integration.server_support import AUTH, server_client
from xum.core.paths import config_path, providers_path
from xum.store.providers import load_providers
from xum.testing.fakellm import FakeLLM

LAB_KEY = "lab-secret-0123456789"
ANTHROPIC_KEY = "sk-ant-fake-0123456789"
LISTED = ["qwen3-coder-next", "llama-4-scout", "gpt-oss-120b"]


def user_file(lab_url: str = "http://127.0.0.1:9/v1") -> str:
    return f"""// Hand-written: keep my notes.
{{
  /* work proxy */
  "anthropic": {{
    "baseUrl": "https://proxy.example/v1", // corporate
  }},
  "lab": {{
    "providerType": "openai-compatible",
    "baseUrl": "{lab_url}",
    "apiKey": "{LAB_KEY}",
    "models": [
      "qwen", // the one that works
      "llama"
    ],
  }},
  "openrouter": {{"order": ["anthropic", "openai"]}},
}}
"""


def write(text: str) -> str:
    path = providers_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o600)
    return text


@pytest.fixture
def fake() -> Iterator[FakeLLM]:
    with FakeLLM(models=LISTED) as server:
        yield server


def test_add_and_remove_keep_every_other_byte() -> None:
    original = write(user_file())
    with server_client() as client:
        res = client.post(
            "/api/settings/providers/lab/models", json={"id": "qwen3-coder:30b"}, headers=AUTH
        )
        assert res.status_code == 200, res.text
        body = res.json()
        assert body["changed"] is True and body["message"] is None
        assert body["provider"]["models"] == ["qwen", "llama", "qwen3-coder:30b"]
        assert LAB_KEY not in res.text
        text = providers_path().read_text()
        # Only the list changed: the new item follows the last one, in the list's own layout.
        assert text == original.replace(
            '      "llama"\n', '      "llama",\n      "qwen3-coder:30b"\n'
        )
        assert stat.S_IMODE(providers_path().stat().st_mode) == 0o600

        # A built-in provider without a models list gets one; the comment beside it stays.
        res = client.post(
            "/api/settings/providers/anthropic/models", json={"id": "claude-sonnet-5"}, headers=AUTH
        )
        assert res.status_code == 200, res.text
        assert load_providers().entries["anthropic"].models == ("claude-sonnet-5",)
        assert load_providers().entries["anthropic"].base_url == "https://proxy.example/v1"
        assert "// corporate" in providers_path().read_text()

        # The picker's list has both.
        rows = {
            m["model"] for m in client.get("/api/settings/models", headers=AUTH).json()["models"]
        }
        assert {"lab:qwen3-coder:30b", "anthropic:claude-sonnet-5", "lab:qwen"} <= rows

        # Removing gives back the text as it was, byte for byte.
        for provider, model_id in (("anthropic", "claude-sonnet-5"), ("lab", "qwen3-coder:30b")):
            res = client.delete(
                f"/api/settings/providers/{provider}/models", params={"id": model_id}, headers=AUTH
            )
            assert res.status_code == 200, res.text
            assert res.json()["changed"] is True
        after = providers_path().read_text()
        assert after == original.replace(
            '    "baseUrl": "https://proxy.example/v1", // corporate\n',
            '    "baseUrl": "https://proxy.example/v1", // corporate\n    "models": [],\n',
        )

        # Removing an item on its own line takes the line; its neighbour's comment stays.
        res = client.delete(
            "/api/settings/providers/lab/models", params={"id": "llama"}, headers=AUTH
        )
        assert res.status_code == 200 and res.json()["provider"]["models"] == ["qwen"]
        assert '      "qwen" // the one that works\n    ],' in providers_path().read_text()


def test_duplicates_invalid_ids_and_unknown_targets() -> None:
    original = write(user_file())
    with server_client() as client:
        dup = client.post("/api/settings/providers/lab/models", json={"id": " qwen "}, headers=AUTH)
        assert dup.status_code == 200
        assert dup.json()["changed"] is False and "already configured" in dup.json()["message"]
        builtin = client.post(
            "/api/settings/providers/anthropic/models", json={"id": "claude-opus-5-5"}, headers=AUTH
        )
        assert builtin.status_code == 200 and builtin.json()["changed"] is False
        assert "built in" in builtin.json()["message"]
        for bad in ("", "   ", "two words", "tab\there", "x" * 201):
            res = client.post("/api/settings/providers/lab/models", json={"id": bad}, headers=AUTH)
            assert res.status_code == 422, (bad, res.text)
            assert res.json()["error"]["code"] == "invalid_request"
        unknown = client.post(
            "/api/settings/providers/nosuch/models", json={"id": "m"}, headers=AUTH
        )
        assert unknown.status_code == 404
        missing = client.delete(
            "/api/settings/providers/lab/models", params={"id": "nope"}, headers=AUTH
        )
        assert missing.status_code == 404
        assert "not among" in missing.json()["error"]["message"]
        assert providers_path().read_text() == original


def test_unparseable_file_is_refused_untouched() -> None:
    broken = write('{\n  "lab": {"models": ["a",,]}\n')
    with server_client() as client:
        res = client.post(
            "/api/settings/providers/anthropic/models", json={"id": "m"}, headers=AUTH
        )
        assert res.status_code == 422
        assert res.json()["error"]["code"] == "config_error"
        assert "providers.jsonc:2" in res.json()["error"]["message"]
        res = client.delete(
            "/api/settings/providers/anthropic/models", params={"id": "a"}, headers=AUTH
        )
        assert res.status_code == 422
    assert providers_path().read_text() == broken


def test_suggestions_come_from_the_providers_model_list(fake: FakeLLM) -> None:
    write(user_file(fake.base_url()))
    with server_client() as client:
        res = client.get("/api/settings/providers/lab/catalog", headers=AUTH)
        assert res.status_code == 200, res.text
        body = res.json()
        assert body["error"] is None and body["provider"] == "lab"
        assert [m["id"] for m in body["models"]] == LISTED
        assert LAB_KEY not in res.text
        listing = [r for r in fake.requests if r.path == "/v1/models"]
        assert len(listing) == 1
        assert listing[0].method == "GET"
        assert listing[0].headers["authorization"] == f"Bearer {LAB_KEY}"
        # Suggesting adds nothing.
        assert load_providers().entries["lab"].models == ("qwen", "llama")
        # A second look within a short while is answered from the cache; refresh asks again.
        again = client.get("/api/settings/providers/lab/catalog", headers=AUTH).json()
        assert again["cached"] is True and [m["id"] for m in again["models"]] == LISTED
        client.get("/api/settings/providers/lab/catalog", params={"refresh": "true"}, headers=AUTH)
        assert len([r for r in fake.requests if r.path == "/v1/models"]) == 2


def test_anthropic_suggestions_send_the_key_as_anthropic_expects(
    fake: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake.url)
    with server_client() as client:
        res = client.get("/api/settings/providers/anthropic/catalog", headers=AUTH)
        assert res.status_code == 200, res.text
        assert [m["id"] for m in res.json()["models"]] == LISTED
        assert ANTHROPIC_KEY not in res.text
    (request,) = [r for r in fake.requests if r.path == "/v1/models"]
    assert request.headers["x-api-key"] == ANTHROPIC_KEY
    assert "authorization" not in request.headers
    assert request.headers["anthropic-version"]
    assert "limit=" in request.query


def test_listing_failures_are_reported_not_raised(fake: FakeLLM) -> None:
    # A server that refuses, one that is not there, and a provider with no key.
    fake.stop()
    write(user_file(fake.base_url()))
    with server_client() as client:
        down = client.get("/api/settings/providers/lab/catalog", headers=AUTH)
        assert down.status_code == 200
        assert down.json()["models"] == [] and "cannot reach" in down.json()["error"]
        assert LAB_KEY not in down.text
        nokey = client.get("/api/settings/providers/openai/catalog", headers=AUTH).json()
        assert "no API key" in nokey["error"] and "OPENAI_API_KEY" in nokey["error"]
        assert client.get("/api/settings/providers/nosuch/catalog", headers=AUTH).status_code == 404


def test_http_errors_name_the_status_and_hide_the_key() -> None:
    with FakeLLM() as server:
        # No model list under this path: the fake answers 404 and quotes the path, which here
        # holds the key (a contrived config, but whatever echoes the key must not show it).
        write(user_file(f"{server.url}/{LAB_KEY}"))
        with server_client() as client:
            res = client.get("/api/settings/providers/lab/catalog", headers=AUTH)
    body = res.json()
    assert res.status_code == 200 and body["models"] == []
    assert body["error"].startswith("HTTP 404 from http://127.0.0.1:"), body
    assert "enter ids by hand" in body["error"]
    assert LAB_KEY not in res.text


def test_default_model_is_set_cleared_and_checked(monkeypatch: pytest.MonkeyPatch) -> None:
    write(user_file())
    monkeypatch.setenv("ANTHROPIC_API_KEY", ANTHROPIC_KEY)
    with server_client() as client:
        res = client.put("/api/settings/default-model", json={"model": "lab:qwen"}, headers=AUTH)
        assert res.status_code == 200, res.text
        assert res.json()["defaultModel"] == "lab:qwen"
        assert res.json()["configuredDefaultModel"] == "lab:qwen"
        assert json.loads(config_path().read_text())["defaultModel"] == "lab:qwen"

        # An alias is stored as the model string it names.
        res = client.put("/api/settings/default-model", json={"model": "sonnet"}, headers=AUTH)
        assert res.json()["defaultModel"] == "anthropic:claude-sonnet-5-5"

        for bad, words in (
            ("nosuch:model", "unknown provider 'nosuch'"),
            ("bedrock:claude", "unknown provider 'bedrock'"),
            ("sonet", "unknown model 'sonet'"),
            ("lab:two words", "whitespace"),
        ):
            res = client.put("/api/settings/default-model", json={"model": bad}, headers=AUTH)
            assert res.status_code == 422, (bad, res.text)
            assert words in res.json()["error"]["message"], res.text
        assert (
            json.loads(config_path().read_text())["defaultModel"] == "anthropic:claude-sonnet-5-5"
        )

        res = client.put("/api/settings/default-model", json={"model": None}, headers=AUTH)
        assert res.status_code == 200
        assert res.json()["configuredDefaultModel"] is None
        assert res.json()["defaultModel"] == "anthropic:claude-opus-5-5"  # the automatic choice
        assert "defaultModel" not in json.loads(config_path().read_text())


def test_default_model_reaches_xum_run_routing() -> None:
    write(user_file())
    with server_client() as client:
        client.put("/api/settings/default-model", json={"model": "lab:llama"}, headers=AUTH)
    from xum.engine.route import resolve_route

    route = resolve_route(None)
    assert (route.provider, route.model_id) == ("lab", "llama")


def test_listings_are_bounded_in_ids_and_bytes() -> None:
    many = [f"model-{i:05d}" for i in range(6000)]
    with FakeLLM(models=many) as server:
        write(user_file(server.base_url()))
        with server_client() as client:
            body = client.get("/api/settings/providers/lab/catalog", headers=AUTH).json()
    assert body["error"] is None and body["truncated"] is True
    assert [m["id"] for m in body["models"]] == many[:5000]

    huge = [f"model-{i:06d}" for i in range(60000)]  # about 10 MB of JSON
    with FakeLLM(models=huge) as server:
        write(user_file(server.base_url()))
        with server_client() as client:
            body = client.get("/api/settings/providers/lab/catalog", headers=AUTH).json()
    assert body["models"] == [] and "larger than 8 MiB" in body["error"]
