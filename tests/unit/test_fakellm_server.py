"""Scripting, recording and lifecycle of the fake server, over real HTTP."""

from __future__ import annotations

import asyncio
import json
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest

from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM, RecordedRequest, Reply

# One client per module: creating an httpx.Client costs ~20 ms (its TLS context).
HTTP = httpx.Client(timeout=10)

ANTHROPIC: dict[str, Any] = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 100,
    "messages": [{"role": "user", "content": "hi"}],
}
RESPONSES: dict[str, Any] = {"model": "gpt-5", "input": "hi"}
CHAT: dict[str, Any] = {"model": "gpt-5", "messages": [{"role": "user", "content": "hi"}]}


def first_text(data: dict[str, Any]) -> str:
    if "choices" in data:
        return str(data["choices"][0]["message"]["content"])
    if data.get("object") == "response":
        return str(data["output"][0]["content"][0]["text"])
    return str(data["content"][0]["text"])


# Queue, default, responder -------------------------------------------------------------------


def test_replies_are_consumed_in_order_then_500(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("one"), fakellm.text("two"))
    url = fake_llm.base_url()
    assert first_text(HTTP.post(url + "/messages", json=ANTHROPIC).json()) == "one"
    assert first_text(HTTP.post(url + "/responses", json=RESPONSES).json()) == "two"
    r = HTTP.post(url + "/messages", json=ANTHROPIC)
    assert r.status_code == 500
    assert r.json()["error"]["message"] == "fakellm: no scripted reply left for POST /v1/messages"
    assert fake_llm.errors == ["fakellm: no scripted reply left for POST /v1/messages"]
    assert [q.reply_source for q in fake_llm.requests] == ["queue", "queue", "none"]


def test_default_reply_answers_when_the_queue_is_empty(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("scripted"))
    fake_llm.set_default(fakellm.text("default"))
    url = fake_llm.base_url() + "/chat/completions"
    texts = [first_text(HTTP.post(url, json=CHAT).json()) for _ in range(3)]
    assert texts == ["scripted", "default", "default"]


def test_wire_restricted_reply_fails_loudly_on_another_wire(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("for anthropic", wire="anthropic", label="step 1"))
    r = HTTP.post(fake_llm.base_url() + "/responses", json=RESPONSES)
    assert r.status_code == 500
    message = r.json()["error"]["message"]
    assert "reply #1 (step 1)" in message and "'anthropic'" in message
    assert "POST /v1/responses (openai-responses)" in message
    assert fake_llm.errors == [message]


def test_responder_scripts_many_concurrent_sessions(fake_llm: FakeLLM) -> None:
    """Each session asks until its N-th step; the responder answers from the request alone."""
    steps = 3

    def responder(req: RecordedRequest) -> Reply:
        done = sum(1 for m in req.json["messages"] if m["role"] == "tool")
        if done < steps:
            return fakellm.tool_call("bash", {"script": f"step {done}"})
        return fakellm.text(f"finished {req.json['messages'][0]['content']}")

    fake_llm.set_responder(responder)

    async def session(client: httpx.AsyncClient, name: str) -> str:
        messages: list[dict[str, Any]] = [{"role": "user", "content": name}]
        while True:
            body = {"model": "gpt-5", "messages": messages}
            data = (await client.post("/chat/completions", json=body)).json()
            message = data["choices"][0]["message"]
            if not message.get("tool_calls"):
                return str(message["content"])
            messages.append(message)
            for call in message["tool_calls"]:
                messages.append({"role": "tool", "tool_call_id": call["id"], "content": "ok"})

    async def main() -> list[str]:
        async with httpx.AsyncClient(base_url=fake_llm.base_url()) as client:
            return await asyncio.gather(*(session(client, f"s{i}") for i in range(20)))

    assert asyncio.run(main()) == [f"finished s{i}" for i in range(20)]
    assert len(fake_llm.requests) == 20 * (steps + 1)
    assert {q.reply_source for q in fake_llm.requests} == {"responder"}


