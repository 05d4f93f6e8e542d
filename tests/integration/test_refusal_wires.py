"""A refusal reads as one typed result on every wire: `Finish.reason == "refusal"`, with the
text the model said (if any), its usage, and Anthropic's `stop_details`. This is what the
refusal fallbacks act on (xum.engine.fallback); the scripted refusals are fakellm.refusal."""

from __future__ import annotations

from typing import get_args

import pytest

from tests.fixtures import ANTHROPIC_SSE
from tests.support.llm_wires import collect, make_client, make_request, texts
from xum.llm.types import Finish, Wire
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


async def finish_of(server: FakeLLM, wire: Wire, reply: fakellm.Reply) -> tuple[Finish, str]:
    server.script(reply)
    client = make_client(server, wire)
    try:
        events = await collect(client, make_request(wire, thinking="off"))
    finally:
        await client.aclose()
    finish = events[-1]
    assert isinstance(finish, Finish)
    return finish, texts(events)


@pytest.mark.parametrize("wire", get_args(Wire))
async def test_a_refusal_is_a_refusal_on_every_wire(fake_llm: FakeLLM, wire: Wire) -> None:
    finish, said = await finish_of(fake_llm, wire, fakellm.refusal(wire, "Not this one."))
    assert finish.reason == "refusal"
    assert said == "Not this one."
    assert finish.usage_reported and finish.usage.output_tokens == 10


async def test_anthropic_stop_details_come_with_the_refusal(fake_llm: FakeLLM) -> None:
    finish, said = await finish_of(
        fake_llm, "anthropic", fakellm.replay(ANTHROPIC_SSE / "refusal_response.txt")
    )
    assert finish.reason == "refusal" and said == ""
    assert finish.stop_details == {
        "type": "refusal",
        "category": "cyber",
        "explanation": "This request was refused due to policy.",
    }


async def test_a_plain_reply_has_no_stop_details(fake_llm: FakeLLM) -> None:
    finish, _ = await finish_of(fake_llm, "anthropic", fakellm.text("Sure."))
    assert finish.reason == "stop" and finish.stop_details is None
