"""The ACP bridge's pure parts: how events, tool results and prompts translate, and the update
pump's ordering and coalescing. The end-to-end behaviour is in tests/e2e/test_acp.py."""

from __future__ import annotations

import asyncio

import pytest
from acp import text_block
from acp.helpers import update_agent_message_text, update_agent_thought_text, update_tool_call
from acp.schema import (
    BlobResourceContents,
    EmbeddedResourceContentBlock,
    ImageContentBlock,
    ResourceContentBlock,
    TextResourceContents,
)

from xum.acp import toolviews as views
from xum.acp.prompt import prompt_text
from xum.acp.pump import UpdatePump
from xum.acp.updates import SessionUpdate, UpdateTranslator
from xum.core.errors import UsageError
from xum.engine import events as E
from xum.tools.editing import compact_diff


def test_a_compact_diff_becomes_one_acp_diff_per_hunk() -> None:
    old = "".join(f"line {i}\n" for i in range(1, 30))
    new = old.replace("line 3\n", "line three\n").replace("line 25\n", "")
    diffs = views.diff_contents("/w/a.txt", compact_diff("a.txt", old, new))
    assert len(diffs) == 2
    first, second = diffs
    assert first.path == "/w/a.txt"
    assert "line 3\n" in first.old_text and "line three\n" in first.new_text
    assert "line 3\n" not in first.new_text
    assert "line 25\n" in second.old_text and "line 25\n" not in second.new_text


def test_a_new_file_has_no_old_text_and_a_missing_final_newline_is_kept() -> None:
    (diff,) = views.diff_contents("/w/new.py", compact_diff("new.py", "", "print(1)"))
    assert diff.old_text is None
    assert diff.new_text == "print(1)"
    (changed,) = views.diff_contents("/w/x", compact_diff("x", "a\nb", "a\nc"))
    assert changed.old_text == "a\nb" and changed.new_text == "a\nc"


def test_a_cut_diff_shows_what_it_has() -> None:
    diff = "@@ -1,2 +1,2 @@\n-a\n+b\n[... diff truncated ...]\n"
    (only,) = views.diff_contents("/w/x", diff)
    assert only.old_text == "a\n" and only.new_text == "b\n"


def test_output_is_fenced_longer_than_its_own_backticks_and_bounded() -> None:
    text = "before\n````\ninside\n````\nafter"
    fenced = views.fenced(text)
    assert fenced.startswith("`````\n") and fenced.endswith("\n`````")
    big = views.fenced("x" * (views.MAX_TEXT_CHARS + 10))
    assert "earlier output not shown" in big and len(big) < views.MAX_TEXT_CHARS + 100


def test_titles_kinds_and_locations() -> None:
    assert views.tool_title("bash", {"script": "make test\nmore", "display_name": None}) == (
        "bash: make test"
    )
    assert views.tool_title("bash", {"script": "x", "display_name": "tests"}) == "bash: tests"
    assert views.tool_title("file_edit_insert", {"path": "a.py"}) == "Insert into a.py"
    assert views.tool_title("some_mcp_tool", {"q": 1}) == "some_mcp_tool"
    assert views.tool_kind("bash") == "execute" and views.tool_kind("unknown") == "other"
    (loc,) = views.call_locations("file_read", {"path": "src/a.py", "offset": 7}, "/w")
    assert loc.path == "/w/src/a.py" and loc.line == 7
    assert views.call_locations("bash", {"path": "a"}, "/w") == []


def test_prompt_blocks_become_one_message() -> None:
    blocks = [
        text_block("Look at"),
        ResourceContentBlock(type="resource_link", name="a.py", uri="file:///w/my%20a.py"),
        text_block("and fix it."),
        EmbeddedResourceContentBlock(
            type="resource",
            resource=TextResourceContents(uri="file:///w/b.py", text="x = 1\n"),
        ),
    ]
    text = prompt_text(blocks)
    assert text.startswith("Look at @/w/my a.py and fix it. @/w/b.py")
    assert text.endswith("Contents of /w/b.py:\n```\nx = 1\n```")
    assert prompt_text([text_block("hel"), text_block("lo")]) == "hello"


@pytest.mark.parametrize(
    "block",
    [
        ImageContentBlock(type="image", data="AAAA", mime_type="image/png"),
        EmbeddedResourceContentBlock(
            type="resource", resource=BlobResourceContents(uri="file:///w/x.bin", blob="AAAA")
        ),
    ],
)
def test_content_xum_cannot_send_is_refused(block: object) -> None:
    with pytest.raises(UsageError):
        prompt_text([text_block("see"), block])  # type: ignore[list-item]