def test_async_responder_and_fallthrough_to_default(fake_llm: FakeLLM) -> None:
    async def responder(req: RecordedRequest) -> Reply | None:
        await asyncio.sleep(0)
        return fakellm.text("dynamic") if req.json["input"] == "dyn" else None

    fake_llm.set_responder(responder)
    fake_llm.set_default(fakellm.text("fallback"))
    url = fake_llm.base_url() + "/responses"
    assert first_text(HTTP.post(url, json={**RESPONSES, "input": "dyn"}).json()) == "dynamic"
    assert first_text(HTTP.post(url, json=RESPONSES).json()) == "fallback"
    assert [q.reply_source for q in fake_llm.requests] == ["responder", "default"]


def test_responder_exception_is_a_loud_500(fake_llm: FakeLLM) -> None:
    def responder(req: RecordedRequest) -> Reply:
        raise KeyError("oops")

    fake_llm.set_responder(responder)
    r = HTTP.post(fake_llm.base_url() + "/messages", json=ANTHROPIC)
    assert r.status_code == 500 and "responder raised KeyError" in r.json()["error"]["message"]


# Recording -----------------------------------------------------------------------------------


def test_requests_are_recorded_in_full(fake_llm: FakeLLM) -> None:
    reply = fakellm.text("x")
    fake_llm.script(reply)
    raw = json.dumps({**ANTHROPIC, "stream": True}).encode()
    headers = {
        "X-Api-Key": "k",
        "Anthropic-Version": "2023-06-01",
        "content-type": "application/json",
    }
    HTTP.post(fake_llm.base_url() + "/messages?beta=true", content=raw, headers=headers)
    HTTP.get(fake_llm.base_url() + "/models")
    rec, models = fake_llm.requests
    assert (rec.index, rec.method, rec.path, rec.query) == (0, "POST", "/v1/messages", "beta=true")
    assert rec.headers["x-api-key"] == "k" and rec.headers["anthropic-version"] == "2023-06-01"
    assert rec.body == raw and rec.json == {**ANTHROPIC, "stream": True}
    assert rec.wire == "anthropic" and rec.stream and rec.model == "claude-sonnet-4-5"
    assert rec.reply is reply and rec.reply_source == "queue" and rec.status == 200
    assert rec.cache is not None and rec.cache.prompt_tokens > 0
    assert (models.index, models.wire, models.status) == (1, None, 200)
    assert models.arrived >= rec.arrived


def test_wait_for_requests_syncs_with_another_thread(fake_llm: FakeLLM) -> None:
    fake_llm.set_default(fakellm.text("x"))

    def client() -> None:
        time.sleep(0.05)
        for _ in range(2):
            HTTP.post(fake_llm.base_url() + "/chat/completions", json=CHAT)

    thread = threading.Thread(target=client)
    thread.start()
    got = fake_llm.wait_for_requests(2, timeout=5)
    thread.join()
    assert len(got) == 2 and all(q.status == 200 for q in got)
    with pytest.raises(TimeoutError, match="2 request\\(s\\) recorded, expected 3"):
        fake_llm.wait_for_requests(3, timeout=0.05)


def test_reset_forgets_everything(fake_llm: FakeLLM) -> None:
    fake_llm.cache_config.openai_min_tokens = 0
    fake_llm.script(fakellm.text("a"), fakellm.text("b"))
    fake_llm.set_default(fakellm.text("d"))
    HTTP.post(fake_llm.base_url() + "/responses", json=RESPONSES)
    fake_llm.reset()
    assert fake_llm.requests == [] and fake_llm.replies_left == 0
    fake_llm.script(fakellm.text("c"))
    data = HTTP.post(fake_llm.base_url() + "/responses", json=RESPONSES).json()
    assert first_text(data) == "c"
    assert data["usage"]["input_tokens_details"]["cached_tokens"] == 0  # the cache was cleared
    assert HTTP.post(fake_llm.base_url() + "/responses", json=RESPONSES).status_code == 500


def test_keep_alive_reuses_one_connection(fake_llm: FakeLLM) -> None:
    fake_llm.set_default(fakellm.text("x"))
    with httpx.Client(base_url=fake_llm.base_url()) as client:
        for path, body in [("/messages", ANTHROPIC), ("/responses", RESPONSES)] * 3:
            client.post(path, json={**body, "stream": True}).raise_for_status()
            client.post(path, json=body).raise_for_status()
    assert fake_llm.connections_opened == 1


