"""A refusal fallback as `xum run` and an ACP editor show it: one note naming the model that
refused and the one the turn went on with, live and (ACP) when a session is replayed."""

from __future__ import annotations

import io

from xum.acp.updates import UpdateTranslator
from xum.cli.render import TextRenderer
from xum.engine import events as E

SWITCH = E.ModelFallback(
    seq=5,
    ts=0,
    turn_id="t1",
    step=1,
    from_model="anthropic:claude-sonnet-5-5",
    to_model="anthropic:claude-sonnet-5",
    message="anthropic:claude-sonnet-5-5 refused (cyber); continued with anthropic:claude-sonnet-5",
)


def test_xum_run_prints_a_note() -> None:
    out, err = io.StringIO(), io.StringIO()
    render = TextRenderer(out, err)
    render(E.TextDelta(text="I can't"))
    render(SWITCH)
    assert f"note: {SWITCH.message}\n" in err.getvalue()


def test_an_editor_gets_a_note_live_and_in_a_replay() -> None:
    t = UpdateTranslator("/w")
    (live,) = t.live(SWITCH)
    (replayed,) = t.replayed(SWITCH)
    for update in (live, replayed):
        assert update.session_update == "agent_message_chunk"
        assert f"xum: {SWITCH.message}" in update.content.text
