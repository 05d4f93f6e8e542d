"""Long sessions from the CLI: `xum run` compacts automatically, continues a workspace with
`--workspace`, and carries out `/compact` and `/clear` there. The real CLI in a subprocess, the
fake LLM server over HTTP, real git repositories."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import run_xum
from tests.gitrepo import make_repo
from xum.store import compaction_config as cc
from xum.store.config import update_config
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.fakellm.record import RecordedRequest

MODEL = "anthropic:claude-sonnet-5-5"


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "repo")


def env_for(server: FakeLLM) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}


def events(stdout: str) -> list[dict[str, Any]]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def is_compaction(request: RecordedRequest) -> bool:
    return any('<agent id="compact"' in b["text"] for b in request.json.get("system", []))


def texts(request: RecordedRequest) -> list[str]:
    out: list[str] = []
    for message in request.json["messages"]:
        content = message["content"]
        if isinstance(content, str):
            out.append(content)
        else:
            out.extend(b["text"] for b in content if b.get("type") == "text")
    return out


def test_a_long_run_compacts_automatically_and_says_so_in_json(
    fake_llm: FakeLLM, repo: Path
) -> None:
    # A small window: the tool loop below passes 75% of it within a few steps.
    def small_window(config: dict[str, Any]) -> None:
        config[cc.CONTEXT_WINDOWS_KEY] = {MODEL: 24_000}

    update_config(small_window)
    steps = {"n": 0}

    def respond(request: RecordedRequest) -> fakellm.Reply:
        if is_compaction(request):
            return fakellm.text("SUMMARY: printed many lines so far.")
        steps["n"] += 1
        if steps["n"] <= 14:
            script = f"python3 -c \"print('line ' * 900)\"  # {steps['n']}"
            return fakellm.tool_call("bash", {"script": script, "display_name": "print"})
        return fakellm.text("finished")

    fake_llm.set_responder(respond)
    proc = run_xum("run", "--json", "-m", MODEL, "print a lot", cwd=repo, env=env_for(fake_llm))
    assert proc.returncode == 0, proc.stderr
    out = events(proc.stdout)
    types = [e["type"] for e in out]
    assert "compaction-start" in types and "compaction" in types
    start = next(e for e in out if e["type"] == "compaction-start")
    done = next(e for e in out if e["type"] == "compaction")
    assert start["trigger"] == done["trigger"] == "force" and start["seq"] < done["seq"]
    assert out[-1]["type"] == "final" and out[-1]["text"] == "finished"
    assert any(is_compaction(r) for r in fake_llm.requests)