def test_unknown_route_is_404(fake_llm: FakeLLM) -> None:
    r = HTTP.post(fake_llm.url + "/v1/v1/messages", json=ANTHROPIC)
    assert r.status_code == 404
    assert r.json()["error"]["message"] == "fakellm: no route for POST /v1/v1/messages"


def test_count_tokens(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("x"))
    counted = HTTP.post(fake_llm.base_url() + "/messages/count_tokens", json=ANTHROPIC).json()
    HTTP.post(fake_llm.base_url() + "/messages", json=ANTHROPIC)
    cache = fake_llm.requests[1].cache
    assert cache is not None and counted == {"input_tokens": cache.prompt_tokens}
    assert fake_llm.requests[0].cache is None  # counting tokens does not touch the cache


def test_chunked_request_body_is_read(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("ok"))
    parts = iter([json.dumps(ANTHROPIC)[:10].encode(), json.dumps(ANTHROPIC)[10:].encode()])
    r = HTTP.post(fake_llm.base_url() + "/messages", content=parts)
    assert r.status_code == 200 and fake_llm.requests[0].json == ANTHROPIC


# Validation ----------------------------------------------------------------------------------


def test_anthropic_rejects_tool_use_without_result(fake_llm: FakeLLM) -> None:
    fake_llm.script(fakellm.text("x"))
    use = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}
    body = {
        **ANTHROPIC,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": "no result"},
        ],
    }
    r = HTTP.post(fake_llm.base_url() + "/messages", json=body)
    assert r.status_code == 400
    assert r.json()["error"]["type"] == "invalid_request_error"
    assert "`tool_use` ids were found without `tool_result`" in r.json()["error"]["message"]
    assert fake_llm.replies_left == 1
    fake_llm.validate = False
    assert HTTP.post(fake_llm.base_url() + "/messages", json=body).status_code == 200


def test_anthropic_rejects_missing_max_tokens(fake_llm: FakeLLM) -> None:
    body = {k: v for k, v in ANTHROPIC.items() if k != "max_tokens"}
    r = HTTP.post(fake_llm.base_url() + "/messages", json=body)
    assert (r.status_code, r.json()["error"]["message"]) == (400, "max_tokens: Field required")


def test_chat_rejects_orphan_tool_message(fake_llm: FakeLLM) -> None:
    body = {**CHAT, "messages": [{"role": "tool", "tool_call_id": "c1", "content": "x"}]}
    r = HTTP.post(fake_llm.base_url() + "/chat/completions", json=body)
    assert r.status_code == 400
    assert "role 'tool' must be a response" in r.json()["error"]["message"]


def test_responses_rejects_output_without_call(fake_llm: FakeLLM) -> None:
    body = {**RESPONSES, "input": [{"type": "function_call_output", "call_id": "c9", "output": ""}]}
    r = HTTP.post(fake_llm.base_url() + "/responses", json=body)
    assert r.status_code == 400
    assert r.json()["error"]["message"] == (
        "No tool call found for function call output with call_id c9."
    )


def test_non_json_body_is_400(fake_llm: FakeLLM) -> None:
    r = HTTP.post(fake_llm.base_url() + "/responses", content=b"{nope")
    assert r.status_code == 400 and "not a JSON object" in r.json()["error"]["message"]


# Lifecycle -----------------------------------------------------------------------------------


def test_start_binds_loopback_and_stop_closes_the_port() -> None:
    server = FakeLLM().start()
    try:
        assert server.url.startswith("http://127.0.0.1:")
        assert server.base_url("openai-chat") == server.url + "/v1"
        assert HTTP.get(server.base_url() + "/models").status_code == 200
    finally:
        server.stop()
    with pytest.raises(httpx.ConnectError):
        HTTP.get(server.base_url() + "/models")


