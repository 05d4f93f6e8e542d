"""config.json `webSearch` and which search a route gets: native where the API has it and the
tool policy keeps `web_search`, the client-side tool where a backend is configured, else none."""

from __future__ import annotations

from typing import Any

import pytest

from xum.core.errors import ConfigError
from xum.engine.native_search import from_header, header_value, native_search
from xum.engine.route import resolve_route
from xum.llm.types import ToolSpec
from xum.llm.websearch import NativeSearch, domain_allowed, web_search_config

ENV = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k", "XAI_API_KEY": "k"}


def route(
    model: str, search: dict[str, Any] | None, env: dict[str, str] = ENV
) -> tuple[NativeSearch | None, bool]:
    config = {} if search is None else {"webSearch": search}
    resolved = resolve_route(model, env=env, config=config)
    return resolved.web_search, resolved.search_tool


def test_nothing_is_on_by_default() -> None:
    assert route("anthropic:claude-sonnet-5-5", None) == (None, False)
    assert route("anthropic:claude-sonnet-5-5", {}) == (None, False)


def test_native_only_where_the_providers_api_has_it() -> None:
    native = {"native": True, "maxUses": 2, "allowedDomains": ["Docs.Example."]}
    expected = NativeSearch(2, ("docs.example",))
    assert route("anthropic:claude-sonnet-5-5", native) == (expected, False)
    assert route("openai:gpt-6.1-sol", native) == (expected, False)  # Responses by default
    assert route("xai:grok-4.7", native) == (None, False)  # no backend: nothing
    both = {**native, "searxng": "http://127.0.0.1:8888/"}
    assert route("xai:grok-4.7", both) == (None, True)
    assert route("anthropic:claude-sonnet-5-5", {"searxng": "http://127.0.0.1:8888"}) == (
        None,
        True,
    )


@pytest.mark.parametrize(
    ("value", "named"),
    [
        ([], "webSearch must be an object"),
        ({"native": "yes"}, "webSearch.native"),
        ({"searxng": "ftp://x"}, "webSearch.searxng"),
        ({"searxng": "http://u:p@x"}, "user name or password"),
        ({"maxResults": 0}, "webSearch.maxResults"),
        ({"maxResults": 21}, "from 1 to 20"),
        ({"maxUses": True}, "webSearch.maxUses"),
        ({"allowedDomains": "a.example"}, "webSearch.allowedDomains"),
        ({"nativ": True}, "unknown keys: nativ"),
        ({"brave": "yes"}, "webSearch.brave"),
        ({"brave": {"baseUrl": "file:///x"}}, "webSearch.brave.baseUrl"),
        ({"brave": True, "searxng": "http://h"}, "keep one"),
    ],
)
def test_a_wrong_value_names_the_key(value: Any, named: str) -> None:
    with pytest.raises(ValueError, match=named):
        web_search_config({"webSearch": value})
    with pytest.raises(ConfigError):
        resolve_route("anthropic:claude-sonnet-5-5", env=ENV, config={"webSearch": value})


def test_brave_is_offered_only_with_its_key() -> None:
    brave = {"brave": True}
    assert route("xai:grok-4.7", brave) == (None, False)
    assert route("xai:grok-4.7", brave, {**ENV, "BRAVE_SEARCH_API_KEY": "  "}) == (None, False)
    assert route("xai:grok-4.7", brave, {**ENV, "BRAVE_SEARCH_API_KEY": "b"}) == (None, True)
    parsed = web_search_config({"webSearch": brave})
    assert parsed.brave == "https://api.search.brave.com/res/v1"
    gateway = web_search_config({"webSearch": {"brave": {"baseUrl": "https://gw.example/v1/"}}})
    assert gateway.brave == "https://gw.example/v1"
    assert web_search_config({"webSearch": {"brave": False}}).brave is None


def test_base_url_is_normalized() -> None:
    assert web_search_config({"webSearch": {"searxng": " http://h:1/ "}}).searxng == "http://h:1"


def test_domain_filter_matches_the_domain_and_its_subdomains() -> None:
    allowed = ("docs.example",)
    assert domain_allowed("https://docs.example/a", allowed)
    assert domain_allowed("https://api.docs.example/a", allowed)
    assert not domain_allowed("https://evildocs.example/a", allowed)
    assert not domain_allowed("https://docs.example.evil/a", allowed)
    assert domain_allowed("https://anything/", ())


def test_native_search_follows_the_tool_policy_and_round_trips_the_header() -> None:
    spec = ToolSpec("web_search", "d", {"type": "object"})
    bash = ToolSpec("bash", "d", {"type": "object"})
    search = NativeSearch(3, ("a.example",))
    # The policy kept web_search: the request carries the native search instead of the tool.
    assert native_search([bash, spec], search) == ([bash], search)
    # The policy removed it: no search of either kind.
    assert native_search([bash], search) == ([bash], None)
    # No native search on this route: the client-side tool stays.
    assert native_search([bash, spec], None) == ([bash, spec], None)
    assert from_header(header_value(search)) == search
    assert header_value(None) is None and from_header(None) is None
