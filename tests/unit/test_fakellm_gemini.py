"""The fake LLM's Gemini API codec: `/v1beta/models/{model}:generateContent` answers one JSON
object, `:streamGenerateContent?alt=sse` a stream of `data:` frames whose parts join to the
reply; text, thoughts and function calls in Gemini's own shapes; usage in `usageMetadata`; the
model taken from the path; a request without contents refused as the API refuses it; errors in
Google's error shape; every request recorded."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

HTTP = httpx.Client(timeout=10)
MODEL = "gemini-2.5-pro"
BODY: dict[str, Any] = {
    "contents": [{"role": "user", "parts": [{"text": "Run the tests"}]}],
    "systemInstruction": {"parts": [{"text": "You are a coding agent."}]},
    "tools": [{"functionDeclarations": [{"name": "run_shell_command"}]}],
}


@pytest.fixture
def llm() -> Iterator[FakeLLM]:
    with FakeLLM() as server:
        yield server


def _url(llm: FakeLLM, method: str) -> str:
    return f"{llm.url}/v1beta/models/{MODEL}:{method}"


def _frames(text: str) -> list[dict[str, Any]]:
    return [
        json.loads(line.removeprefix("data: "))
        for line in text.splitlines()
        if line.startswith("data: ")
    ]


def test_generate_content_answers_text_and_a_function_call(llm: FakeLLM) -> None:
    llm.script(
        fakellm.Reply(
            content=(
                fakellm.Text("Running them."),
                fakellm.ToolCall("run_shell_command", {"command": "make test"}),
            )
        )
    )
    r = HTTP.post(_url(llm, "generateContent"), json=BODY)
    assert r.status_code == 200, r.text
    body = r.json()
    (candidate,) = body["candidates"]
    assert candidate["finishReason"] == "STOP"
    assert candidate["content"]["role"] == "model"
    assert candidate["content"]["parts"] == [
        {"text": "Running them."},
        {"functionCall": {"name": "run_shell_command", "args": {"command": "make test"}}},
    ]
    usage = body["usageMetadata"]
    assert usage["promptTokenCount"] > 0 and usage["candidatesTokenCount"] > 0
    assert usage["totalTokenCount"] == usage["promptTokenCount"] + usage["candidatesTokenCount"]
    assert body["modelVersion"] == MODEL
    (request,) = llm.requests
    assert request.wire == "gemini" and request.model == MODEL and not request.stream


def test_stream_generate_content_streams_sse_frames(llm: FakeLLM) -> None:
    llm.script(
        fakellm.Reply(
            content=(fakellm.Reasoning("Think first."), fakellm.Text("Hello from the fake.")),
            chunk_size=5,
        )
    )
    r = HTTP.post(_url(llm, "streamGenerateContent") + "?alt=sse", json=BODY)
    assert r.status_code == 200, r.text
    assert r.headers["content-type"].startswith("text/event-stream")
    frames = _frames(r.text)
    assert len(frames) > 3  # chunked
    parts = [p for f in frames for p in f["candidates"][0]["content"]["parts"]]
    said = "".join(p["text"] for p in parts if not p.get("thought"))
    thought = "".join(p["text"] for p in parts if p.get("thought"))
    assert said == "Hello from the fake." and thought == "Think first."
    assert [f["candidates"][0].get("finishReason") for f in frames][-1] == "STOP"
    assert all("finishReason" not in f["candidates"][0] for f in frames[:-1])
    (request,) = llm.requests
    assert request.stream and request.query == "alt=sse"


def test_a_streamed_function_call_is_one_whole_part(llm: FakeLLM) -> None:
    llm.script(fakellm.tool_call("replace", {"file_path": "a.txt", "old_string": "x"}))
    r = HTTP.post(_url(llm, "streamGenerateContent") + "?alt=sse", json=BODY)
    calls = [
        p["functionCall"]
        for f in _frames(r.text)
        for p in f["candidates"][0]["content"]["parts"]
        if "functionCall" in p
    ]
    assert calls == [{"name": "replace", "args": {"file_path": "a.txt", "old_string": "x"}}]


def test_a_request_without_contents_is_refused_like_the_api(llm: FakeLLM) -> None:
    llm.script(fakellm.reply("never sent"))
    r = HTTP.post(_url(llm, "generateContent"), json={"contents": []})
    assert r.status_code == 400
    error = r.json()["error"]
    assert error["code"] == 400 and error["status"] == "INVALID_ARGUMENT"
    assert "contents" in error["message"]
    assert llm.replies_left == 1


def test_a_scripted_error_has_googles_shape(llm: FakeLLM) -> None:
    llm.script(fakellm.error(429))
    r = HTTP.post(_url(llm, "generateContent"), json=BODY)
    assert r.status_code == 429
    assert r.json()["error"]["status"] == "RESOURCE_EXHAUSTED"


def test_other_methods_under_models_are_not_routes(llm: FakeLLM) -> None:
    r = HTTP.post(_url(llm, "embedContent"), json=BODY)
    assert r.status_code == 404
    assert llm.errors and "no route" in llm.errors[0]
