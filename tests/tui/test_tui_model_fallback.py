"""The terminal UI's transcript on a refusal fallback: the refused reply that streamed goes, and
one line says which model refused and which one the turn went on with."""

from __future__ import annotations

from xum.engine import events as E
from xum.tui.transcript import NoticeEntry, Transcript


def test_a_fallback_replaces_the_refused_reply_with_one_line() -> None:
    t = Transcript()
    t.fold(E.TextDelta(text="I can't help with"))
    changes = t.fold(
        E.ModelFallback(
            seq=3,
            ts=0,
            turn_id="t1",
            step=1,
            from_model="anthropic:claude-sonnet-5-5",
            to_model="anthropic:claude-sonnet-5",
            message="anthropic:claude-sonnet-5-5 refused; continued with anthropic:claude-sonnet-5",
        )
    )
    assert [c.kind for c in changes] == ["remove", "add"]
    (entry,) = t.entries
    assert isinstance(entry, NoticeEntry) and entry.level == "warn"
    assert entry.text.endswith("refused; continued with anthropic:claude-sonnet-5")
    # The next model's reply streams into a new entry.
    t.fold(E.TextDelta(text="Here it is."))
    assert [type(e).__name__ for e in t.entries] == ["NoticeEntry", "AssistantEntry"]
