"""`xum run` with the request settings a user writes: config.json `modelRequests` (the idle
timeout, retries) and a `"*"` `modelParameters` wildcard in providers.jsonc, against the fake
server. Checks the whole path from the files to the error text and the request body."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from tests.e2e.cli import events, run_xum, write_providers
from tests.gitrepo import APP_AND_BINARY_FILES
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.repo(files=APP_AND_BINARY_FILES)


def write_config(root: Path, data: dict[str, object]) -> None:
    root.mkdir(mode=0o700, exist_ok=True)
    path = root / "config.json"
    path.write_text(json.dumps(data))
    os.chmod(path, 0o600)


def openai_chat(root: Path, server: FakeLLM, extra: str = "") -> None:
    write_providers(
        root,
        f"""{{
  "openai": {{
    "apiKey": "sk-test", "baseUrl": "{server.url}", "wireFormat": "chatCompletions",{extra}
  }},
}}
""",
    )


def test_a_stream_of_keepalives_ends_on_the_configured_idle_timeout(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    write_config(xum_root, {"modelRequests": {"idleTimeoutSeconds": 1.5, "maxRetries": 0}})
    openai_chat(xum_root, fake_llm)
    stall = fakellm.Stall(after_event=2, keepalive_s=0.05)
    fake_llm.script(fakellm.text("never finished", stall=stall))
    result = run_xum("run", "--json", "-m", "openai:gpt-6.1-sol", "hi", cwd=repo)
    assert result.returncode == 1, result.stderr
    final = events(result.stdout)[-1]
    assert final["type"] == "final" and final["reason"] == "error"
    assert final["error"]["kind"] == "timeout"
    assert "only keep-alives for 1.5 s" in final["error"]["message"]
    assert "modelRequests.idleTimeoutSeconds" in final["error"]["hint"]
    assert len(fake_llm.requests) == 1  # maxRetries 0


def test_a_bad_model_requests_setting_is_named(repo: Path, xum_root: Path) -> None:
    write_config(xum_root, {"modelRequests": {"idleTimeoutSeconds": "soon"}})
    result = run_xum("run", "hi", cwd=repo, env={"ANTHROPIC_API_KEY": "k"})
    assert result.returncode == 1
    assert "config.json" in result.stderr and "modelRequests.idleTimeoutSeconds" in result.stderr


def test_a_wildcard_top_k_is_not_sent_to_openai_and_the_user_is_told(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    extra = ' "modelParameters": {"*": {"top_k": 40, "temperature": 0.2}},'
    openai_chat(xum_root, fake_llm, extra)
    fake_llm.script(fakellm.text("fine"))
    result = run_xum("run", "--json", "-m", "openai:gpt-6.1-sol", "hi", cwd=repo)
    assert result.returncode == 0, result.stderr
    (rec,) = fake_llm.requests
    assert "top_k" not in rec.json and rec.json["temperature"] == 0.2
    (note,) = [e for e in events(result.stdout) if e.get("kind") == "model-parameters"]
    assert "top_k" in note["message"] and "openai's Chat Completions API" in note["message"]


def test_an_unmeasured_reply_stops_a_budgeted_run_with_exit_2(
    fake_llm: FakeLLM, repo: Path
) -> None:
    from tests.support.engine import unmeasured

    fake_llm.script(unmeasured({"type": "text", "text": "no usage from me"}))
    env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake_llm.url}
    result = run_xum("run", "--json", "-b", "1", "hi", cwd=repo, env=env)
    assert result.returncode == 2, result.stderr
    evts = events(result.stdout)
    assert evts[-1]["reason"] == "budget" and evts[-1]["cost_usd"] is None
    assert any(e.get("kind") == "budget-unmeasured" for e in evts)
