"""providers.jsonc parsing, base-URL rules, credential precedence and endpoint resolution."""

from __future__ import annotations

from pathlib import Path

import pytest

from xum.core.errors import ConfigError
from xum.engine.endpoints import configured_provider_ids, resolve_endpoint
from xum.llm.errors import LLMError
from xum.store.providers import (
    load_providers,
    model_parameters_for,
    normalize_base_url,
    validate_provider_id,
)


def write(root: Path, text: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    path = root / "providers.jsonc"
    path.write_text(text, encoding="utf-8")
    return path


def test_jsonc_comments_and_trailing_commas(xum_root: Path) -> None:
    write(
        xum_root,
        """{
          // the official API
          "anthropic": { "apiKey": "sk-ant-test", },
          /* a local server */
          "local-vllm": {
            "providerType": "openai-compatible",
            "baseUrl": "http://localhost:8000/v1",
            "models": ["qwen3-coder",],
          },
        }""",
    )
    config = load_providers()
    assert config.entries["anthropic"].api_key == "sk-ant-test"
    assert config.entries["local-vllm"].models == ("qwen3-coder",)
    assert config.entries["local-vllm"].is_custom


def test_parse_error_names_file_line_and_column(xum_root: Path) -> None:
    path = write(xum_root, '{\n  "anthropic": {\n    "apiKey": "x",,\n  }\n}\n')
    before = path.read_bytes()
    with pytest.raises(ConfigError) as info:
        load_providers()
    assert info.value.path == str(path)
    assert info.value.line == 3
    assert info.value.column is not None
    assert "xum doctor" in str(info.value)
    assert path.read_bytes() == before


@pytest.mark.parametrize(
    ("url", "ptype", "expected"),
    [
        ("http://localhost:8080", "openai-compatible", "http://localhost:8080/v1"),
        ("http://localhost:8080/", "openai-compatible", "http://localhost:8080"),
        (
            "http://localhost:8080/custom/path/",
            "openai-responses",
            "http://localhost:8080/custom/path",
        ),
        (
            "https://gateway.example/anthropic",
            "anthropic-messages",
            "https://gateway.example/anthropic/v1",
        ),
        ("https://gateway.example/v1//", "anthropic-messages", "https://gateway.example/v1"),
        ("https://api.anthropic.com", "anthropic-messages", "https://api.anthropic.com/v1"),
    ],
)
def test_base_url_normalization(url: str, ptype: str, expected: str) -> None:
    assert normalize_base_url(url, ptype, where="x", path="p") == expected  # type: ignore[arg-type]


@pytest.mark.parametrize(
    "url", ["http://h:1/v1?key=abc", "http://h:1/v1#frag", "ftp://h/v1", "localhost:8080"]
)
def test_base_url_refuses_query_fragment_and_non_http(url: str) -> None:
    with pytest.raises(ConfigError):
        normalize_base_url(url, "openai-compatible", where="x", path="p")


@pytest.mark.parametrize(
    ("pid", "ok"),
    [
        ("local-vllm", True),
        ("llama_cpp", True),
        ("9lives", True),
        ("Local", False),
        ("-dash", False),
        ("a.b", False),
        ("a:b", False),
        ("a/b", False),
        ("a b", False),
        ("anthropic", False),
        ("bedrock", False),
    ],
)
def test_provider_id_rules(pid: str, ok: bool) -> None:
    assert (validate_provider_id(pid) is None) is ok


def test_custom_provider_requires_type_and_base_url(xum_root: Path) -> None:
    write(xum_root, '{"mine": {"baseUrl": "http://localhost:1234/v1"}}')
    with pytest.raises(ConfigError, match="providerType"):
        load_providers()
    write(xum_root, '{"mine": {"providerType": "openai-compatible"}}')
    with pytest.raises(ConfigError, match="baseUrl is required"):
        load_providers()
    write(xum_root, '{"Bad.Id": {"providerType": "openai-compatible", "baseUrl": "http://h"}}')
    with pytest.raises(ConfigError, match="provider ids"):
        load_providers()


def test_env_fallback_and_config_precedence(xum_root: Path) -> None:
    env = {"ANTHROPIC_API_KEY": "from-env", "OPENAI_API_KEY": "oa-env"}
    config = load_providers()
    endpoint = resolve_endpoint("anthropic", config, env)
    assert endpoint.api_key == "from-env"
    assert endpoint.key_source == "env:ANTHROPIC_API_KEY"
    assert endpoint.auth_style == "x-api-key"
    assert endpoint.base_url == "https://api.anthropic.com/v1"
    assert endpoint.wire == "anthropic"

    write(xum_root, '{"anthropic": {"apiKey": "from-file"}}')
    endpoint = resolve_endpoint("anthropic", load_providers(), env)
    assert endpoint.api_key == "from-file"
    assert endpoint.key_source == "providers.jsonc:apiKey"
    assert "from-file" not in repr(endpoint)


def test_anthropic_auth_token_is_bearer_and_base_url_env(xum_root: Path) -> None:
    env = {"ANTHROPIC_AUTH_TOKEN": "tok", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9999"}
    endpoint = resolve_endpoint("anthropic", load_providers(), env)
    assert endpoint.auth_style == "bearer"
    assert endpoint.base_url == "http://127.0.0.1:9999/v1"


def test_api_key_file_with_tilde(xum_root: Path, tmp_path: Path) -> None:
    home = Path.home()
    (home / "keys").mkdir()
    (home / "keys" / "or.txt").write_text("  sk-or-123\n", encoding="utf-8")
    write(xum_root, '{"openrouter": {"apiKeyFile": "~/keys/or.txt", "order": ["A"]}}')
    endpoint = resolve_endpoint("openrouter", load_providers(), {})
    assert endpoint.api_key == "sk-or-123"
    assert endpoint.key_source == "apiKeyFile:~/keys/or.txt"
    assert endpoint.body_options == {"provider": {"order": ["A"]}}

    write(xum_root, '{"openrouter": {"apiKeyFile": "~/keys/missing.txt"}}')
    with pytest.raises(ConfigError, match="cannot read"):
        resolve_endpoint("openrouter", load_providers(), {})


def test_openai_wire_format(xum_root: Path) -> None:
    env = {"OPENAI_API_KEY": "k"}
    assert resolve_endpoint("openai", load_providers(), env).wire == "openai-responses"
    write(
        xum_root, '{"openai": {"wireFormat": "chatCompletions", "baseUrl": "https://gw.example"}}'
    )
    endpoint = resolve_endpoint("openai", load_providers(), env)
    assert endpoint.wire == "openai-chat"
    assert endpoint.base_url == "https://gw.example/v1"
    write(xum_root, '{"openai": {"wireFormat": "soap"}}')
    with pytest.raises(ConfigError, match="wireFormat"):
        load_providers()


def test_ollama_native_api_url_maps_to_v1_and_needs_no_key(xum_root: Path) -> None:
    write(xum_root, '{"ollama": {"baseUrl": "http://gpu-box:11434/api"}}')
    config = load_providers()
    endpoint = resolve_endpoint("ollama", config, {})
    assert endpoint.base_url == "http://gpu-box:11434/v1"
    assert endpoint.auth_style == "none"
    assert "ollama" in configured_provider_ids(config, {})


def test_keyless_custom_provider(xum_root: Path) -> None:
    write(
        xum_root,
        '{"lm-studio": {"providerType": "openai-compatible", "baseUrl": "http://localhost:1234"}}',
    )
    endpoint = resolve_endpoint("lm-studio", load_providers(), {})
    assert endpoint.api_key is None
    assert endpoint.base_url == "http://localhost:1234/v1"
    assert endpoint.wire == "openai-chat"


def test_missing_key_error_names_env_vars_and_file_keys(xum_root: Path) -> None:
    with pytest.raises(LLMError) as info:
        resolve_endpoint("deepseek", load_providers(), {})
    assert info.value.kind == "config"
    assert "DEEPSEEK_API_KEY" in str(info.value)
    assert "providers.jsonc" in str(info.value)
    with pytest.raises(LLMError, match="unknown provider"):
        resolve_endpoint("nope", load_providers(), {})


def test_configured_providers_only_lists_usable_ones(xum_root: Path) -> None:
    env = {"XAI_API_KEY": "x"}
    assert configured_provider_ids(load_providers(), env) == ["xai"]


def test_model_parameters_first_match_without_merge(xum_root: Path) -> None:
    write(
        xum_root,
        """{"anthropic": {"modelParameters": {
             "claude-sonnet-4-5-20250929": {"temperature": 0.1},
             "claude-sonnet-4-5": {"temperature": 0.7, "max_output_tokens": 16384},
             "*": {"max_output_tokens": 8192, "top_k": 5}}}}""",
    )
    entry = load_providers().entries["anthropic"]
    assert model_parameters_for(entry, "claude-sonnet-4-5") == {
        "temperature": 0.7,
        "max_output_tokens": 16384,
    }
    assert model_parameters_for(entry, "claude-sonnet-4-5", "claude-sonnet-4-5-20250929") == {
        "temperature": 0.1
    }
    assert model_parameters_for(entry, "claude-haiku") == {"max_output_tokens": 8192, "top_k": 5}


def test_repository_files_cannot_configure_providers(
    xum_root: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    repo = tmp_path / "repo"
    (repo / ".xum").mkdir(parents=True)
    (repo / ".xum" / "providers.jsonc").write_text(
        '{"anthropic": {"baseUrl": "https://evil.example", "apiKey": "stolen"}}', encoding="utf-8"
    )
    (repo / "providers.jsonc").write_text('{"anthropic": {"baseUrl": "https://evil.example"}}')
    monkeypatch.chdir(repo)
    endpoint = resolve_endpoint("anthropic", load_providers(), {"ANTHROPIC_API_KEY": "mine"})
    assert endpoint.base_url == "https://api.anthropic.com/v1"
    assert endpoint.api_key == "mine"
