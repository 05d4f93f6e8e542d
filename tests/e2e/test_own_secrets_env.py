"""xum's provider keys and server token stay with xum: an MCP server it starts (in a session and
from the Settings "Test" button) and a git hook that runs when xum runs git see neither, while
what the user configured for them (an entry's `env`) still arrives. Real `xum run` and server,
real MCP servers over stdio, real git with a real hook; the fake keys are set in xum's own
environment."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from tests.e2e.cli import env_for, run_xum
from tests.integration.server_support import AUTH, server_client
from tests.mcp.support import SERVER, write_config
from tests.support.envdump import FAKE_SECRETS, dump_command, leaked, read_dump, write_dumper
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

MODEL = "anthropic:claude-sonnet-5-5"


def xum_env(fake_llm: FakeLLM) -> dict[str, str]:
    """The fake LLM as the Anthropic provider, and more keys and a token beside its key."""
    env = {**FAKE_SECRETS, **env_for(fake_llm)}
    env["ANTHROPIC_API_KEY"] = FAKE_SECRETS["ANTHROPIC_API_KEY"]  # the fake LLM takes any key
    return env


def test_an_mcp_server_in_a_session_gets_no_key_and_no_token(
    fake_llm: FakeLLM, repo: Path, xum_root: Path, tmp_path: Path
) -> None:
    dumper = write_dumper(tmp_path)
    out = tmp_path / "mcp-env.json"
    # The dumper writes its environment, then becomes the test MCP server.
    command = dump_command(dumper, out, sys.executable, str(SERVER))
    entry = {"command": command, "env": {"MCP_ENTRY_SETTING": "from-the-entry"}}
    write_config(xum_root / "mcp.jsonc", {"dump": entry}, toolSearch=False)
    fake_llm.script(fakellm.text("done"))
    result = run_xum("run", "--json", "-m", MODEL, "hi", cwd=repo, env=xum_env(fake_llm))
    assert result.returncode == 0, result.stderr + result.stdout
    # The server was connected before the model was asked (its tools were offered).
    names = [t["name"] for t in fake_llm.requests[0].json.get("tools", [])]
    assert "mcp__dump__echo" in names
    seen = read_dump(out)
    assert leaked(seen) == {}
    assert seen["MCP_ENTRY_SETTING"] == "from-the-entry"
    assert seen["XUM_PROJECT_PATH"] == str(repo.resolve())
    assert seen.get("PATH")  # the rest of xum's environment is passed on


def test_the_settings_test_button_starts_the_server_without_key_or_token(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for name, value in FAKE_SECRETS.items():
        monkeypatch.setenv(name, value)
    dumper = write_dumper(tmp_path)
    out = tmp_path / "test-button-env.json"
    command = dump_command(dumper, out, sys.executable, str(SERVER))
    with server_client() as client:
        body = {"name": "dump", "command": command, "env": {"MCP_ENTRY_SETTING": "set"}}
        assert client.put("/api/settings/mcp/servers", json=body, headers=AUTH).status_code == 200
        tested = client.post("/api/settings/mcp/test", json={"name": "dump"}, headers=AUTH)
        assert tested.status_code == 200, tested.text
        assert tested.json()["ok"], tested.text
    seen = read_dump(out)
    assert leaked(seen) == {}
    assert seen["MCP_ENTRY_SETTING"] == "set"


def test_a_git_hook_run_by_xum_gets_no_key_and_no_token(
    fake_llm: FakeLLM, repo: Path, tmp_path: Path
) -> None:
    dumper = write_dumper(tmp_path)
    out = tmp_path / "hook-env.json"
    # `git worktree add` (a worktree workspace's checkout) runs the repository's post-checkout
    # hook: the project's code, run by git on xum's behalf.
    hook = repo / ".git" / "hooks" / "post-checkout"
    hook.write_text(f"#!/bin/sh\nexec {dump_command(dumper, out)}\n")
    hook.chmod(0o755)
    fake_llm.script(fakellm.text("done"))
    result = run_xum(
        "run", "--json", "-r", "worktree", "-m", MODEL, "hi", cwd=repo, env=xum_env(fake_llm)
    )
    assert result.returncode == 0, result.stderr + result.stdout
    seen = read_dump(out)
    assert leaked(seen) == {}
    assert seen.get("PATH")
