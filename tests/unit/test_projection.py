"""The provider history derived from the log: boundaries, validity repairs, and the incremental
projection agreeing with a full rebuild on arbitrary logs (hypothesis)."""

from __future__ import annotations

import itertools
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from tests.support.history import assert_valid
from xum.llm.types import Message
from xum.store import frame_types as ev
from xum.store.frames import Frame
from xum.store.projection import MISSING_RESULT_OUTPUT, HistoryProjection, rebuild_history
from xum.store.sessionlog import LOG_NAME, SessionLog

_ids = itertools.count()


def user(text: str, kind: str = ev.USER_MESSAGE) -> tuple[str, dict[str, Any]]:
    return kind, {"message": {"role": "user", "content": [{"type": "text", "text": text}]}}


def assistant(text: str = "", *call_ids: str) -> tuple[str, dict[str, Any]]:
    parts: list[dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    parts += [
        {"type": "tool_call", "id": c, "name": f"tool-{c}", "arguments": "{}"} for c in call_ids
    ]
    return ev.ASSISTANT_MESSAGE, {
        "message": {"role": "assistant", "content": parts},
        "usage": {},
        "finish_reason": "tool_calls" if call_ids else "stop",
        "model": "m",
    }


def result(call_id: str, output: str = "ok") -> tuple[str, dict[str, Any]]:
    return ev.TOOL_RESULT, {
        "message": ev.tool_result_message(call_id, f"tool-{call_id}", output, is_error=False)
    }


def history_of(*events: tuple[str, dict[str, Any]]) -> list[Message]:
    log = SessionLog.open(f"ws{next(_ids)}")
    log.append_many(list(events))
    incremental = HistoryProjection().update(log)
    assert incremental == rebuild_history(log.frames)
    assert_valid(incremental)
    return incremental


def texts(history: list[Message]) -> list[str]:
    out = []
    for message in history:
        for part in message["content"]:
            if part["type"] == "text":
                out.append(part["text"])
            elif part["type"] == "tool_call":
                out.append(f"call:{part['id']}")
            elif part["type"] == "tool_result":
                out.append(f"result:{part['call_id']}:{part['output']}")
    return out


# Boundaries ----------------------------------------------------------------------------------------


def test_compaction_restarts_the_history_with_its_summary() -> None:
    history = history_of(
        user("old question"),
        assistant("old answer"),
        (ev.COMPACTION, {"summary": "we talked about X"}),
        user("new question"),
        assistant("new answer"),
    )
    assert texts(history) == ["we talked about X", "new question", "new answer"]
    assert history[0]["role"] == "user"


def test_context_reset_restarts_empty_and_the_latest_boundary_wins() -> None:
    history = history_of(
        user("a"),
        (ev.COMPACTION, {"summary": "summary 1"}),
        user("b"),
        (ev.CONTEXT_RESET, {}),
        user("c"),
    )
    assert texts(history) == ["c"]
    assert texts(history_of(user("a"), (ev.CONTEXT_RESET, {}))) == []
    assert texts(history_of((ev.CONTEXT_RESET, {}), (ev.COMPACTION, {"summary": "s"}))) == ["s"]


def test_a_malformed_compaction_is_ignored() -> None:
    history = history_of(user("a"), (ev.COMPACTION, {"summary": None}), user("b"))
    assert texts(history) == ["a", "b"]


def test_a_boundary_drops_tool_calls_still_waiting_for_results() -> None:
    history = history_of(assistant("", "c1"), (ev.CONTEXT_RESET, {}), result("c1"), user("x"))
    assert texts(history) == ["x"]


# Validity repairs ----------------------------------------------------------------------------------


def test_a_tool_call_without_a_result_gets_a_synthetic_error() -> None:
    history = history_of(user("q"), assistant("", "c1", "c2"), result("c2", "two"), user("next"))
    assert texts(history) == [
        "q",
        "call:c1",
        "call:c2",
        f"result:c1:{MISSING_RESULT_OUTPUT}",
        "result:c2:two",
        "next",
    ]
    assert history[2]["content"][0].get("is_error") is True


def test_unknown_late_and_duplicate_results_are_dropped() -> None:
    history = history_of(
        result("c0"),  # before any call
        assistant("", "c1"),
        result("c9"),  # unknown id
        result("c1", "first"),
        result("c1", "duplicate"),
        user("u"),
        result("c1", "late"),  # after the group was settled
        assistant("plain answer"),
        result("c1", "after a plain answer"),
    )
    assert texts(history) == ["call:c1", "result:c1:first", "u", "plain answer"]


def test_results_follow_call_order_and_lifecycle_frames_do_not_interrupt() -> None:
    history = history_of(
        (ev.TURN_START, {"turn_id": "t"}),
        assistant("thinking aloud", "a", "b"),
        (ev.STEP_START, {"turn_id": "t", "step": 2}),
        result("b", "B"),
        ("some_future_event", {"x": 1}),
        result("a", "A"),
        (ev.TURN_END, {"turn_id": "t", "reason": "completed"}),
    )
    assert texts(history) == ["thinking aloud", "call:a", "call:b", "result:a:A", "result:b:B"]


def test_empty_assistant_messages_and_empty_text_parts_are_dropped() -> None:
    reasoning_with_state = {"type": "reasoning", "text": "", "state": {"sig": "s"}}
    history = history_of(
        user("q"),
        assistant(""),  # no parts at all
        (
            ev.ASSISTANT_MESSAGE,
            {"message": {"role": "assistant", "content": [{"type": "text", "text": ""}]}},
        ),
        (
            ev.ASSISTANT_MESSAGE,
            {
                "message": {
                    "role": "assistant",
                    "content": [
                        {"type": "text", "text": ""},
                        reasoning_with_state,
                        {"type": "text", "text": "kept"},
                    ],
                }
            },
        ),
    )
    assert [m["role"] for m in history] == ["user", "assistant"]
    assert history[1]["content"] == [reasoning_with_state, {"type": "text", "text": "kept"}]


def test_an_empty_assistant_message_does_not_cut_off_pending_results() -> None:
    history = history_of(assistant("", "c1"), assistant(""), result("c1", "R"))
    assert texts(history) == ["call:c1", "result:c1:R"]


def test_frames_with_the_wrong_role_are_ignored() -> None:
    wrong = (ev.USER_MESSAGE, {"message": {"role": "assistant", "content": []}})
    assert texts(history_of(wrong, (ev.TOOL_RESULT, {"message": "nonsense"}), user("ok"))) == ["ok"]


def test_damaged_frames_are_skipped() -> None:
    log = SessionLog.open("damaged")
    log.append_many([user("one"), assistant("", "c1"), result("c1", "R"), user("two")])
    path = log.directory / LOG_NAME
    lines = path.read_bytes().splitlines(keepends=True)
    lines[2] = lines[2].replace(b'"R"', b'"X"')  # the tool result is quarantined
    path.write_bytes(b"".join(lines))
    reopened = SessionLog.open("damaged")
    history = HistoryProjection().update(reopened)
    assert texts(history) == ["one", "call:c1", f"result:c1:{MISSING_RESULT_OUTPUT}", "two"]
    assert history == rebuild_history(reopened.frames)


# Incremental ---------------------------------------------------------------------------------------


class CountingSource:
    """A real SessionLog, counting how many frames each projection update is handed."""

    def __init__(self, log: SessionLog) -> None:
        self.log = log
        self.handed_out = 0

    @property
    def generation(self) -> int:
        return self.log.generation

    def frames_after(self, seq: int) -> list[Frame]:
        frames = self.log.frames_after(seq)
        self.handed_out += len(frames)
        return frames


def test_the_next_request_processes_only_new_frames() -> None:
    log = SessionLog.open("big")
    log.append_many([user(f"m{i}") for i in range(2000)])
    source = CountingSource(log)
    projection = HistoryProjection()
    first = projection.update(source)
    assert len(first) == 2000 and source.handed_out == 2000
    log.append(*user("one more"))
    second = projection.update(source)
    assert source.handed_out == 2001  # one frame, not the history again
    assert len(second) == 2001
    assert second[-1] is log.frames[-1].data["message"]  # the log's own objects, not copies
    assert projection.update(source) == second and source.handed_out == 2001


def test_a_list_handed_out_only_ever_grows_at_the_end() -> None:
    log = SessionLog.open("grow")
    projection = HistoryProjection()
    handed: list[tuple[list[Message], list[Message]]] = []

    def request() -> None:
        messages = projection.update(log)
        handed.append((messages, list(messages)))

    log.append_many([user("q"), assistant("", "c1", "c2")])
    request()  # results pending: placeholders
    log.append(*result("c1"))
    request()
    log.append(*result("c2"))
    request()  # settled: the projection's own list
    log.append_many([assistant("done"), user("next")])
    request()
    log.append_many([(ev.COMPACTION, {"summary": "s"}), user("after")])
    request()
    for messages, snapshot in handed:
        assert messages[: len(snapshot)] == snapshot
    assert texts(handed[2][0]) == texts(handed[3][1])  # grew in place: it is the same list
    assert texts(handed[3][0]) == [
        "q",
        "call:c1",
        "call:c2",
        "result:c1:ok",
        "result:c2:ok",
        "done",
        "next",
    ]  # the compaction started a new list
    assert texts(handed[4][0]) == ["s", "after"]


def test_a_result_arriving_after_a_request_replaces_the_placeholder() -> None:
    log = SessionLog.open("pending")
    projection = HistoryProjection()
    log.append_many([user("q"), assistant("", "c1", "c2"), result("c1", "R1")])
    assert texts(projection.update(log))[-1] == f"result:c2:{MISSING_RESULT_OUTPUT}"
    log.append(*result("c2", "R2"))
    assert texts(projection.update(log))[-2:] == ["result:c1:R1", "result:c2:R2"]


def test_a_reloaded_log_or_another_log_rebuilds_the_projection() -> None:
    reader = SessionLog.open("reload")
    reader.append_many([user("a"), user("b")])
    projection = HistoryProjection()
    assert texts(projection.update(reader)) == ["a", "b"]
    path = reader.directory / LOG_NAME
    lines = path.read_bytes().splitlines(keepends=True)
    path.write_bytes(lines[0] + b"junk\n")
    assert reader.refresh() == "reloaded"
    assert texts(projection.update(reader)) == ["a"]
    other = SessionLog.open("other")
    other.append(*user("z"))
    assert texts(projection.update(other)) == ["z"]


# Property: incremental == full rebuild, and always valid ------------------------------------------

CALL_IDS = ["c0", "c1", "c2"]  # few ids, so results often match, repeat or go stale

single_event = st.one_of(
    st.builds(lambda t: ("user", t), st.sampled_from(["hi", "more", ""])),
    st.just(("synthetic",)),
    st.builds(
        lambda text, calls: ("assistant", text, calls),
        st.sampled_from(["", "answer"]),
        st.lists(st.sampled_from(CALL_IDS), max_size=3),
    ),
    st.builds(lambda c: ("result", c), st.sampled_from([*CALL_IDS, "unknown"])),
    st.builds(lambda ok: ("compaction", ok), st.booleans()),
    st.just(("reset",)),
    st.sampled_from([("turn_start",), ("turn_end",), ("step_start",), ("future",)]),
)


@st.composite
def tool_round(draw: st.DrawFn) -> list[tuple[Any, ...]]:
    """An assistant message with tool calls and results that mostly, not always, match them:
    some missing, some repeated, some reordered, some for ids nobody called."""
    calls = draw(st.lists(st.sampled_from(CALL_IDS), min_size=1, max_size=3))
    between = [("assistant", "", []), ("step_start",)]  # frames that must not settle the calls
    answers = draw(st.lists(st.sampled_from([*calls, *calls, "unknown", *between]), max_size=5))
    return [("assistant", draw(st.sampled_from(["", "answer"])), calls)] + [
        a if isinstance(a, tuple) else ("result", a) for a in answers
    ]


event_strategy = st.lists(
    st.one_of(single_event.map(lambda e: [e]), tool_round()), max_size=15
).map(lambda groups: [e for group in groups for e in group])


def build_frames(ops: list[tuple[Any, ...]], damaged: list[bool]) -> list[Frame]:
    frames = []
    for seq, (op, bad) in enumerate(zip(ops, damaged, strict=True), start=1):
        if bad:
            frames.append(Frame(seq if seq % 3 else None, "", 0, "", {}, True, b"?\n"))
            continue
        kind = op[0]
        if kind == "user":
            event = user(op[1])
        elif kind == "synthetic":
            event = user("AGENTS.md changed", ev.SYNTHETIC_MESSAGE)
        elif kind == "assistant":
            event = assistant(op[1], *op[2])  # repeated ids within one message included
        elif kind == "result":
            event = result(op[1], f"out{seq}")
        elif kind == "compaction":
            event = (ev.COMPACTION, {"summary": f"summary {seq}" if op[1] else 42})
        elif kind == "reset":
            event = (ev.CONTEXT_RESET, {})
        else:
            event = (kind, {"turn_id": "t", "reason": "completed", "step": 1})
        frames.append(Frame(seq, f"ev{seq}", 0, event[0], event[1]))
    return frames


@settings(max_examples=200, deadline=None)
@given(ops=event_strategy, data=st.data())
def test_incremental_projection_equals_full_rebuild(ops: list[tuple[Any, ...]], data: Any) -> None:
    damaged = data.draw(st.lists(st.booleans(), min_size=len(ops), max_size=len(ops)))
    damaged = [d and data.draw(st.integers(0, 4)) == 0 for d in damaged]  # damage is rare
    frames = build_frames(ops, damaged)
    cuts = sorted(data.draw(st.lists(st.integers(0, len(frames)), max_size=6)))
    projection = HistoryProjection()
    start = 0
    for cut in [*cuts, len(frames)]:
        projection.feed(frames[start:cut])
        start = cut
        got = projection.messages()
        assert got == rebuild_history(frames[:cut])
        assert_valid(got)


@settings(
    max_examples=25,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(ops=event_strategy, data=st.data())
def test_incremental_projection_over_a_real_log(ops: list[tuple[Any, ...]], data: Any) -> None:
    frames = build_frames(ops, [False] * len(ops))
    log = SessionLog.open(f"prop{next(_ids)}")
    projection = HistoryProjection()
    cuts = sorted(data.draw(st.lists(st.integers(0, len(frames)), max_size=4)))
    start = 0
    for cut in [*cuts, len(frames)]:
        log.append_many([(f.type, f.data) for f in frames[start:cut]])
        start = cut
        got = projection.update(log)
        assert got == rebuild_history(SessionLog.open(log.directory.name).frames)
        assert_valid(got)
