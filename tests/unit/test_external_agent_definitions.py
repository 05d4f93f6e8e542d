"""`xum.testing.external_agents` without the agents installed: the definitions it writes (the
config.json `externalAgents` format, every offline switch, an isolated HOME) and `AgentModel`,
which tells an agent's turn requests from its side requests."""

from __future__ import annotations

import json
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from xum.testing import external_agents as agents
from xum.testing import fakellm


def test_the_opencode_definition_points_at_the_fake_and_stays_offline(tmp_path: Path) -> None:
    d = agents.opencode_definition("http://127.0.0.1:4321/v1", tmp_path / "oc")
    assert set(d) == {"command", "args", "env", "label", "models"}
    assert Path(d["command"]).is_absolute()
    assert d["command"].endswith("node_modules/.bin/opencode")
    assert d["args"] == ["acp"]
    env = d["env"]
    for switch in (
        "OPENCODE_DISABLE_MODELS_FETCH",
        "OPENCODE_DISABLE_AUTOUPDATE",
        "OPENCODE_DISABLE_SHARE",
        "OPENCODE_DISABLE_LSP_DOWNLOAD",
    ):
        assert env[switch] == "1"
    for var in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"):
        assert Path(env[var]).is_dir() and Path(env[var]).is_relative_to(tmp_path / "oc")
    config = json.loads(Path(env["OPENCODE_CONFIG"]).read_text())
    provider = config["provider"]["fake"]
    assert provider["npm"] == "@ai-sdk/openai-compatible"
    assert provider["options"]["baseURL"] == "http://127.0.0.1:4321/v1"
    assert config["model"] == config["small_model"] == d["models"][0]
    assert config["autoupdate"] is False and config["share"] == "disabled"
    assert config["permission"] == {"bash": "ask", "edit": "ask"}
    # The plugin package opencode would fetch at start is declared present.
    plugin_dir = Path(env["XDG_CONFIG_HOME"]) / "opencode"
    lock = json.loads((plugin_dir / "package-lock.json").read_text())
    assert "@opencode-ai/plugin" in lock["packages"][""]["dependencies"]
    assert (plugin_dir / "node_modules").is_dir()


def test_the_claude_code_definition_points_at_the_fake_and_stays_offline(tmp_path: Path) -> None:
    d = agents.claude_code_definition("http://127.0.0.1:4321/v1/", tmp_path / "cc")
    assert d["command"].endswith("node_modules/.bin/claude-code-acp")
    assert d["args"] == []
    env = d["env"]
    assert env["ANTHROPIC_BASE_URL"] == "http://127.0.0.1:4321"  # the SDK adds /v1 itself
    assert env["ANTHROPIC_API_KEY"] == agents.DUMMY_KEY
    for switch in (
        "DISABLE_TELEMETRY",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC",
        "DISABLE_AUTOUPDATER",
        "DISABLE_ERROR_REPORTING",
    ):
        assert env[switch] == "1"
    assert Path(env["HOME"]).is_relative_to(tmp_path / "cc")


def test_missing_reason_names_the_make_target(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XUM_EXTERNAL_AGENTS_DIR", str(tmp_path / "nowhere"))
    reason = agents.missing_reason()
    assert reason is not None and "make external-agents" in reason


def _post(url: str, body: dict[str, Any]) -> dict[str, Any]:
    request = urllib.request.Request(
        url, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(request, timeout=10) as response:
        result: dict[str, Any] = json.loads(response.read())
        return result


def test_agent_model_scripts_turns_and_answers_side_requests_apart() -> None:
    model = agents.AgentModel(fakellm.reply("turn one"), side=fakellm.reply("A title"))
    tool = {"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}
    with fakellm.FakeLLM(responder=model) as llm:
        url = llm.base_url() + "/chat/completions"
        messages = [{"role": "user", "content": "hi"}]
        side = _post(url, {"model": "m", "messages": messages})
        turn = _post(url, {"model": "m", "messages": messages, "tools": [tool]})
        side_again = _post(url, {"model": "m", "messages": messages})
    assert side["choices"][0]["message"]["content"] == "A title"
    assert side_again["choices"][0]["message"]["content"] == "A title"
    assert turn["choices"][0]["message"]["content"] == "turn one"
    assert model.replies_left == 0
    assert len(model.turn_requests) == 1


def test_the_pins_agree() -> None:
    """The plugin package opencode is told it has carries opencode's own version, as pinned."""
    package = json.loads((agents.agents_dir() / "package.json").read_text())
    assert package["dependencies"]["opencode-ai"] == agents.OPENCODE_VERSION
    lock = json.loads((agents.agents_dir() / "package-lock.json").read_text())
    assert lock["packages"]["node_modules/opencode-ai"]["version"] == agents.OPENCODE_VERSION
