"""`xum run` through Chat Completions, set up only the way a user would: a `providers.jsonc` in
$XUM_ROOT (a custom OpenAI-compatible server, and the built-in `openai` switched by
`wireFormat`), no base-URL environment variables. The fake LLM server stands in for the
provider; each run does one tool call and then answers."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import events, run_xum, write_providers
from tests.gitrepo import APP_AND_BINARY_FILES
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.repo(files=APP_AND_BINARY_FILES)


def read_then_answer(
    fake_llm: FakeLLM, repo: Path, model: str, env: dict[str, str] | None = None
) -> dict[str, Any]:
    """Script a file_read and an answer, run it, and return the final event."""
    fake_llm.script(
        fakellm.tool_call("file_read", {"path": "app.py"}),
        fakellm.text("greet() returns 'hi'."),
    )
    result = run_xum("run", "--json", "-m", model, "What does greet return?", cwd=repo, env=env)
    assert result.returncode == 0, result.stderr
    evts = events(result.stdout)
    reads = [e for e in evts if e["type"] == "tool-result"]
    assert [(r["name"], r["is_error"]) for r in reads] == [("file_read", False)]
    assert "return 'hi'" in reads[0]["output"]
    final = evts[-1]
    assert final["type"] == "final" and final["reason"] == "completed"
    assert final["text"] == "greet() returns 'hi'."
    return final


def sent_tool_result(body: dict[str, Any]) -> str:
    """The tool message a Chat Completions request carries back to the model."""
    tool_messages = [m for m in body["messages"] if m.get("role") == "tool"]
    assert len(tool_messages) == 1, body["messages"]
    content = tool_messages[0]["content"]
    return content if isinstance(content, str) else json.dumps(content)


def test_custom_openai_compatible_provider_with_an_origin_only_base_url(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    write_providers(
        xum_root,
        f"""{{
  // a local server, written the way its README shows it: no /v1
  "local-llm": {{
    "providerType": "openai-compatible",
    "baseUrl": "{fake_llm.url}",
    "apiKey": "local-key",
    "displayName": "Local LLM",
    "models": ["qwen3-coder"],
  }},
}}
""",
    )
    read_then_answer(fake_llm, repo, "local-llm:qwen3-coder")

    requests = fake_llm.requests
    assert len(requests) == 2
    assert {(r.path, r.wire) for r in requests} == {("/v1/chat/completions", "openai-chat")}
    assert all(r.model == "qwen3-coder" for r in requests)
    assert all(r.headers.get("authorization") == "Bearer local-key" for r in requests)
    first, second = (r.json for r in requests)
    assert first["stream"] is True
    assert any(t["function"]["name"] == "file_read" for t in first["tools"])
    assert "return 'hi'" in sent_tool_result(second)


def test_builtin_openai_switched_to_chat_completions_by_wire_format(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    write_providers(
        xum_root,
        f"""{{
  "openai": {{
    "apiKey": "sk-test",
    "baseUrl": "{fake_llm.url}",
    "wireFormat": "chatCompletions",
  }},
}}
""",
    )
    ids = {"OPENAI_ORG_ID": "org-test", "OPENAI_PROJECT_ID": "proj_test"}
    read_then_answer(fake_llm, repo, "openai:gpt-6.1-sol", env=ids)

    requests = fake_llm.requests
    assert len(requests) == 2
    assert {(r.path, r.wire) for r in requests} == {("/v1/chat/completions", "openai-chat")}
    assert all(r.model == "gpt-6.1-sol" for r in requests)
    for r in requests:
        assert r.headers.get("authorization") == "Bearer sk-test"
        assert r.headers.get("openai-organization") == "org-test"
        assert r.headers.get("openai-project") == "proj_test"
    assert "return 'hi'" in sent_tool_result(requests[1].json)
