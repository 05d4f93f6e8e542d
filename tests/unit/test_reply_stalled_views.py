"""The `reply-stalled` notice (field report S7) as the engine words it and as the terminal UI
and ACP clients show it."""

from __future__ import annotations

from xum.acp.updates import UpdateTranslator
from xum.engine import events as E
from xum.engine.stream import stalled_event
from xum.llm.types import Stalled
from xum.tui.transcript import NoticeEntry, Transcript


def test_the_engine_says_where_the_reply_stalls_and_what_happens_next() -> None:
    mid = stalled_event(Stalled(silent_s=30.04, idle_s=120.0, began=True))
    assert mid.to_dict() == {
        "type": "reply-stalled",
        "silent_s": 30.0,
        "idle_s": 120.0,
        "began": True,
        "message": "the model has sent nothing for 30 s (mid-reply); the attempt ends and is "
        "retried after 120 s of silence (modelRequests.idleTimeoutSeconds)",
    }
    early = stalled_event(Stalled(silent_s=30.0, idle_s=120.0, began=False))
    assert "after the response headers, before the reply began" in early.message


def test_the_terminal_ui_and_acp_show_it_as_a_note() -> None:
    event: E.ReplyStalled = stalled_event(Stalled(silent_s=30.0, idle_s=120.0, began=True))
    t = Transcript()
    (change,) = t.fold(event)
    assert isinstance(change.entry, NoticeEntry) and change.entry.level == "warn"
    assert "sent nothing for 30 s" in change.entry.text
    (update,) = UpdateTranslator("/w").live(event)
    assert "sent nothing for 30 s" in update.content.text
