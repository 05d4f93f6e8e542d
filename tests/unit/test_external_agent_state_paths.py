"""An external agent's sandbox settings in config.json (`writablePaths`, `sandbox`) and the
state paths that stay writable for it (`xum.workspaces.external.sandboxed.state_paths`)."""

from __future__ import annotations

import pytest

from xum.core.errors import ConfigError
from xum.workspaces.external.definitions import external_agents
from xum.workspaces.external.sandboxed import state_paths


def _one(entry: dict[str, object]) -> object:
    return external_agents({"externalAgents": {"a": entry}})["a"]


def test_writable_paths_and_the_opt_out_are_read() -> None:
    agents = external_agents(
        {
            "externalAgents": {
                "a": {"command": "x", "writablePaths": ["~/.a", "/var/a"], "sandbox": False},
                "b": {"command": "x"},
            }
        }
    )
    assert agents["a"].writable_paths == ("~/.a", "/var/a") and agents["a"].sandbox is False
    assert agents["b"].writable_paths == () and agents["b"].sandbox is True


@pytest.mark.parametrize(
    ("entry", "words"),
    [
        ({"command": "x", "writablePaths": "~/.a"}, "list of strings"),
        ({"command": "x", "writablePaths": ["relative/dir"]}, "not an absolute path"),
        ({"command": "x", "sandbox": "no"}, "true or false"),
    ],
)
def test_wrong_sandbox_settings_say_what_to_fix(entry: dict[str, object], words: str) -> None:
    with pytest.raises(ConfigError) as caught:
        _one(entry)
    assert words in caught.value.message


def test_known_agents_get_their_state_and_the_definitions_paths_follow() -> None:
    definition = external_agents(
        {
            "externalAgents": {
                "oc": {
                    "command": "/opt/bin/opencode",
                    "args": ["acp"],
                    "writablePaths": ["~/.extra", "/srv/x"],
                }
            }
        }
    )["oc"]
    found = state_paths(definition, {"XDG_CACHE_HOME": "/c"}, "/home/me")
    assert found == [
        ("/home/me/.local/share/opencode", "dir"),
        ("/home/me/.local/state/opencode", "dir"),
        ("/c/opencode", "dir"),  # XDG_CACHE_HOME of the agent's environment
        ("/home/me/.config/opencode", "dir"),
        ("/home/me/.extra", "dir"),
        ("/srv/x", "dir"),
    ]


def test_an_agent_started_through_npx_is_recognised_by_its_arguments() -> None:
    definition = external_agents(
        {"externalAgents": {"cc": {"command": "npx", "args": ["@zed-industries/claude-code-acp"]}}}
    )["cc"]
    found = dict(state_paths(definition, {"CLAUDE_CONFIG_DIR": "/cfg/claude"}, "/h"))
    assert found == {
        "/cfg/claude": "dir",
        "/h/.claude.json": "json",
        "/h/.cache/claude-cli-nodejs": "dir",
        "/h/.npm": "dir",
    }


def test_an_unknown_agent_gets_only_its_own_paths() -> None:
    definition = external_agents({"externalAgents": {"z": {"command": "my-agent"}}})["z"]
    assert state_paths(definition, {}, "/h") == []
