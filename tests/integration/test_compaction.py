"""Manual compaction, /clear and Start Here through the engine (the path every front-end uses),
with a real workspace context and the fake LLM server over HTTP."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.contextkit import bump, write
from tests.integration.context_harness import (
    ContextHarness,
    assert_prefix_chain,
    system_of,
    texts_of,
)
from xum.context import compaction as texts
from xum.core.errors import UsageError
from xum.store import compaction_config as cc
from xum.store import frame_types as ev
from xum.store.config import read_config
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.fakellm.record import RecordedRequest

pytestmark = pytest.mark.repo(untracked={"AGENTS.md": "Run the tests first.\n"})


def is_compaction(request: RecordedRequest) -> bool:
    return '<agent id="compact"' in system_of(request)


def summarizing(summary: str = "SUMMARY: the user wants a parser.") -> Any:
    """A responder: summarization requests get `summary`, the rest a plain reply."""

    def respond(request: RecordedRequest) -> fakellm.Reply:
        return fakellm.text(summary if is_compaction(request) else "ok")

    return respond


def frames(ws_id: str) -> list[Any]:
    return list(SessionLog.open(ws_id).frames)


def kinds(ws_id: str) -> list[str]:
    return [f.type for f in frames(ws_id)]


@pytest.fixture
async def harness(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> AsyncIterator[ContextHarness]:
    # `-m` resolves models the way the CLI and the server do: from the environment.
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    h = ContextHarness(fake_llm, repo)
    yield h
    await h.close()


async def test_compact_summarizes_and_the_next_request_starts_from_the_summary(
    fake_llm: FakeLLM, harness: ContextHarness
) -> None:
    fake_llm.set_responder(summarizing())
    session = harness.session()
    await session.run_turn("build a parser for INI files")
    await session.run_turn("now add comments support")
    result = await session.run_turn("/compact")
    assert result.reason == "completed" and result.kind == "compaction"
    assert result.text == "SUMMARY: the user wants a parser."
    await session.run_turn("what next?")

    summary_request, after = fake_llm.requests[2], fake_llm.requests[3]
    # The compact agent's own instructions, the whole history, then the summary instructions.
    assert is_compaction(summary_request)
    assert "Run the tests first." not in system_of(summary_request)
    body = summary_request.json
    assert "tools" not in body and "tool_choice" not in body  # the history is a transcript
    sent = texts_of(summary_request)
    assert sent[0] == "build a parser for INI files" and "now add comments support" in sent
    assert "about 2000 words" in sent[-1]
    # The next request: a fresh segment from the summary alone.
    assert texts_of(after)[0] == texts.COMPACTION_LEAD + "SUMMARY: the user wants a parser."
    assert not any("INI files" in t for t in texts_of(after))
    assert texts_of(after)[-1] == "what next?"

    log = frames(harness.ws_id)
    boundary = next(f for f in log if f.type == ev.COMPACTION)
    assert boundary.data["trigger"] == "manual"
    assert boundary.data["model"] == "anthropic:claude-sonnet-5-5"
    assert boundary.data["usage"]["output_tokens"] > 0
    start = next(f for f in log if f.type == ev.COMPACTION_START)
    assert start.seq < boundary.seq and boundary.data["through_seq"] < start.seq
    reasons = [f.data["reason"] for f in log if f.type == ev.CONTEXT_FROZEN]
    assert reasons == ["start", "compaction"]
    types = [e["type"] for e in harness.events]
    assert "compaction-start" in types and "compaction" in types
    # The summarization streamed no reply deltas: the transcript shows no assistant text.
    assert not any(e["type"] == "text-delta" and "SUMMARY" in e["text"] for e in harness.events)


async def test_tokens_model_and_the_continue_message(
    fake_llm: FakeLLM, harness: ContextHarness
) -> None:
    fake_llm.set_responder(summarizing())
    session = harness.session()
    await session.run_turn("hello")
    result = await session.run_turn("/compact -t 1000 -m haiku\nKeep going\nwith the tests")
    summary_request, follow = fake_llm.requests[1], fake_llm.requests[2]
    assert summary_request.json["model"] == "claude-haiku-5-5"
    assert summary_request.json["max_tokens"] == 1000
    assert "about 750 words" in texts_of(summary_request)[-1]
    assert follow.json["model"] == "claude-sonnet-5-5"  # the workspace keeps its model
    assert texts_of(follow)[-1] == "Keep going\nwith the tests"
    assert result.kind == "agent" and result.usage.output_tokens > 1  # both turns counted
    # -m is remembered: the next /compact uses haiku again, in any workspace.
    assert read_config()[cc.COMPACTION_MODEL_KEY] == "anthropic:claude-haiku-5-5"
    await session.run_turn("more")
    await session.run_turn("/compact")
    assert fake_llm.requests[-1].json["model"] == "claude-haiku-5-5"
    assert fake_llm.requests[-1].json.get("max_tokens") != 1000  # -t is not remembered


async def test_project_and_global_compact_agents_customize_the_prompt(
    fake_llm: FakeLLM, harness: ContextHarness, repo: Path, xum_root: Path
) -> None:
    fake_llm.set_responder(summarizing())
    write(
        xum_root / "agents/compact.md",
        "---\nname: Compact\nbase: compact\n---\nKeep exact file paths.\n",
    )
    session = harness.session()
    await session.run_turn("hello")
    await session.run_turn("/compact")
    appended = system_of(fake_llm.requests[-1])
    assert "Keep exact file paths." in appended and "no tools in this pass" in appended
    write(
        repo / ".xum/agents/compact.md",
        "---\nname: Compact\nbase: compact\nprompt:\n  append: false\n---\nFive bullets.\n",
    )
    await session.run_turn("again")
    await session.run_turn("/compact")
    replaced = system_of(fake_llm.requests[-1])
    assert "Five bullets." in replaced and "no tools in this pass" not in replaced


async def test_a_boundary_folds_pending_changes_and_each_segment_is_a_prefix_chain(
    fake_llm: FakeLLM, harness: ContextHarness, repo: Path
) -> None:
    fake_llm.set_responder(summarizing())
    session = harness.session()
    await session.run_turn("one")
    write(repo / "AGENTS.md", "Folded at the compaction.\n")
    bump(repo / "AGENTS.md")
    await session.run_turn("two")  # the edit travels as a change row
    await session.run_turn("three")
    await session.run_turn("/compact")
    await session.run_turn("four")
    await session.run_turn("five")
    normal = [r for r in fake_llm.requests if not is_compaction(r)]
    before, after = normal[:3], normal[3:]
    assert_prefix_chain(before)
    assert_prefix_chain(after)
    assert "<context-update>" in "".join(texts_of(before[1]))
    assert "Folded at the compaction." not in system_of(before[2])
    assert "Folded at the compaction." in system_of(after[0])  # folded into the new segment
    assert not any("<context-update>" in t for t in texts_of(after[0]))


async def test_a_failed_compaction_keeps_the_old_context(
    fake_llm: FakeLLM, harness: ContextHarness
) -> None:
    session = harness.session()
    fake_llm.script(
        fakellm.text("first answer"),
        fakellm.error(500),
        fakellm.text("   "),  # a summary with nothing in it
        fakellm.text("still here"),
    )
    await session.run_turn("remember the word pineapple")
    failed = await session.run_turn("/compact")
    assert failed.reason == "error" and failed.error is not None
    empty = await session.run_turn("/compact")
    assert empty.reason == "error" and "without a summary" in (empty.error or {})["message"]
    await session.run_turn("what was the word?")
    assert "remember the word pineapple" in texts_of(fake_llm.requests[-1])
    assert ev.COMPACTION not in kinds(harness.ws_id)
    ends = [f.data["reason"] for f in frames(harness.ws_id) if f.type == ev.TURN_END]
    assert ends == ["completed", "error", "error", "completed"]


async def test_nothing_to_compact_and_bad_options_write_nothing(
    fake_llm: FakeLLM, harness: ContextHarness
) -> None:
    session = harness.session()
    with pytest.raises(UsageError, match="nothing to compact"):
        await session.run_turn("/compact")
    for bad in ("/compact -t lots", "/compact -x", "/compact -m", "/clear --hard"):
        with pytest.raises(UsageError):
            await session.run_turn(bad)
    assert kinds(harness.ws_id) == []
    assert fake_llm.requests == []
    fake_llm.set_responder(summarizing())
    await session.run_turn("hi")
    await session.run_turn("/compact")
    with pytest.raises(UsageError, match="already just a summary"):
        await session.run_turn("/compact")


async def test_soft_clear_forgets_for_the_model_and_repeats_are_no_ops(
    fake_llm: FakeLLM, harness: ContextHarness
) -> None:
    fake_llm.set_default(fakellm.text("ok"))
    session = harness.session()
    assert (await session.run_turn("/clear --soft")).reason == "completed"  # empty: a no-op
    assert kinds(harness.ws_id) == []
    await session.run_turn("the secret is 42")
    await session.run_turn("/clear --soft")
    await session.run_turn("/clear --soft")  # repeated: a no-op
    await session.run_turn("what is the secret?")
    resets = [f for f in frames(harness.ws_id) if f.type == ev.CONTEXT_RESET]
    assert [r.data for r in resets] == [{"reason": "clear"}]
    last = fake_llm.requests[-1]
    assert texts_of(last) == ["what is the secret?"]  # no note that a reset happened either
    reasons = [f.data["reason"] for f in frames(harness.ws_id) if f.type == ev.CONTEXT_FROZEN]
    assert reasons == ["start", "context_reset"]


async def test_hard_clear_also_empties_the_task_list(
    fake_llm: FakeLLM, harness: ContextHarness
) -> None:
    todos = {"todos": [{"content": "write the parser", "status": "in_progress"}]}
    fake_llm.script(fakellm.tool_call("todo_write", todos), fakellm.text("planned"))
    session = harness.session()
    await session.run_turn("plan it")
    assert [t.content for t in session.todos] == ["write the parser"]
    await session.run_turn("/clear")
    assert session.todos == []
    reset = next(f for f in frames(harness.ws_id) if f.type == ev.CONTEXT_RESET)
    assert reset.data == {"reason": "clear", "hard": True}
    assert harness.session().todos == []  # and after a restart
    await session.run_turn("/clear")  # nothing shown since: a no-op
    assert kinds(harness.ws_id).count(ev.CONTEXT_RESET) == 1
    event = next(e for e in harness.events if e["type"] == "context-reset")
    assert event["hard"] is True and event["reason"] == "clear"


async def test_start_here_on_a_final_reply(fake_llm: FakeLLM, harness: ContextHarness) -> None:
    fake_llm.script(
        fakellm.tool_call("bash", {"script": "true", "display_name": "check"}),
        fakellm.text("The design: a tokenizer, then a recursive parser."),
        fakellm.text("ok"),
    )
    session = harness.session()
    await session.run_turn("design it")
    log = frames(harness.ws_id)
    with_calls, final = [f for f in log if f.type == ev.ASSISTANT_MESSAGE]
    with pytest.raises(UsageError, match="final reply or a proposed plan"):
        await session.compactor.start_here(with_calls.seq)
    seq = await session.compactor.start_here(final.seq)
    await session.run_turn("implement it")
    sent = texts_of(fake_llm.requests[-1])
    assert sent == [
        texts.REPLY_LEAD + "The design: a tokenizer, then a recursive parser.",
        "implement it",
    ]
    boundary = frames(harness.ws_id)[seq - 1]
    assert boundary.data["trigger"] == "start_here" and boundary.data["source_seq"] == final.seq
    assert "usage" not in boundary.data  # instant and free
    assert len(fake_llm.requests) == 3


async def test_goals_are_only_offered_where_a_front_end_continues_them(
    fake_llm: FakeLLM, harness: ContextHarness
) -> None:
    fake_llm.set_default(fakellm.text("ok"))
    session = harness.session()  # no goals: like a sub-agent or an embedded session
    await session.run_turn("hi")
    tools = {t["name"] for t in fake_llm.requests[0].json["tools"]}
    assert not tools & {"set_goal", "get_goal", "complete_goal"}
    with pytest.raises(UsageError, match="goals are not available"):
        await session.run_turn("/goal do it")
    with_goals = harness.session(goals=True)
    await with_goals.run_turn("again")
    assert {"set_goal", "get_goal", "complete_goal"} <= {
        t["name"] for t in fake_llm.requests[-1].json["tools"]
    }
