"""Settings → External agents over the API: the agents config.json defines, read-only, with
their command and models and the names (never the values) of the variables their `env` sets;
a broken section is said in the answer, not failed."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.integration.server_support import AUTH, server_client
from tests.support.external_agents import configure, write_script
from xum.core.paths import config_path

URL = "/api/settings/external-agents"
SECRET = "sk-secret-value-never-shown"


def test_the_configured_agents_are_listed_without_env_values_or_args(tmp_path: Path) -> None:
    with server_client() as client:
        empty = client.get(URL, headers=AUTH).json()
        assert empty == {"configFile": str(config_path()), "agents": [], "problem": None}
        assert client.get(URL).status_code == 401
    configure(
        write_script(tmp_path / "s.json", []),
        label="Fake agent",
        models=["m-1", "m-2"],
        env={"AGENT_API_KEY": SECRET},
        args=["-m", "xum.testing.fake_acp_agent", "--token", SECRET],
    )
    with server_client() as client:
        res = client.get(URL, headers=AUTH)
    assert res.status_code == 200
    (agent,) = res.json()["agents"]
    assert agent["name"] == "fake" and agent["label"] == "Fake agent"
    assert agent["command"] == sys.executable
    assert agent["models"] == ["m-1", "m-2"]
    assert agent["envNames"] == ["AGENT_API_KEY"]
    assert SECRET not in res.text and "--token" not in res.text


def test_a_broken_section_is_said_in_the_answer() -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"externalAgents": {"Bad Name!": {"command": "x"}}}))
    with server_client() as client:
        res = client.get(URL, headers=AUTH)
    assert res.status_code == 200
    body = res.json()
    assert body["agents"] == [] and "Bad Name!" in body["problem"]