async def test_async_mode_runs_on_the_callers_loop() -> None:
    async with FakeLLM(fakellm.text("hi")) as server:
        async with httpx.AsyncClient() as client:
            task = asyncio.create_task(client.post(server.base_url() + "/messages", json=ANTHROPIC))
            got = await server.wait_for_requests_async(1, timeout=5)
            assert first_text((await task).json()) == "hi"
        assert got[0].wire == "anthropic"
        with pytest.raises(RuntimeError, match="wait_for_requests_async"):
            server.wait_for_requests(1)


def test_stop_ends_a_stream_in_progress() -> None:
    server = FakeLLM(fakellm.text("slow " * 50, chunk_size=1, delay=0.05)).start()
    with HTTP.stream(
        "POST", server.base_url() + "/messages", json={**ANTHROPIC, "stream": True}
    ) as r:
        server.wait_for_requests(1)
        server.stop()
        with pytest.raises(httpx.TransportError):
            for _ in r.iter_raw():
                pass


# JSON script ---------------------------------------------------------------------------------


def test_json_script_round_trip() -> None:
    reply = fakellm.reply(
        fakellm.Reasoning("r", signature="s", encrypted_content="e"),
        "t",
        fakellm.ToolCall("bash", {"script": "true"}, id="c1"),
        fakellm.ToolCall("bad", "{not json"),
        usage=fakellm.Usage(input_tokens=3, cache_read_tokens=2),
        stop_reason="max_tokens",
        chunk_size=3,
        delay=0.5,
        first_byte_delay=0.25,
        disconnect=fakellm.Disconnect(10, reset=True),
        malformed=fakellm.Malformed(2),
        stream_error=fakellm.StreamError(4, "m", "c", "error"),
        wire="openai-chat",
        model="m",
        headers={"x-a": "1"},
        label="L",
    )
    data = json.loads(json.dumps(fakellm.reply_to_json(reply)))
    assert fakellm.reply_from_json(data) == reply
    err = fakellm.error(429, {"error": {"message": "slow"}}, retry_after=3, label="e")
    assert fakellm.reply_from_json(fakellm.reply_to_json(err)) == err


def test_json_script_file_with_replay_relative_path(tmp_path: Path) -> None:
    (tmp_path / "rec.txt").write_bytes(b"event: x\ndata: {}\n\n")
    script = {
        "models": ["m1"],
        "cache": {"openai_min_tokens": 0},
        "default": "fallback",
        "replies": ["plain", {"replay": "rec.txt"}, {"error": {"status": 529}}],
    }
    (tmp_path / "s.json").write_text(json.dumps(script))
    loaded = fakellm.load_script(tmp_path / "s.json")
    assert loaded.models == ["m1"] and loaded.cache == {"openai_min_tokens": 0}
    assert loaded.default == fakellm.text("fallback")
    assert loaded.replies[0] == fakellm.text("plain")
    assert loaded.replies[1].replay is not None
    assert loaded.replies[1].replay.data == b"event: x\ndata: {}\n\n"
    assert loaded.replies[2].error == fakellm.HttpError(529)
    server = FakeLLM.from_script(loaded)
    assert server.models == ["m1"] and server.cache_config.openai_min_tokens == 0
    assert server.replies_left == 3


@pytest.mark.parametrize(
    ("script", "message"),
    [
        ({"replies": [{"txt": "x"}]}, "replies[0]: unknown key(s) 'txt'"),
        ({"replies": [{"content": [{"type": "image"}]}]}, "replies[0].content[0]: content item"),
        ({"replies": [{"chunk_size": True}]}, "replies[0].chunk_size: expected int"),
        ({"replies": [{"wire": "bedrock"}]}, "replies[0]: unknown wire 'bedrock'"),
        ({"replies": [{"text": "x", "error": {"status": 500}}]}, "an error or replay reply"),
        ({"replies": [{"replay": "missing.txt"}]}, "no such file"),
    ],
)
def test_json_script_errors_name_the_place(
    tmp_path: Path, script: dict[str, Any], message: str
) -> None:
    with pytest.raises(fakellm.ScriptError) as info:
        fakellm.script_from_json(script, base_dir=tmp_path)
    assert message in str(info.value)
