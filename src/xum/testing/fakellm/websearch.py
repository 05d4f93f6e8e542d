"""Replies in which the provider ran its own web search, in each wire's own words.

The fake server does not search anything: `web_search_reply` writes the stream a provider sends
when its server-side search ran (Anthropic: a `server_tool_use` block, its
`web_search_tool_result` and an answer whose text carries `citations`; OpenAI Responses: a
`web_search_call` item and an answer with `url_citation` annotations) and the server replays it
byte for byte, like a recorded fixture::

    server.script(
        fakellm.web_search_reply(
            "weather in Paris",
            [("Paris forecast", "https://weather.example/paris")],
            "It is sunny.",
            wire="anthropic",
        )
    )
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

import orjson

from xum.testing.fakellm.script import Replay, Reply

SearchWire = Literal["anthropic", "openai-responses"]


def _sse(event: str, data: dict[str, Any]) -> bytes:
    return b"event: " + event.encode() + b"\ndata: " + orjson.dumps(data) + b"\n\n"


def web_search_reply(
    query: str,
    results: Sequence[tuple[str, str]],
    answer: str,
    *,
    wire: SearchWire = "anthropic",
    error_code: str | None = None,
    search_id: str = "srvtoolu_fake01",
    model: str = "fake-model",
) -> Reply:
    """A reply that searched for `query`, found `results` ((title, url) pairs) and answered
    `answer`, citing the first result (when there is one). `error_code`: the search failed
    (Anthropic's `web_search_tool_result_error`; Responses: a failed call)."""
    if wire == "anthropic":
        data = _anthropic(query, results, answer, error_code, search_id, model)
    else:
        data = _responses(query, results, answer, error_code, search_id, model)
    return Reply(replay=Replay(data=data, source=f"web_search:{wire}"), wire=wire)


def _anthropic(
    query: str,
    results: Sequence[tuple[str, str]],
    answer: str,
    error_code: str | None,
    search_id: str,
    model: str,
) -> bytes:
    start: dict[str, Any] = {
        "id": "msg_fake_search",
        "type": "message",
        "role": "assistant",
        "model": model,
        "content": [],
        "stop_reason": None,
        "stop_sequence": None,
        "usage": {"input_tokens": 20, "output_tokens": 1},
    }
    out = [_sse("message_start", {"type": "message_start", "message": start})]
    use = {"type": "server_tool_use", "id": search_id, "name": "web_search", "input": {}}
    out.append(_sse("content_block_start", _block_start(0, use)))
    raw_input = orjson.dumps({"query": query}).decode()
    for fragment in ("", raw_input[:10], raw_input[10:]):  # arguments arrive in pieces
        delta = {"type": "input_json_delta", "partial_json": fragment}
        out.append(_sse("content_block_delta", _delta(0, delta)))
    out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 0}))
    content: Any
    if error_code is not None:
        content = {"type": "web_search_tool_result_error", "error_code": error_code}
    else:
        content = [
            {
                "type": "web_search_result",
                "title": title,
                "url": url,
                "encrypted_content": f"ENC{n}-{url}",
                "page_age": "April 1, 2026",
            }
            for n, (title, url) in enumerate(results)
        ]
    result = {"type": "web_search_tool_result", "tool_use_id": search_id, "content": content}
    out.append(_sse("content_block_start", _block_start(1, result)))
    out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 1}))
    text_block = {"type": "text", "text": "", "citations": []}
    out.append(_sse("content_block_start", _block_start(2, text_block)))
    if results and error_code is None:
        title, url = results[0]
        citation = {
            "type": "web_search_result_location",
            "url": url,
            "title": title,
            "encrypted_index": "EIDX0",
            "cited_text": answer[:40],
        }
        out.append(
            _sse(
                "content_block_delta", _delta(2, {"type": "citations_delta", "citation": citation})
            )
        )
    out.append(_sse("content_block_delta", _delta(2, {"type": "text_delta", "text": answer})))
    out.append(_sse("content_block_stop", {"type": "content_block_stop", "index": 2}))
    usage = {"output_tokens": 30, "server_tool_use": {"web_search_requests": 1}}
    stop = {"stop_reason": "end_turn", "stop_sequence": None}
    out.append(_sse("message_delta", {"type": "message_delta", "delta": stop, "usage": usage}))
    out.append(_sse("message_stop", {"type": "message_stop"}))
    return b"".join(out)


def _block_start(index: int, block: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_start", "index": index, "content_block": block}


def _delta(index: int, delta: dict[str, Any]) -> dict[str, Any]:
    return {"type": "content_block_delta", "index": index, "delta": delta}


def _responses(
    query: str,
    results: Sequence[tuple[str, str]],
    answer: str,
    error_code: str | None,
    search_id: str,
    model: str,
) -> bytes:
    seq = iter(range(1000))

    def event(kind: str, **fields: Any) -> bytes:
        return _sse(kind, {"type": kind, "sequence_number": next(seq), **fields})

    response = {
        "id": "resp_fake_search",
        "object": "response",
        "model": model,
        "status": "in_progress",
    }
    out = [event("response.created", response=response)]
    call: dict[str, Any] = {"id": search_id, "type": "web_search_call", "status": "in_progress"}
    out.append(event("response.output_item.added", output_index=0, item=call))
    status = "failed" if error_code is not None else "completed"
    sources = [{"type": "url", "url": url} for _, url in results]
    done = {
        "id": search_id,
        "type": "web_search_call",
        "status": status,
        "action": {"type": "search", "query": query, "sources": sources},
    }
    out.append(event("response.output_item.done", output_index=0, item=done))
    annotations = []
    if results and error_code is None:
        title, url = results[0]
        annotations.append(
            {
                "type": "url_citation",
                "start_index": 0,
                "end_index": len(answer),
                "url": url,
                "title": title,
            }
        )
    message = {
        "id": "msg_fake",
        "type": "message",
        "status": "in_progress",
        "role": "assistant",
        "content": [],
    }
    out.append(event("response.output_item.added", output_index=1, item=message))
    out.append(
        event(
            "response.output_text.delta",
            output_index=1,
            content_index=0,
            item_id="msg_fake",
            delta=answer,
        )
    )
    text = {"type": "output_text", "text": answer, "annotations": annotations}
    finished = {**message, "status": "completed", "content": [text]}
    out.append(event("response.output_item.done", output_index=1, item=finished))
    usage = {
        "input_tokens": 20,
        "input_tokens_details": {"cached_tokens": 0},
        "output_tokens": 30,
        "output_tokens_details": {"reasoning_tokens": 0},
        "total_tokens": 50,
    }
    final = {**response, "status": "completed", "output": [done, finished], "usage": usage}
    out.append(event("response.completed", response=final))
    return b"".join(out)
