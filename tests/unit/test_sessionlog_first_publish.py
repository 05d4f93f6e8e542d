"""A reader that looks at a new session while its first writer has appended but not yet written
the first manifest sees nothing yet, then the frames as appended: never a rewritten log (which
would start every subscriber of the server over, losing the live events)."""

from __future__ import annotations

import shutil

from xum.store import frame_types as ev
from xum.store.sessionlog import LOG_NAME, MANIFEST_NAME, SessionLog


def user(text: str) -> ev.FrameSpec:
    return ev.unchecked(
        ev.USER_MESSAGE, {"message": {"role": "user", "content": [{"type": "text", "text": text}]}}
    )


def test_the_first_append_is_read_once_its_manifest_is_published() -> None:
    # What a first writer leaves on disk, made by a real writer in another session.
    model = SessionLog.open("ws-model")
    model.append_many([ev.unchecked(ev.TURN_START, {"turn_id": "t1"}), user("from elsewhere")])
    model.close()

    reader = SessionLog.open("ws-first")
    assert reader.refresh() == "unchanged" and reader.frames == []
    reader.directory.mkdir(parents=True, exist_ok=True)
    # The log has grown; its manifest is not written yet.
    shutil.copyfile(model.directory / LOG_NAME, reader.directory / LOG_NAME)
    generation = reader.generation
    assert reader.refresh() == "unchanged"
    assert reader.frames == [] and reader.generation == generation

    shutil.copyfile(model.directory / MANIFEST_NAME, reader.directory / MANIFEST_NAME)
    assert reader.refresh() == "appended"
    assert [f.type for f in reader.frames] == [ev.TURN_START, ev.USER_MESSAGE]
    assert reader.generation == generation
