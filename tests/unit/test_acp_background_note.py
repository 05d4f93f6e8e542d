"""An editor is told when a background process wakes the agent: a note of xum's in the reply
(the wake-up turn's synthetic message itself is not shown as the user's)."""

from __future__ import annotations

from acp.schema import AgentMessageChunk

from xum.acp.updates import UpdateTranslator
from xum.engine import events as E


def test_a_background_wake_is_a_note() -> None:
    t = UpdateTranslator("/w")
    wake = E.BackgroundWake(
        task_id="bash:k7m2x9qa",
        process_id="k7m2x9qa",
        display_name="Tests",
        reason="exit",
        status="exited",
        lines=[],
        exit_code=1,
    )
    (update,) = t.live(wake)
    assert isinstance(update, AgentMessageChunk)
    text = update.content.text  # type: ignore[union-attr]
    assert "xum: background process bash:k7m2x9qa (Tests) has ended" in text
    synthetic = E.UserMessage(
        seq=3, ts=0, text="Background process ...", synthetic=True, kind="background_wake"
    )
    assert t.replayed(synthetic) == []
