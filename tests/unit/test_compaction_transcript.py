"""A summarization request carries the history as a transcript (field report C1), and the fake
server refuses, as Anthropic does, tool blocks in a request that declares no tools."""

from __future__ import annotations

import httpx

from xum.context.compaction import TRIMMED_NOTE, as_transcript, fit_history
from xum.core.messages import Message, text_message
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

HISTORY: list[Message] = [
    {"role": "user", "content": [{"type": "text", "text": "list the files"}]},
    {
        "role": "assistant",
        "content": [
            {"type": "reasoning", "text": "secret thoughts", "wire": "anthropic", "state": {}},
            {"type": "text", "text": "Looking."},
            {"type": "tool_call", "id": "toolu_1", "name": "bash", "arguments": '{"script":"ls"}'},
        ],
    },
    {
        "role": "tool",
        "content": [
            {"type": "tool_result", "call_id": "toolu_1", "name": "bash", "output": "a.py\nb.py"},
        ],
    },
    {"role": "user", "content": [{"type": "text", "text": "and the tests?"}]},
    {"role": "assistant", "content": [{"type": "reasoning", "text": "only thinking"}]},
    {
        "role": "assistant",
        "content": [
            {"type": "tool_call", "id": "toolu_2", "name": "bash", "arguments": "{bad json"},
        ],
    },
    {
        "role": "tool",
        "content": [
            {
                "type": "tool_result",
                "call_id": "toolu_2",
                "name": "bash",
                "output": "exit 2",
                "is_error": True,
            },
        ],
    },
]


def test_tool_calls_and_results_are_written_out_and_reasoning_left_out() -> None:
    out = as_transcript(HISTORY)
    assert [m["role"] for m in out] == ["user", "assistant", "user", "assistant", "user"]
    for message in out:
        assert [p["type"] for p in message["content"]] == ["text"]
    text = [m["content"][0]["text"] for m in out]  # type: ignore[typeddict-item]
    assert text[1] == 'Looking.\n\n[tool call bash (toolu_1): {"script":"ls"}]'
    # The result and the user's next words are one user message.
    assert text[2] == "[tool result of bash (toolu_1):\na.py\nb.py\n]\n\nand the tests?"
    assert text[3] == "[tool call bash (toolu_2): {bad json]"
    assert text[4] == "[tool result of bash (toolu_2) (failed):\nexit 2\n]"
    assert "secret thoughts" not in "".join(text) and "only thinking" not in "".join(text)
    assert HISTORY[1]["content"][1] == {"type": "text", "text": "Looking."}  # input untouched


def test_fitting_a_transcript_cuts_whole_messages_from_the_front() -> None:
    out = as_transcript(HISTORY)

    def measure(obj: object) -> int:
        return len(str(obj))

    note = text_message("user", TRIMMED_NOTE)
    fitted = fit_history(out, measure(note) + measure(out[-1]) + measure(out[-2]), measure)
    assert fitted == [note, out[-2], out[-1]]


def test_the_fake_server_refuses_tool_blocks_without_declared_tools(fake_llm: FakeLLM) -> None:
    fake_llm.set_default(fakellm.text("ok"))
    use = {"type": "tool_use", "id": "toolu_1", "name": "bash", "input": {}}
    result = {"type": "tool_result", "tool_use_id": "toolu_1", "content": "x"}
    body = {
        "model": "claude-test",
        "max_tokens": 100,
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": [use]},
            {"role": "user", "content": [result]},
        ],
    }
    url = fake_llm.base_url() + "/messages"
    refused = httpx.post(url, json={**body, "tools": []})
    assert refused.status_code == 400
    error = refused.json()
    assert error["type"] == "error" and error["error"]["type"] == "invalid_request_error"
    assert "must define tools" in error["error"]["message"]
    tool = {"name": "bash", "description": "run", "input_schema": {"type": "object"}}
    assert httpx.post(url, json={**body, "tools": [tool]}).status_code == 200
