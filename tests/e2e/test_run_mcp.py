"""MCP servers end to end: the real `xum run` in a subprocess, the fake LLM over HTTP, real MCP
servers (the test server written with the SDK, and the public `mcp-server-time` from PyPI)
over stdio, real git repositories and the real trust registry."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import env_for, events, run_xum
from tests.mcp.support import TIME_SERVER, server_command, server_entry, wait_for, write_config
from xum.store.secrets import set_project_secret
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

MODEL = "anthropic:claude-sonnet-5-5"


@pytest.fixture
def barriers(tmp_path: Path) -> Path:
    """Where the test server writes its barrier files."""
    path = tmp_path / "barriers"
    path.mkdir()
    return path


def tool_names(request: Any) -> list[str]:
    return [t["name"] for t in request.json.get("tools", [])]


def system_text(request: Any) -> str:
    system = request.json.get("system", "")
    if isinstance(system, list):
        return "".join(block.get("text", "") for block in system)
    return str(system)


def results(evts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in evts if e["type"] == "tool-result"]


def xum_json(repo: Path, server: FakeLLM, message: str) -> list[dict[str, Any]]:
    result = run_xum("run", "--json", "-m", MODEL, message, cwd=repo, env=env_for(server))
    assert result.returncode == 0, result.stderr + result.stdout
    return events(result.stdout)


def test_tool_search_finds_loads_and_calls_an_mcp_tool(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    write_config(xum_root / "mcp.jsonc", {"test": server_entry()})
    fake_llm.script(
        fakellm.tool_call("tool_catalog_search", {"query": "echo text back"}),
        fakellm.tool_call("mcp__test__echo", {"text": "hello from mcp"}),
        fakellm.text("done"),
    )
    evts = xum_json(repo, fake_llm, "use the echo tool")

    first, second, third = fake_llm.requests
    # Tool search on (the default): only the search and prompt tools are offered up front.
    assert "tool_catalog_search" in tool_names(first)
    assert "mcp_prompt_get" in tool_names(first)
    assert not [n for n in tool_names(first) if n.startswith("mcp__")]
    assert "<mcp>" in system_text(first) and "test" in system_text(first)
    assert "mcp__test__greet" in system_text(first)  # the prompt list
    # The search loaded the tool: it is in the list from the next step on.
    assert "mcp__test__echo" in tool_names(second)
    assert tool_names(third) == tool_names(second)
    search, echo = results(evts)
    assert "mcp__test__echo" in search["output"] and not search["is_error"]
    assert echo["output"] == "hello from mcp" and not echo["is_error"]
    assert evts[-1]["type"] == "final" and evts[-1]["exit_code"] == 0


def test_tool_search_off_advertises_every_tool_up_front(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    write_config(xum_root / "mcp.jsonc", {"test": server_entry()}, toolSearch=False)
    fake_llm.script(fakellm.text("nothing to do"))
    xum_json(repo, fake_llm, "hi")
    names = tool_names(fake_llm.requests[0])
    assert {"mcp__test__echo", "mcp__test__slow", "mcp__test__whoami"} <= set(names)
    echo = next(t for t in fake_llm.requests[0].json["tools"] if t["name"] == "mcp__test__echo")
    assert echo["input_schema"]["properties"]["text"]["type"] == "string"
    assert "MCP server 'test'" in echo["description"]


def test_public_time_server_from_pypi_answers_through_xum_run(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    assert Path(TIME_SERVER).exists(), "mcp-server-time is installed by `make test` (dev deps)"
    write_config(
        xum_root / "mcp.jsonc", {"time": f"{TIME_SERVER} --local-timezone UTC"}, toolSearch=False
    )
    fake_llm.script(
        fakellm.tool_call("mcp__time__get_current_time", {"timezone": "Europe/Paris"}),
        fakellm.text("it is late"),
    )
    evts = xum_json(repo, fake_llm, "what time is it in Paris?")
    (result,) = results(evts)
    assert not result["is_error"], result["output"]
    assert json.loads(result["output"])["timezone"] == "Europe/Paris"


def test_failures_are_reported_and_never_break_the_turn(
    fake_llm: FakeLLM, repo: Path, xum_root: Path, barriers: Path
) -> None:
    write_config(
        xum_root / "mcp.jsonc",
        {
            "broken": server_command("--exit-at-start"),
            "test": server_entry(barriers),
        },
        toolSearch=False,
    )
    fake_llm.script(
        fakellm.tool_call("mcp__test__crash", {}),
        fakellm.tool_call("mcp__test__die", {}),
        fakellm.tool_call("mcp__test__echo", {"text": "back again"}),
        fakellm.tool_call("mcp__test__echo", {"wrong": 1}),
        fakellm.tool_call("mcp__test__echo", "{not json"),
        fakellm.text("survived"),
    )
    evts = xum_json(repo, fake_llm, "break things")
    advisories = [e for e in evts if e["type"] == "advisory"]
    failed = [a for a in advisories if a["kind"] == "mcp-server-failed"]
    assert len(failed) == 1 and "'broken'" in failed[0]["message"]
    assert "refusing to start" in failed[0]["message"]  # the server's stderr, for the user
    assert any(a["kind"] == "mcp-server-exited" for a in advisories)
    crash, die, echo, bad_args, bad_json = results(evts)
    assert crash["is_error"] and "crash" in crash["output"]
    assert die["is_error"] and "stopped during the call" in die["output"]
    assert "dying now" in die["output"]  # its last stderr
    assert echo["output"] == "back again" and not echo["is_error"]  # restarted on need
    assert bad_args["is_error"]
    assert bad_json["is_error"] and "not valid JSON" in bad_json["output"]
    assert evts[-1]["reason"] == "completed" and evts[-1]["text"] == "survived"
    # The broken server's tools never existed, the others are offered.
    assert not [n for n in tool_names(fake_llm.requests[0]) if n.startswith("mcp__broken")]


def test_repo_servers_start_only_in_trusted_projects(
    fake_llm: FakeLLM, repo: Path, xum_root: Path, barriers: Path
) -> None:
    write_config(repo / ".xum" / "mcp.jsonc", {"repo_srv": server_entry(barriers)})
    fake_llm.script(fakellm.text("untrusted"))
    evts = xum_json(repo, fake_llm, "hi")
    withheld = [e for e in evts if e["type"] == "advisory" and e["kind"] == "untrusted-project"]
    assert withheld and "repo_srv" in withheld[0]["message"]
    assert "xum trust" in withheld[0]["message"]
    assert not (barriers / "pid").exists(), "an untrusted repository started a process"
    assert "tool_catalog_search" not in tool_names(fake_llm.requests[0])

    trusted = run_xum("trust", cwd=repo)
    assert trusted.returncode == 0, trusted.stderr
    fake_llm.script(
        fakellm.tool_call("mcp__repo_srv__echo", {"text": "trusted"}), fakellm.text("ok")
    )
    write_config(xum_root / "mcp.jsonc", {}, toolSearch=False)
    # toolSearch is a global setting: the repository's is reported and ignored.
    write_config(repo / ".xum" / "mcp.jsonc", {"repo_srv": server_entry(barriers)}, toolSearch=True)
    evts = xum_json(repo, fake_llm, "hi again")
    assert (barriers / "pid").exists()
    (echo,) = results(evts)
    assert echo["output"] == "trusted"
    assert any(
        e["type"] == "advisory" and e["kind"] == "mcp-config" and "toolSearch" in e["message"]
        for e in evts
    )


def test_servers_run_in_the_workspace_with_its_secrets_masked(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    secret = "s3cr3t-value-123"
    set_project_secret(str(repo.resolve()), "TEST_SECRET", secret)
    write_config(xum_root / "mcp.jsonc", {"test": server_entry()}, toolSearch=False)
    fake_llm.script(fakellm.tool_call("mcp__test__whoami", {}), fakellm.text("ok"))
    result = run_xum("run", "--json", "-m", MODEL, "who?", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 0, result.stderr
    (whoami,) = results(events(result.stdout))
    assert f"cwd={repo.resolve()}" in whoami["output"]
    assert "secret=[secret:TEST_SECRET]" in whoami["output"]
    assert secret not in result.stdout
    assert secret not in json.dumps(fake_llm.requests[-1].json)


def test_a_call_past_its_timeout_is_cancelled_on_the_server(
    fake_llm: FakeLLM, repo: Path, xum_root: Path, barriers: Path
) -> None:
    write_config(
        xum_root / "mcp.jsonc",
        {"test": server_entry(barriers, timeoutSecs=0.5)},
        toolSearch=False,
    )
    fake_llm.script(fakellm.tool_call("mcp__test__slow", {"seconds": 120}), fakellm.text("ok"))
    evts = xum_json(repo, fake_llm, "wait")
    (slow,) = results(evts)
    assert slow["is_error"] and "timed out after 0.5 s" in slow["output"]
    # The SDK told the server: its handler saw the cancellation.
    wait_for(lambda: (barriers / "cancelled-slow").exists(), "the server to see the cancel")
