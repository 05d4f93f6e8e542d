"""A compaction in a fresh process (field report C1): `xum run` leaves a workspace whose history
holds a bash call with a long output and whose context is past the auto-compaction threshold;
`xum run -w last` in a second process compacts before sending its message. The summarization
request carries the history as a plain transcript and declares no tools, which the fake server
checks the way Anthropic does (tool blocks without declared tools are refused with a 400)."""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

from tests.e2e.cli import env_for, events, run_xum
from xum.store import compaction_config as cc
from xum.store.config import update_config
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.fakellm.record import RecordedRequest

MODEL = "anthropic:claude-sonnet-5-5"
WINDOW = 40_000


def _is_compaction(request: RecordedRequest) -> bool:
    return any('<agent id="compact"' in b["text"] for b in request.json.get("system", []))


def _blocks(request: RecordedRequest) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for message in request.json["messages"]:
        content = message["content"]
        out.extend([{"type": "text", "text": content}] if isinstance(content, str) else content)
    return out


def test_a_second_process_compacts_a_history_of_tool_calls(fake_llm: FakeLLM, repo: Path) -> None:
    def small_window(config: dict[str, Any]) -> None:
        config[cc.CONTEXT_WINDOWS_KEY] = {MODEL: WINDOW}

    update_config(small_window)
    script = "python3 -c \"print('long output line ' * 1500)\""
    # The final reply reports 72% of the window in use: past the 70% threshold, short of the
    # 75% that would compact in the middle of this first turn.
    past_threshold = fakellm.Usage(
        input_tokens=int(WINDOW * 0.72), cache_read_tokens=0, cache_write_tokens=0
    )
    fake_llm.script(
        fakellm.tool_call("bash", {"script": script, "display_name": "print"}),
        fakellm.text("printed it", usage=past_threshold),
    )
    first = run_xum("run", "--json", "-m", MODEL, "print a lot", cwd=repo, env=env_for(fake_llm))
    assert first.returncode == 0, first.stderr
    assert "compaction" not in [e["type"] for e in events(first.stdout)]

    def respond(request: RecordedRequest) -> fakellm.Reply:
        if _is_compaction(request):
            return fakellm.text("SUMMARY: printed a long line with bash.")
        return fakellm.text("carried on")

    fake_llm.set_responder(respond)
    second = run_xum("run", "--json", "-w", "last", "go on", cwd=repo, env=env_for(fake_llm))
    assert second.returncode == 0, second.stderr
    out = events(second.stdout)
    assert [e["type"] for e in out if e["type"].startswith("compaction")] == [
        "compaction-start",
        "compaction",
    ]
    assert out[-1]["type"] == "final" and out[-1]["text"] == "carried on"

    (summary_request,) = [r for r in fake_llm.requests if _is_compaction(r)]
    assert summary_request.status == 200
    body = summary_request.json
    assert "tools" not in body and "tool_choice" not in body
    blocks = _blocks(summary_request)
    assert {b["type"] for b in blocks} == {"text"}  # no tool_use, tool_result or thinking
    written = "\n".join(b["text"] for b in blocks)
    assert "[tool call bash (" in written and "long output line" in written
    assert "[tool result of bash (" in written
    roles = [m["role"] for m in body["messages"]]
    assert all(a != b for a, b in itertools.pairwise(roles))  # roles alternate
