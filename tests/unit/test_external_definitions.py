"""config.json `externalAgents`: what a definition may say, and errors that say what to fix."""

from __future__ import annotations

import pytest

from xum.core.errors import ConfigError, UsageError
from xum.store.registry import WorkspaceRecord
from xum.workspaces.external.definitions import definition_for, external_agents
from xum.workspaces.external.recording import stop_reason, unified_diff


def test_a_full_definition_is_read() -> None:
    config = {
        "externalAgents": {
            "opencode": {
                "command": "opencode",
                "args": ["acp"],
                "env": {"OPENCODE_CONFIG": "/x.json"},
                "label": "OpenCode",
                "models": ["fake/model-a"],
            },
            "gem_2": {"command": "/usr/bin/gemini"},
        }
    }
    agents = external_agents(config)
    opencode = agents["opencode"]
    assert opencode.args == ("acp",) and opencode.env == {"OPENCODE_CONFIG": "/x.json"}
    assert opencode.display == "OpenCode" and opencode.models == ("fake/model-a",)
    assert agents["gem_2"].display == "gem_2" and agents["gem_2"].args == ()
    assert external_agents({}) == {}


@pytest.mark.parametrize(
    ("entries", "words"),
    [
        ({"Open Code": {"command": "x"}}, "lower-case"),
        ({"exec": {"command": "x"}}, "xum's own agents"),
        ({"plan": {"command": "x"}}, "xum's own agents"),
        ({"a": {"args": ["acp"]}}, '"command"'),
        ({"a": {"command": "x", "args": "acp"}}, "list of strings"),
        ({"a": {"command": "x", "env": {"K": 1}}}, "string values"),
        ({"a": {"command": "x", "cmd": "y"}}, "unknown field"),
        ({"a": "opencode"}, "must be an object"),
    ],
)
def test_a_wrong_definition_says_what_to_fix(entries: dict[str, object], words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        external_agents({"externalAgents": entries})
    assert words in caught.value.message
    assert "docs/external-agents.md" in (caught.value.hint or "")


def test_an_unknown_name_lists_the_configured_ones() -> None:
    config = {"externalAgents": {"codex": {"command": "codex-acp"}}}
    with pytest.raises(UsageError) as caught:
        definition_for("claude", config)
    assert "codex" in caught.value.message
    assert "docs/external-agents.md" in (caught.value.hint or "")


def test_the_record_keeps_its_external_agent_in_camel_case() -> None:
    from xum.store.registry import _from_config, _to_config

    record = WorkspaceRecord(
        id="w1", name="n", project_path="/p", runtime="local", path="/p", external_agent="fake"
    )
    data = _to_config(record)
    assert data["externalAgent"] == "fake"
    assert _from_config(data).external_agent == "fake"
    plain = _from_config({k: v for k, v in data.items() if k != "externalAgent"})
    assert plain.external_agent is None


@pytest.mark.parametrize(
    ("acp", "reason"),
    [
        ("end_turn", "completed"),
        ("cancelled", "interrupted"),
        ("max_tokens", "completed"),
        ("max_turn_requests", "max_steps"),
        ("refusal", "error"),
    ],
)
def test_stop_reasons_map_to_turn_reasons(acp: str, reason: str) -> None:
    assert stop_reason(acp)[0] == reason


def test_a_diff_is_unified_diff_text() -> None:
    assert unified_diff("a.txt", "one\ntwo\n", "one\n2\n").splitlines() == [
        "--- a/a.txt",
        "+++ b/a.txt",
        "@@ -1,2 +1,2 @@",
        " one",
        "-two",
        "+2",
    ]
    assert unified_diff("new.txt", None, "hi").splitlines()[0] == "--- /dev/null"