def test_a_live_tool_call_goes_pending_running_done() -> None:
    t = UpdateTranslator("/w")
    start = t.live(E.ToolCallStart(index=0, call_id="c1", name="bash"))
    assert start[0].session_update == "tool_call" and start[0].status == "pending"
    assert start[0].kind == "execute"
    running = t.live(
        E.ToolCall(call_id="c1", name="bash", arguments={"script": "ls", "display_name": "list"})
    )
    assert running[0].status == "in_progress" and running[0].title == "bash: list"
    out1 = t.live(E.ToolOutput(call_id="c1", stream="output", text="a\n"))
    out2 = t.live(E.ToolOutput(call_id="c1", stream="output", text="b\n"))
    assert "a\n" in out1[0].content[0].content.text
    assert "a\nb" in out2[0].content[0].content.text  # the content is the output so far
    done = t.live(_result("c1", "bash", "a\nb\n[exit code 1]", is_error=True))
    assert done[0].status == "failed" and "[exit code 1]" in done[0].content[0].content.text
    # Output after the result (a background command's) is not shown in the finished call.
    assert t.live(E.ToolOutput(call_id="c1", stream="bash:1", text="late")) == []


def test_a_delegated_command_shows_its_terminal_not_our_output() -> None:
    t = UpdateTranslator("/w")
    t.live(E.ToolCallStart(index=0, call_id="c1", name="bash"))
    shown = t.terminal_started("c1", "term-7")
    assert shown[0].content[0].terminal_id == "term-7"
    assert t.live(E.ToolOutput(call_id="c1", stream="output", text="x")) == []
    done = t.live(_result("c1", "bash", "x\n[exit code 0]"))
    assert done[0].content[0].type == "terminal"


def test_todo_write_is_also_the_plan_and_text_is_streamed() -> None:
    t = UpdateTranslator("/w")
    todos = [{"content": "a", "status": "completed"}, {"content": "b", "status": "pending"}]
    updates = t.live(_result("c2", "todo_write", "ok", meta={"todos": todos}))
    plan = updates[-1]
    assert plan.session_update == "plan"
    assert [(e.content, e.status) for e in plan.entries] == [("a", "completed"), ("b", "pending")]
    assert t.live(E.TextDelta(text="hi"))[0].session_update == "agent_message_chunk"
    assert t.live(E.ReasoningDelta(text="hm"))[0].session_update == "agent_thought_chunk"
    assert t.live(E.TextDelta(text="")) == []
    assert "xum:" in t.live(E.Advisory(kind="doom-loop", message="stop"))[0].content.text


def test_a_replayed_history_shows_messages_and_calls() -> None:
    t = UpdateTranslator("/w")
    user = E.UserMessage(seq=1, ts=0, text="expanded skill body", typed="/deploy now")
    synthetic = E.UserMessage(seq=2, ts=0, text="context changed", synthetic=True)
    reply = E.AssistantMessage(
        seq=3,
        ts=0,
        text="Let me look.",
        reasoning="thinking",
        tool_calls=[{"id": "c1", "name": "file_read", "arguments": '{"path": "a.py"}'}],
        finish_reason="tool_calls",
        usage=None,
        cost_usd=None,
    )
    (shown_user,) = t.replayed(user)
    assert shown_user.content.text == "/deploy now"  # what the user typed
    assert t.replayed(synthetic) == []
    thought, text, call = t.replayed(reply)
    assert thought.content.text == "thinking" and text.content.text == "Let me look."
    assert call.title == "Read a.py" and call.raw_input == {"path": "a.py"}
    (done,) = t.replayed(_result("c1", "file_read", "1\tx = 1"))
    assert done.status == "completed"


async def test_the_pump_keeps_order_and_merges_text_that_piled_up() -> None:
    sent: list[SessionUpdate] = []
    gate = asyncio.Event()

    async def send(update: SessionUpdate) -> None:
        if not sent:
            await gate.wait()  # the first write is slow: later updates queue behind it
        sent.append(update)

    pump = UpdatePump(send)
    pump.push([update_agent_message_text("a")])
    await asyncio.sleep(0)  # the pump takes the first update and blocks in send
    pump.push([update_agent_message_text("b"), update_agent_message_text("c")])
    pump.push([update_agent_thought_text("t1"), update_agent_thought_text("t2")])
    pump.push([update_tool_call("c1", status="in_progress"), update_agent_message_text("d")])
    gate.set()
    await pump.drain()
    texts = [u.status if u.session_update == "tool_call_update" else u.content.text for u in sent]
    assert texts == ["a", "bc", "t1t2", "in_progress", "d"]
    await pump.close()


async def test_a_failing_send_drops_the_rest_without_blocking() -> None:
    async def send(update: SessionUpdate) -> None:
        raise ConnectionError("gone")

    pump = UpdatePump(send)
    pump.push([update_agent_message_text("a"), update_tool_call("c", status="completed")])
    await asyncio.wait_for(pump.drain(), 5)
    pump.push([update_agent_message_text("later")])
    await asyncio.wait_for(pump.drain(), 5)
    await pump.close()


def _result(
    call_id: str, name: str, output: str, *, is_error: bool = False, meta: dict | None = None
) -> E.ToolResult:
    return E.ToolResult(
        seq=9, ts=0, call_id=call_id, name=name, is_error=is_error, output=output, meta=meta or {}
    )
