"""ACP replay of a message with images: the editor gets its text and the images' names."""

from __future__ import annotations

from xum.acp.updates import UpdateTranslator
from xum.engine import events as E


def test_a_replayed_message_names_its_images() -> None:
    said = E.UserMessage(
        seq=1, ts=0, text="look", images=[{"sha256": "a" * 64, "name": "shot.png"}]
    )
    (shown,) = UpdateTranslator("/w").replayed(said)
    assert shown.content.text == "look\n[image: shot.png]"
