"""An attached ACP session (`xum acp --server-url`) after its socket to the server dropped: the
server resends the streaming reply whole (`discard-partial`, then the text so far), and the
editor, which cannot take text back, gets only the part it had not been shown."""

from __future__ import annotations

from xum.acp.remote_session import RemoteBridgeSession
from xum.engine import events as E
from xum.host.remote import RemoteHosts
from xum.host.server_target import ServerTarget
from xum.store.registry import WorkspaceRecord
from xum.testing.acpeditor import TestEditor


def _session(editor: TestEditor) -> RemoteBridgeSession:
    record = WorkspaceRecord(
        id="abc123", name="w", project_path="/p", runtime="local", path="/p", model="m:x"
    )
    # Never connected: these events come straight from the test.
    hosts = RemoteHosts(ServerTarget("http://127.0.0.1:9"))
    return RemoteBridgeSession(editor, record, hosts)  # type: ignore[arg-type]


async def test_a_resumed_reply_sends_the_editor_only_what_is_new() -> None:
    editor = TestEditor()
    session = _session(editor)
    session.on_event(E.StepStart(step=1, turn_id="t"))
    session.on_event(E.TextDelta(text="Hello, "))
    session.on_event(E.TextDelta(text="wor"))
    # The reconnect: the reply so far, then live deltas.
    session.on_event(E.DiscardPartial())
    session.on_event(E.StepStart(step=1, turn_id="t"))
    session.on_event(E.TextDelta(text="Hello, wor"))
    session.on_event(E.TextDelta(text="ld."))
    await session.pump.drain()
    assert editor.message_text() == "Hello, world."


async def test_a_reply_that_really_starts_over_is_said_so() -> None:
    editor = TestEditor()
    session = _session(editor)
    session.on_event(E.TextDelta(text="First try"))
    session.on_event(E.DiscardPartial())  # the model's stream dropped: the reply restarts
    session.on_event(E.TextDelta(text="Second"))
    await session.pump.drain()
    assert editor.message_text().startswith("First try")
    assert editor.message_text().endswith("Second")
    assert "starts over" in editor.message_text()
