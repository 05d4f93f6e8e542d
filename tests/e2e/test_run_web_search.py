"""`web_search` through `xum run --json`, from config.json to the request, the events and the
log: the provider's own search where the API has it, the client-side tool over a (fake) SearXNG
instance for other models, and nothing when config asks for neither."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import env_for, events, run_xum, write_providers
from tests.gitrepo import APP_AND_BINARY_FILES
from tests.support.search_services import fake_search_service, hit
from xum.engine.replay import rebuild_requests
from xum.llm.client import open_client
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.opening import fake_route

pytestmark = pytest.mark.repo(files=APP_AND_BINARY_FILES)

HITS = [("Paris forecast", "https://weather.example/paris")]


def write_config(root: Path, data: dict[str, object]) -> None:
    root.mkdir(mode=0o700, exist_ok=True)
    path = root / "config.json"
    path.write_text(json.dumps(data))
    os.chmod(path, 0o600)


def tool_names(body: dict[str, Any]) -> list[str]:
    return [str(t.get("name")) for t in body.get("tools") or []]


def only(items: list[dict[str, Any]], kind: str) -> list[dict[str, Any]]:
    return [e for e in items if e.get("type") == kind]


def test_native_search_is_requested_recorded_shown_and_replayed(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    write_config(xum_root, {"webSearch": {"native": True, "maxUses": 2}})
    fake_llm.script(
        fakellm.web_search_reply("weather in Paris", HITS, "It is sunny.", wire="anthropic")
    )
    result = run_xum("run", "--json", "weather?", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 0, result.stderr
    body = fake_llm.requests[0].json
    assert "web_search" in tool_names(body)
    (server_tool,) = [t for t in body["tools"] if t.get("type") == "web_search_20250305"]
    assert server_tool["max_uses"] == 2
    # Not also as a function tool: the provider's search replaces the client-side one.
    assert [t for t in body["tools"] if t.get("name") == "web_search"] == [server_tool]
    (reply,) = only(events(result.stdout), "assistant-message")
    assert reply["web_searches"] == [
        {"query": "weather in Paris", "results": [{"title": t, "url": u} for t, u in HITS]}
    ]
    assert reply["citations"] == [{"title": "Paris forecast", "url": HITS[0][1]}]
    assert reply["text"] == "It is sunny."

    # The log rebuilds the request exactly as it was posted (the native search included).
    (log_dir,) = [p for p in (xum_root / "sessions").iterdir() if p.is_dir()]
    (step,) = rebuild_requests(SessionLog.open(log_dir.name).frames)
    client = open_client(fake_route(fake_llm, step.model).endpoint)
    assert client.request_body(step.request) == fake_llm.requests[0].body


def test_native_search_is_resent_on_the_next_turn(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    write_config(xum_root, {"webSearch": {"native": True}})
    fake_llm.script(
        fakellm.web_search_reply("weather in Paris", HITS, "It is sunny.", wire="anthropic"),
        fakellm.text("You are welcome."),
    )
    first = run_xum("run", "--json", "weather?", cwd=repo, env=env_for(fake_llm))
    assert first.returncode == 0, first.stderr
    again = run_xum("run", "--json", "-w", "last", "thanks", cwd=repo, env=env_for(fake_llm))
    assert again.returncode == 0, again.stderr
    history = fake_llm.requests[1].json["messages"]
    blocks = [b["type"] for b in history[1]["content"]]
    assert blocks == ["server_tool_use", "web_search_tool_result", "text"]
    assert history[1]["content"][1]["content"][0]["encrypted_content"].startswith("ENC0-")


def test_the_client_tool_searches_the_configured_searxng(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    with fake_search_service() as searx:
        searx.results = [hit(n) for n in range(1, 6)] + [
            {"url": "javascript:alert(1)", "title": "x"}
        ]
        write_config(xum_root, {"webSearch": {"searxng": searx.url + "/", "maxResults": 3}})
        fake_llm.script(
            fakellm.tool_call("web_search", {"query": "xum  docs"}),
            fakellm.text("Found them."),
        )
        result = run_xum("run", "--json", "find docs", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 0, result.stderr
    first = fake_llm.requests[0].json
    assert "web_search" in tool_names(first)
    assert not [t for t in first["tools"] if t.get("type", "").startswith("web_search_")]
    assert searx.queries == [{"q": ["xum docs"], "format": ["json"]}]
    (tool,) = only(events(result.stdout), "tool-result")
    assert tool["name"] == "web_search" and not tool["is_error"]
    assert 'Results for "xum docs" (3 shown of 6):' in tool["output"]
    assert "https://docs.example/page-3" in tool["output"] and "page-4" not in tool["output"]
    assert "About page 1." in tool["output"]
    assert tool["meta"]["results"][0] == {"title": "Page 1", "url": "https://docs.example/page-1"}


def test_a_redirect_away_from_the_configured_instance_is_refused(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    with fake_search_service() as searx, fake_search_service() as elsewhere:
        # Another local service: the user opened the instance's host and port, nothing else.
        searx.redirect = elsewhere.url + "/search?format=json"
        write_config(xum_root, {"webSearch": {"searxng": searx.url}})
        fake_llm.script(fakellm.tool_call("web_search", {"query": "q"}), fakellm.text("ok"))
        result = run_xum("run", "--json", "search", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 0, result.stderr
    (tool,) = only(events(result.stdout), "tool-result")
    assert tool["is_error"] and "refused" in tool["output"] and "loopback" in tool["output"]
    assert elsewhere.queries == []


def test_no_config_no_search_and_a_model_without_native_search_gets_the_tool(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    fake_llm.script(fakellm.text("plain"))
    plain = run_xum("run", "--json", "hi", cwd=repo, env=env_for(fake_llm))
    assert plain.returncode == 0, plain.stderr
    assert "web_search" not in tool_names(fake_llm.requests[0].json)
    assert not [t for t in fake_llm.requests[0].json["tools"] if "type" in t]

    # Chat Completions has no provider search: with both kinds configured it gets the tool.
    write_config(xum_root, {"webSearch": {"native": True, "searxng": "http://127.0.0.1:9/"}})
    write_providers(
        xum_root,
        f'{{"openai": {{"apiKey": "sk-test", "baseUrl": "{fake_llm.url}", '
        '"wireFormat": "chatCompletions"}}\n',
    )
    fake_llm.script(fakellm.text("chat"))
    chat = run_xum("run", "--json", "-m", "openai:gpt-6.1-sol", "hi", cwd=repo)
    assert chat.returncode == 0, chat.stderr
    tools = fake_llm.requests[1].json["tools"]
    assert "web_search" in [t["function"]["name"] for t in tools]


def test_a_wrong_web_search_setting_is_named(repo: Path, xum_root: Path) -> None:
    write_config(xum_root, {"webSearch": {"searxng": "ftp://search.local"}})
    result = run_xum("run", "hi", cwd=repo, env={"ANTHROPIC_API_KEY": "k"})
    assert result.returncode == 1
    assert "config.json" in result.stderr and "webSearch.searxng" in result.stderr


def test_brave_gets_its_key_in_a_header_and_nowhere_else(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    key = "brave-key-XYZ123"
    with fake_search_service() as brave:
        brave.results = [
            hit(1, title="<strong>Page</strong> &amp; one", content="a <strong>b</strong>")
        ]
        # The configured service redirects once, to itself: the key stays with the first request.
        brave.redirect = brave.url + "/res/v1/web/search?q=again"
        write_config(xum_root, {"webSearch": {"brave": {"baseUrl": brave.url + "/res/v1/"}}})
        fake_llm.script(fakellm.tool_call("web_search", {"query": "q"}), fakellm.text("ok"))
        env = {**env_for(fake_llm), "BRAVE_SEARCH_API_KEY": key}
        result = run_xum("run", "--json", "search", cwd=repo, env=env)
    assert result.returncode == 0, result.stderr
    assert brave.paths == ["/res/v1/web/search", "/res/v1/web/search"]
    assert brave.queries[0] == {"q": ["q"], "count": ["8"]}
    assert brave.tokens == [key, None]
    (tool,) = only(events(result.stdout), "tool-result")
    assert not tool["is_error"], tool["output"]
    assert "1. Page & one" in tool["output"] and "a b" in tool["output"]
    assert key not in result.stdout and key not in result.stderr
    for path in (xum_root / "sessions").rglob("*"):
        if path.is_file():
            assert key.encode() not in path.read_bytes(), path


def test_brave_without_its_key_offers_no_tool(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    write_config(xum_root, {"webSearch": {"brave": True}})
    fake_llm.script(fakellm.text("plain"))
    env = {**env_for(fake_llm), "BRAVE_SEARCH_API_KEY": ""}
    result = run_xum("run", "--json", "hi", cwd=repo, env=env)
    assert result.returncode == 0, result.stderr
    assert "web_search" not in tool_names(fake_llm.requests[0].json)


def test_xum_session_names_the_searches(fake_llm: FakeLLM, repo: Path, xum_root: Path) -> None:
    write_config(xum_root, {"webSearch": {"native": True}})
    fake_llm.script(
        fakellm.web_search_reply("weather \x1b[31min Paris", HITS, "It is sunny.", wire="anthropic")
    )
    assert run_xum("run", "weather?", cwd=repo, env=env_for(fake_llm)).returncode == 0
    shown = run_xum("session", "last", cwd=repo)
    assert shown.returncode == 0, shown.stderr
    assert "⌕ searched: weather in Paris (1 results)" in shown.stdout
    assert "\x1b" not in shown.stdout
