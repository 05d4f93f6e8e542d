"""An external agent in a Docker workspace: started in the workspace's container with the
container CLI's `exec -i` (a real engine, podman here, and the tests' own image,
tests/support/containers.py), its ACP messages carried over that stream, in the container's
checkout. The image has no python, so the agent is a few lines of bash that speak just enough
ACP (committed in the project, so it is in the container's checkout)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from tests.support.external_agents import configure, final, run_xum, texts

# Answers initialize, session/new and session/prompt (a message saying where it runs, and a
# file written with its own hands); the client's lines are compact JSON, the id a number.
BASH_AGENT = r"""#!/bin/bash
os=unknown
while IFS== read -r key value; do [ "$key" = ID ] && os=$value; done < /etc/os-release
while IFS= read -r line; do
  id=
  [[ $line =~ \"id\":([0-9]+) ]] && id=${BASH_REMATCH[1]}
  case $line in
    *'"method":"initialize"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"protocolVersion":1,"agentCapabilities":{}}}\n' "$id" ;;
    *'"method":"session/new"'*)
      printf '{"jsonrpc":"2.0","id":%s,"result":{"sessionId":"box-1"}}\n' "$id" ;;
    *'"method":"session/prompt"'*)
      echo "made in the box" > from-agent.txt
      text="os=$os cwd=$PWD key=${AGENT_KEY:-none}"
      printf '{"jsonrpc":"2.0","method":"session/update","params":{"sessionId":"box-1","update":{"sessionUpdate":"agent_message_chunk","content":{"type":"text","text":"%s"}}}}\n' "$text"
      printf '{"jsonrpc":"2.0","id":%s,"result":{"stopReason":"end_turn"}}\n' "$id" ;;
  esac
done
"""

pytestmark = [
    pytest.mark.slow,
    pytest.mark.repo(files={"agent.sh": BASH_AGENT, "app.py": "x = 1\n"}, identity=True),
]


def test_the_agent_runs_in_the_workspaces_container(
    repo: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    configure(Path("/nowhere"), command="bash", args=["agent.sh"], env={"AGENT_KEY": "its-own"})
    code, events, err = run_xum(
        repo, "--runtime", f"docker {container_engine.image}", "--external-agent", "fake", "go"
    )
    assert code == 0, err
    # The image's os-release, the container's checkout, the definition's env.
    assert texts(events) == ["os=xum-test cwd=/src key=its-own"]
    assert not (repo / "from-agent.txt").exists()
    (name,) = container_engine.containers(repo)
    made = container_engine.run("exec", name, "cat", "/src/from-agent.txt")
    assert made.stdout == "made in the box\n"
    # The next message starts it again in the same container.
    code, again, err = run_xum(repo, "--workspace", final(events)["workspace_id"], "again")
    assert code == 0, err
    assert texts(again) == ["os=xum-test cwd=/src key=its-own"]


def test_a_command_missing_in_the_container_names_it(
    repo: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    configure(Path("/nowhere"), command="no-such-agent")
    code, events, _err = run_xum(
        repo, "--runtime", f"docker {container_engine.image}", "--external-agent", "fake", "go"
    )
    assert code == 1
    end = next(e for e in events if e["type"] == "turn-end")
    (name,) = container_engine.containers(repo)
    assert f"'no-such-agent' was not found on the container {name}" in end["error"]["message"]


def test_the_read_only_mode_is_refused_in_a_container(
    repo: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    configure(Path("/nowhere"), command="bash", args=["agent.sh"])
    code, events, _err = run_xum(
        repo,
        "--runtime",
        f"docker {container_engine.image}",
        "--permissions",
        "read-only",
        "--external-agent",
        "fake",
        "go",
    )
    assert code == 1
    end = next(e for e in events if e["type"] == "turn-end")
    assert "cannot keep an agent read-only" in end["error"]["message"]
    assert not (repo / "from-agent.txt").exists()
