"""The acceptance run of long sessions: 220 turns on a model with a small context window, against
the fake LLM server, through the real workspace context. Automatic compaction happens several
times; the log stays valid; each context segment is cache-stable (every request a byte prefix
of the next); each segment starts from its summary; nothing before a reset reaches the provider.

About 5-10 s on a 2-core machine (220 turns, each with durable appends); nothing asserts that.
"""

from __future__ import annotations

import itertools
from pathlib import Path
from typing import Any

import pytest

from tests.contextkit import bump, write
from tests.gitrepo import make_repo
from tests.integration.context_harness import (
    ContextHarness,
    assert_prefix_chain,
    system_of,
    texts_of,
)
from tests.support.history import assert_valid
from xum.context import compaction as texts
from xum.store import compaction_config as cc
from xum.store import frame_types as ev
from xum.store.config import update_config
from xum.store.projection import rebuild_history
from xum.store.sessionlog import SessionLog
from xum.store.sessions import inspect
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.fakellm.record import RecordedRequest

TURNS = 220
RESET_AT = 120
EDIT_AT = 30


def is_compaction(request: RecordedRequest) -> bool:
    return '<agent id="compact"' in system_of(request)


def message(i: int) -> str:
    return f"turn {i}: please extend the parser so that section {i} is handled; " + "detail " * 20


@pytest.mark.slow
async def test_two_hundred_turns_compact_automatically_and_stay_cache_stable(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "AGENTS.md", "Keep the parser small.\n")
    summaries = itertools.count(1)

    def respond(request: RecordedRequest) -> fakellm.Reply:
        if is_compaction(request):
            return fakellm.text(f"SUMMARY #{next(summaries)}: sections are being added.")
        return fakellm.text("Handled that section; the tests pass. " * 3)

    fake_llm.set_responder(respond)
    h = ContextHarness(fake_llm, repo)
    try:
        session = h.session()
        await session.run_turn(message(0))
        await session.run_turn(message(1))
        base = fake_llm.requests[0].cache.prompt_tokens  # type: ignore[union-attr]
        growth = session.compactor.tokens() - base
        # 70% of the window is reached after about 70 turns of growth.
        window = int((base + 35 * growth) / 0.7)

        def set_window(config: dict[str, Any]) -> None:
            config[cc.CONTEXT_WINDOWS_KEY] = {h.route.model_string: window}

        update_config(set_window)
        for i in range(2, TURNS):
            if i == EDIT_AT:
                write(repo / "AGENTS.md", "Keep the parser small and typed.\n")
                bump(repo / "AGENTS.md")
            text = "/clear --soft" if i == RESET_AT else message(i)
            result = await session.run_turn(text)
            assert result.reason == "completed", (i, result.error)
        # Every step's request is on record across the boundaries: rebuilt byte for byte.
        from xum.engine.replay import rebuild_requests

        steps = [r for r in fake_llm.requests if not is_compaction(r)]
        rebuilt = rebuild_requests(SessionLog.open(h.ws_id).frames)
        assert len(rebuilt) == len(steps)
        client = h.clients[0]
        assert all(
            client.request_body(r.request) == s.body for r, s in zip(rebuilt, steps, strict=True)
        )
    finally:
        await h.close()

    frames = list(SessionLog.open(h.ws_id).frames)
    report = inspect(h.ws_id)
    assert report.healthy and report.open_turn is None
    assert_valid(rebuild_history(frames))
    boundaries = [f for f in frames if f.type == ev.COMPACTION]
    assert len(boundaries) >= 2 and all(b.data["trigger"] == "auto" for b in boundaries)
    assert [f.data.get("reason") for f in frames if f.type == ev.CONTEXT_RESET] == ["clear"]

    # Split the requests into segments at each summarization request and at the reset.
    segments: list[list[RecordedRequest]] = [[]]
    reset_segment = None
    for request in fake_llm.requests:
        if is_compaction(request):
            segments.append([])
            continue
        sent = texts_of(request)
        if reset_segment is None and sent[0] == message(RESET_AT + 1):
            segments.append([])
            reset_segment = len(segments) - 1
        segments[-1].append(request)
    for segment in segments:
        assert segment, "a segment without requests"
        assert_prefix_chain(segment)  # cache-stable: every request a prefix of the next
    # Each compaction's segment starts from its summary, which the boundary recorded.
    summary_segments = [s for i, s in enumerate(segments[1:], 1) if i != reset_segment]
    for boundary, segment in zip(boundaries, summary_segments, strict=True):
        assert texts_of(segment[0])[0] == boundary.data["summary"]
        assert boundary.data["summary"].startswith(texts.COMPACTION_LEAD + "SUMMARY #")
    # Nothing from before the reset reaches the provider after it.
    assert reset_segment is not None
    for segment in segments[reset_segment:]:
        for request in segment:
            for j in range(RESET_AT):
                assert not any(t.startswith(f"turn {j}:") for t in texts_of(request))
    # The AGENTS.md edit travelled as a row, then was folded into the next segment's prompt.
    assert "typed" not in system_of(segments[0][-1])
    assert "Keep the parser small and typed." in system_of(segments[-1][0])
    for request in fake_llm.requests:
        assert request.cache is not None and request.cache.prompt_tokens <= window
    print(f"long session: {len(boundaries)} compactions, {len(segments)} segments, window {window}")
