"""The pieces of compaction that need no model: parsing the commands, the word target, fitting an
overlong history into one request, and the context meter following a log."""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.history import assert_valid
from xum.context import compaction as texts
from xum.context.slash import (
    ClearCommand,
    CompactCommand,
    IdleCommand,
    SlashError,
    parse_command,
)
from xum.core.messages import Message, text_message
from xum.engine.contextmeter import AutoCompactPolicy, ContextMeter, estimate_tokens
from xum.store import frame_types as ev
from xum.store.sessionlog import SessionLog


def test_compact_clear_and_idle_parse() -> None:
    assert parse_command("/compact") == CompactCommand(None, None, None, "/compact")
    typed = "/compact -m haiku -t 8000\nKeep working\n  on it"
    assert parse_command(typed) == CompactCommand(8000, "haiku", "Keep working\n  on it", typed)
    assert parse_command("/clear") == ClearCommand(False, "/clear")
    assert parse_command("/clear --soft") == ClearCommand(True, "/clear --soft")
    assert parse_command("/idle 24") == IdleCommand(24.0, "/idle 24")
    assert parse_command("/idle 0.5") == IdleCommand(0.5, "/idle 0.5")
    assert parse_command("/idle OFF") == IdleCommand(None, "/idle OFF")
    assert parse_command("/compaction is a word") is None  # not the command
    for bad in (
        "/compact -t",
        "/compact -t 10",
        "/compact -t 5k",
        "/compact --model x",
        "/compact now",
        "/clear --hard",
        "/clear\nmore",
        "/idle",
        "/idle never",
        "/idle 0",
        "/idle 1 2",
    ):
        with pytest.raises(SlashError):
            parse_command(bad)


def test_the_word_target_follows_the_token_limit() -> None:
    assert texts.target_words(None) == 2000
    assert texts.target_words(8000) == 6000
    assert texts.target_words(100) == 70
    assert "about 6000 words" in texts.instructions(texts.target_words(8000))


def _call(i: int) -> list[Message]:
    call: Message = {
        "role": "assistant",
        "content": [{"type": "tool_call", "id": f"c{i}", "name": "bash", "arguments": "{}"}],
    }
    result = ev.tool_result_message(f"c{i}", "bash", "y" * 300, is_error=False)
    return [call, result]


def test_fit_history_cuts_inside_a_tool_loop_without_splitting_calls() -> None:
    history: list[Message] = [text_message("user", "go")]
    for i in range(20):
        history.extend(_call(i))
    history.append(text_message("assistant", "done"))
    assert texts.fit_history(history, 10**6, estimate_tokens) == history
    total = sum(estimate_tokens(m) for m in history)
    fitted = texts.fit_history(history, total // 3, estimate_tokens)
    assert fitted[0]["content"][0]["text"] == texts.TRIMMED_NOTE
    assert fitted[1]["role"] == "assistant" and fitted[-1] == history[-1]
    assert sum(estimate_tokens(m) for m in fitted) <= total // 3
    assert_valid(fitted)
    assert texts.fit_history(history, 10, estimate_tokens) == []


def _frames(log: SessionLog, *specs: tuple[str, dict[str, Any]]) -> None:
    log.append_many(list(specs))


def test_the_meter_prefers_the_providers_count_and_restarts_at_boundaries() -> None:
    log = SessionLog.open("ws-meter")
    meter = ContextMeter()
    frozen = {"system": "s" * 300, "tools": []}
    _frames(
        log,
        (ev.CONTEXT_FROZEN, frozen),
        (ev.USER_MESSAGE, {"message": text_message("user", "x" * 600)}),
    )
    estimated = meter.update(log)
    assert meter.estimated and estimated >= 300  # ~900 bytes at 3 bytes a token
    reply = {
        "message": text_message("assistant", "ok"),
        "usage": {"input_tokens": 250, "output_tokens": 5},
    }
    _frames(log, (ev.ASSISTANT_MESSAGE, reply))
    assert meter.update(log) == 255 and not meter.estimated
    result = ev.tool_result_message("c", "bash", "z" * 90, is_error=False)
    _frames(log, (ev.TOOL_RESULT, {"message": result}))
    assert 255 < meter.update(log) < 255 + 100  # the result is estimated on top
    _frames(log, (ev.COMPACTION, {"summary": "short"}))
    assert meter.update(log) == estimate_tokens(ev.summary_message("short"))
    _frames(log, (ev.CONTEXT_RESET, {}))
    assert meter.update(log) == 0 and meter.messages == 0


def test_the_policy_limits() -> None:
    assert AutoCompactPolicy(100_000, 70).limit == 70_000
    assert AutoCompactPolicy(100_000, 70).force_limit == 75_000
    assert AutoCompactPolicy(100_000, 100).limit is None
    assert AutoCompactPolicy(None, 70).force_limit is None


def test_idle_eligibility() -> None:
    from xum.host.idlecompact import eligible

    log = SessionLog.open("ws-idle")
    _frames(
        log,
        (ev.USER_MESSAGE, {"message": text_message("user", "hi")}),
        (ev.ASSISTANT_MESSAGE, {"message": text_message("assistant", "hello")}),
    )
    last = log.frames[-1].ts
    hour = 3_600_000
    assert not eligible(log.frames, 2, last + hour)  # idle for one hour of two
    assert eligible(log.frames, 2, last + 2 * hour)
    assert not eligible([], 2, last + 2 * hour)
    _frames(log, (ev.COMPACTION, {"summary": "s", "trigger": "idle"}))
    assert not eligible(log.frames, 2, log.frames[-1].ts + 3 * hour)  # already compacted
    _frames(log, (ev.USER_MESSAGE, {"message": text_message("user", "again")}))
    assert eligible(log.frames, 2, log.frames[-1].ts + 3 * hour)
    _frames(log, (ev.CONTEXT_RESET, {"reason": "clear"}))
    assert not eligible(log.frames, 2, log.frames[-1].ts + 3 * hour)  # nothing to summarize


def test_goal_parses() -> None:
    from xum.context.slash import GoalCommand

    assert parse_command("/goal make it fast") == GoalCommand(
        "make it fast", None, None, "/goal make it fast"
    )
    typed = "/goal --budget $5 --turns 10 ship the migration\nwith tests"
    assert parse_command(typed) == GoalCommand("ship the migration\nwith tests", 500, 10, typed)
    assert parse_command("/goal --budget 250c x").budget_cents == 250  # type: ignore[union-attr]
    assert parse_command("/goal clear") == GoalCommand(None, None, None, "/goal clear")
    for bad in (
        "/goal",
        "/goal --turns",
        "/goal --turns 0 x",
        "/goal --budget free x",
        "/goal --budget 5",
    ):
        with pytest.raises(SlashError):
            parse_command(bad)


def test_money() -> None:
    from xum.core.money import parse_cents

    assert [parse_cents(t) for t in ("$5", "5.00", "500c", "5", " $0.5 ", "1c")] == [
        500,
        500,
        500,
        500,
        50,
        1,
    ]
    for bad in ("", "five", "0", "0.001", "-3", "$5c5"):
        with pytest.raises(ValueError):
            parse_cents(bad)
