"""A reply's provider-side search in the next request: Anthropic gets its own blocks back (only
a search with its result), every other wire drops the part; a compaction transcript names it."""

from __future__ import annotations

from typing import Any

from xum.context.compaction import as_transcript
from xum.llm.anthropic import AnthropicClient
from xum.llm.endpoint import Endpoint
from xum.llm.openai_chat import OpenAIChatClient
from xum.llm.openai_responses import OpenAIResponsesClient
from xum.llm.types import LLMRequest, Message, WebSearchPart, text_message

USE = {"type": "server_tool_use", "id": "srvtoolu_1", "name": "web_search", "input": {"query": "q"}}
RESULT = {
    "type": "web_search_tool_result",
    "tool_use_id": "srvtoolu_1",
    "content": [
        {
            "type": "web_search_result",
            "title": "T",
            "url": "https://t.example/",
            "encrypted_content": "E",
        }
    ],
}


def search(wire: str, state: dict[str, Any]) -> WebSearchPart:
    return {
        "type": "web_search",
        "id": "srvtoolu_1",
        "query": "q",
        "results": [{"title": "T", "url": "https://t.example/"}],
        "wire": wire,
        "state": state,
    }


def history(part: WebSearchPart) -> list[Message]:
    reply: Message = {"role": "assistant", "content": [part, {"type": "text", "text": "Answer."}]}
    return [text_message("user", "find"), reply, text_message("user", "more")]


def assistant_turn(client: Any, model: str, messages: list[Message]) -> Any:
    body = client.encode(LLMRequest(model=model, system="s", messages=messages))
    turns = body.get("messages", body.get("input"))
    return next(t for t in turns if t.get("role") == "assistant")


def anthropic() -> AnthropicClient:
    return AnthropicClient(Endpoint("anthropic", "anthropic", "https://api.anthropic.com/v1"))


def test_anthropic_resends_a_search_with_its_result_only() -> None:
    turn = assistant_turn(
        anthropic(), "claude-opus-5-5", history(search("anthropic", {"use": USE, "result": RESULT}))
    )
    assert turn["content"][:2] == [USE, RESULT]
    paused = assistant_turn(
        anthropic(), "claude-opus-5-5", history(search("anthropic", {"use": USE}))
    )
    assert [b["type"] for b in paused["content"]] == ["text"]


def test_other_wires_drop_the_search() -> None:
    foreign = history(search("openai-responses", {"item": {"type": "web_search_call"}}))
    assert [
        b["type"] for b in assistant_turn(anthropic(), "claude-opus-5-5", foreign)["content"]
    ] == ["text"]
    responses = OpenAIResponsesClient(
        Endpoint("openai", "openai-responses", "https://api.openai.com/v1")
    )
    assert assistant_turn(responses, "gpt-6.1-sol", foreign) == {
        "type": "message",
        "role": "assistant",
        "content": [{"type": "output_text", "text": "Answer."}],
    }
    chat = OpenAIChatClient(Endpoint("openai", "openai-chat", "https://api.openai.com/v1"))
    own = history(search("anthropic", {"use": USE, "result": RESULT}))
    assert assistant_turn(chat, "gpt-6.1-sol", own) == {"role": "assistant", "content": "Answer."}


def test_a_compaction_transcript_names_the_search() -> None:
    (_, reply, _) = as_transcript(history(search("anthropic", {"use": USE, "result": RESULT})))
    assert reply["content"][0]["type"] == "text"
    assert "[web search: q]" in reply["content"][0]["text"]
