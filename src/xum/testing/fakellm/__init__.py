"""A fake LLM server for tests and benchmarks: real HTTP on 127.0.0.1, three wire formats.

It speaks Anthropic Messages (`POST /v1/messages`), OpenAI Responses (`POST /v1/responses`)
and OpenAI Chat Completions (`POST /v1/chat/completions`), streaming (SSE) and not, plus
`GET /v1/models` and Anthropic's `POST /v1/messages/count_tokens`. Point a client at
`server.base_url()` (`http://127.0.0.1:PORT/v1`); the code under test is the production HTTP
path. Full guide: docs/testing.md.

Python::

    from xum.testing import fakellm

    with fakellm.FakeLLM() as server:
        server.script(
            fakellm.tool_call("bash", {"script": "true"}),
            fakellm.reply(fakellm.Reasoning("done?"), "All done."),
            fakellm.rate_limited(retry_after=1),
            fakellm.refusal("openai-chat"),  # a refusal in the wire's own words
        )
        ...  # run the client against server.base_url()
        assert server.requests[1].cache.read_tokens > 0

    server.limit_concurrency(3, retry_after=1)  # an account's limit: a 4th at once gets 429

JSON script (`python -m xum.testing.fakellm --script FILE`)::

    {
      "models": ["claude-sonnet-4-5", "gpt-5"],          // GET /v1/models (optional)
      "cache": {"openai_min_tokens": 0},                 // CacheConfig fields (optional)
      "default": {"text": "ok"},                         // when the queue is empty (optional)
      "replies": [                                       // consumed in order
        "plain text reply",
        {"content": [
            {"type": "reasoning", "text": "...", "signature": "sig", "encrypted_content": "..."},
            {"type": "text", "text": "..."},
            {"type": "tool_call", "name": "bash", "arguments": {"script": "true"}, "id": "t1"}
         ],
         "usage": {"input_tokens": 10, "output_tokens": 5, "cache_read_tokens": 0,
                   "cache_write_tokens": 0, "reasoning_tokens": 0},
         "stop_reason": "max_tokens", "chunk_size": 4, "delay": 0.01,
         "first_byte_delay": 0.5, "wire": "anthropic", "model": "m", "label": "step 1",
         "headers": {"x-extra": "1"}},
        {"content": [{"type": "tool_call", "name": "bash", "arguments": "{not json"}]},
        {"error": {"status": 429, "headers": {"retry-after": "2"}}},
        {"error": {"status": 529, "body": {"type": "error", "error": {"type": "overloaded_error",
                                                                      "message": "Overloaded"}}}},
        {"error": {"status": 500, "body": "plain text body"}},
        {"text": "cut", "disconnect": {"after_bytes": 120, "reset": false,
                                       "before_headers": false}},
        {"text": "bad", "malformed": {"after_event": 2, "frame": "data: {not json\\n\\n"}},
        {"text": "x", "stream_error": {"after_event": 3, "message": "boom",
                                       "code": "overloaded_error", "responses_event": "failed"}},
        {"text": "trickle", "byte_delay": 2},                 // one byte every 2 s
        {"text": "slow", "stall": {"after_event": 2, "keepalive_s": 5,
                                   "keepalive": "comment", "seconds": null}},
        {"replay": "recorded/basic_response.txt"}         // or {"path": ..., "status": 200,
                                                          //     "content_type": "text/html"}
      ]
    }

A reply in which the provider ran its own web search: `fakellm.web_search_reply(query,
[(title, url), ...], answer, wire="anthropic" | "openai-responses")` (xum.testing.fakellm.websearch).

(The `//` comments are for this docstring only; the file is strict JSON. A top-level list is
a list of replies. Replay paths are relative to the script file.)
"""

from __future__ import annotations

from xum.testing.fakellm.cache import CacheConfig, CacheUsage
from xum.testing.fakellm.record import RecordedRequest
from xum.testing.fakellm.refusals import refusal
from xum.testing.fakellm.script import (
    WIRES,
    Disconnect,
    HttpError,
    Item,
    Malformed,
    Reasoning,
    Replay,
    Reply,
    Script,
    ScriptError,
    Stall,
    StreamError,
    Text,
    ToolCall,
    Usage,
    Wire,
    error,
    load_script,
    overloaded,
    rate_limited,
    replay,
    reply,
    reply_from_json,
    reply_to_json,
    script_from_json,
    text,
    tool_call,
)
from xum.testing.fakellm.server import DEFAULT_MODELS, FakeLLM, Responder
from xum.testing.fakellm.tokens import count as count_tokens
from xum.testing.fakellm.websearch import web_search_reply

__all__ = [
    "DEFAULT_MODELS",
    "WIRES",
    "CacheConfig",
    "CacheUsage",
    "Disconnect",
    "FakeLLM",
    "HttpError",
    "Item",
    "Malformed",
    "Reasoning",
    "RecordedRequest",
    "Replay",
    "Reply",
    "Responder",
    "Script",
    "ScriptError",
    "Stall",
    "StreamError",
    "Text",
    "ToolCall",
    "Usage",
    "Wire",
    "count_tokens",
    "error",
    "load_script",
    "overloaded",
    "rate_limited",
    "refusal",
    "replay",
    "reply",
    "reply_from_json",
    "reply_to_json",
    "script_from_json",
    "text",
    "tool_call",
    "web_search_reply",
]
