"""Refusal fallbacks (config.json `modelFallbacks`, docs/models.md): a model that refuses is
replaced, for the rest of the turn, by the next model of its chain; the refused reply is on
record (a `model_fallback` frame and event) but never sent again; each reply is charged to the
model that wrote it; quota, auth and network errors never fall back; a spent chain ends the turn
with an error. Driven through the engine against the fake LLM server, with the recorded
Anthropic refusal stream as one input."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from tests.fixtures import ANTHROPIC_SSE
from tests.support.engine import as_dicts, assert_valid_log, engine_session, no_retry_client
from xum.core.paths import config_path, ensure_root
from xum.engine.agent import AgentSession
from xum.engine.records import SessionSettings
from xum.engine.replay import rebuild_requests
from xum.engine.route import ModelRoute
from xum.llm.client import LLMClient
from xum.llm.types import Usage
from xum.store import frame_types as ev
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.opening import fake_route

STARTS = "anthropic:claude-sonnet-5-5"  # priced, and the default chain's first key
NEXT = "anthropic:claude-haiku-5-5"  # priced too, so both costs are known
LAST = "anthropic:claude-opus-5-5"
WS = "ws-fallback"


def write_config(data: dict[str, Any]) -> None:
    ensure_root()
    config_path().write_bytes(orjson.dumps(data))


class Rig:
    """One engine session on `STARTS`, every model served by the fake server."""

    def __init__(self, server: FakeLLM, workdir: Path) -> None:
        self.server = server
        self.workdir = workdir
        self.events: list[dict[str, Any]] = []
        self.clients: list[LLMClient] = []

    def resolve(self, model: str) -> ModelRoute:
        return fake_route(self.server, model)

    def session(self, budget_usd: float | None = None, model: str = STARTS) -> AgentSession:
        route = self.resolve(model)
        client = no_retry_client(route)
        self.clients.append(client)
        return engine_session(
            self.workdir,
            route,
            client,
            ws_id=WS,
            settings=SessionSettings(
                system_prompt="You are a test.", tools=["bash"], budget_usd=budget_usd
            ),
            emit=as_dicts(self.events.append),
            resolve_model=self.resolve,
        )

    def of_type(self, kind: str) -> list[dict[str, Any]]:
        return [e for e in self.events if e["type"] == kind]


@pytest.fixture
async def rig(fake_llm: FakeLLM, tmp_path: Path) -> AsyncIterator[Rig]:
    r = Rig(fake_llm, tmp_path)
    yield r
    for client in r.clients:
        await client.aclose()


def frames(kind: str) -> list[dict[str, Any]]:
    return [f.data for f in SessionLog.open(WS).frames if f.type == kind]


def model_ids(server: FakeLLM) -> list[str | None]:
    return [r.model for r in server.requests if r.wire is not None]


async def test_a_recorded_refusal_is_retried_on_the_next_model(fake_llm: FakeLLM, rig: Rig) -> None:
    write_config({"modelFallbacks": {STARTS: {"models": [NEXT]}}})
    fake_llm.script(fakellm.replay(ANTHROPIC_SSE / "refusal_response.txt"), fakellm.text("Done."))
    session = rig.session()
    result = await session.run_turn("scan my own server for open ports")

    assert result.reason == "completed" and result.text == "Done."
    # The retry went to the next model, with exactly the history the refused request had: the
    # refusal is not carried into it.
    assert model_ids(fake_llm) == ["claude-sonnet-5-5", "claude-haiku-5-5"]
    first, second = (r.json for r in fake_llm.requests)
    assert second["messages"] == first["messages"]

    (switch,) = frames(ev.MODEL_FALLBACK)
    assert (switch["from_model"], switch["to_model"]) == (STARTS, NEXT)
    assert switch["finish_reason"] == "refusal" and switch["category"] == "cyber"
    assert switch["explanation"] == "This request was refused due to policy."
    (reply,) = frames(ev.ASSISTANT_MESSAGE)
    assert reply["model"] == NEXT

    (event,) = rig.of_type("model-fallback")
    assert event["message"] == f"{STARTS} refused (cyber); continued with {NEXT}"
    assert event["from_model"] == STARTS and event["to_model"] == NEXT

    # Each reply is charged to the model that wrote it, and the turn pays for both.
    refused_usage = Usage.from_dict(switch["usage"])
    assert refused_usage.output_tokens == 120 and refused_usage.reasoning_tokens == 67
    refused_cost = rig.resolve(STARTS).cost(refused_usage)
    reply_cost = rig.resolve(NEXT).cost(Usage.from_dict(reply["usage"]))
    assert refused_cost and reply_cost
    assert switch["cost_usd"] == pytest.approx(refused_cost)
    assert reply["cost_usd"] == pytest.approx(reply_cost)
    assert session.ledger.by_model == pytest.approx({STARTS: refused_cost, NEXT: reply_cost})
    assert result.cost_usd == pytest.approx(refused_cost + reply_cost)

    # The session's model is unchanged: the switch was the turn's.
    assert session.route.model_string == STARTS
    fake_llm.script(fakellm.text("Back on the first model."))
    await session.run_turn("and now?")
    assert model_ids(fake_llm)[-1] == "claude-sonnet-5-5"

    # The log stays valid, replays both requests as sent, and a reopen resumes the costs.
    assert_valid_log(WS)
    steps = [(s.step, s.model) for s in rebuild_requests(SessionLog.open(WS).frames)]
    assert steps[:2] == [(1, STARTS), (2, NEXT)]
    reopened = rig.session()
    assert reopened.ledger.by_model[STARTS] == pytest.approx(session.ledger.by_model[STARTS])
    assert reopened.session_cost == pytest.approx(session.session_cost)


async def test_refusals_walk_the_chain_and_a_spent_chain_ends_with_an_error(
    fake_llm: FakeLLM, rig: Rig
) -> None:
    write_config({"modelFallbacks": {STARTS: {"models": [NEXT, LAST]}}})
    fake_llm.script(
        fakellm.refusal(),
        fakellm.refusal(text="Still no."),
        fakellm.refusal(text="No from me either."),
    )
    session = rig.session()
    result = await session.run_turn("something every model refuses")

    assert model_ids(fake_llm) == ["claude-sonnet-5-5", "claude-haiku-5-5", "claude-opus-5-5"]
    switches = frames(ev.MODEL_FALLBACK)
    assert [(s["from_model"], s["to_model"]) for s in switches] == [(STARTS, NEXT), (NEXT, LAST)]
    # Nothing refused is sent again: every request had the same history.
    histories = [r.json["messages"] for r in fake_llm.requests]
    assert histories[0] == histories[1] == histories[2]

    assert result.reason == "error" and result.error is not None
    assert result.error["kind"] == "refused"
    assert "every model of the fallback chain" in result.error["message"]
    assert LAST in result.error["message"] and "modelFallbacks" in result.error["hint"]
    # The last refusal is the turn's reply, as a refusal without a chain would be.
    (reply,) = frames(ev.ASSISTANT_MESSAGE)
    assert reply["model"] == LAST and reply["finish_reason"] == "refusal"
    (error,) = rig.of_type("error")
    assert error["kind"] == "refused"
    assert set(session.ledger.by_model) == {STARTS, NEXT, LAST}
    assert_valid_log(WS)


@pytest.mark.parametrize(
    "failure",
    [
        fakellm.rate_limited(retry_after=0),
        fakellm.error(429, {"error": {"type": "insufficient_quota", "message": "no credit"}}),
        fakellm.error(401),
        fakellm.text("cut", disconnect=fakellm.Disconnect(after_bytes=40)),
    ],
    ids=["rate-limit", "quota", "auth", "network"],
)
async def test_quota_auth_and_network_errors_never_fall_back(
    fake_llm: FakeLLM, rig: Rig, failure: fakellm.Reply
) -> None:
    write_config({"modelFallbacks": {STARTS: {"models": [NEXT]}}})
    fake_llm.script(failure, fakellm.text("must not be asked"))
    result = await rig.session().run_turn("hello")
    assert result.reason == "error"
    assert model_ids(fake_llm) == ["claude-sonnet-5-5"]
    assert not frames(ev.MODEL_FALLBACK) and not rig.of_type("model-fallback")


async def test_a_content_policy_error_falls_back_without_a_charge(
    fake_llm: FakeLLM, rig: Rig
) -> None:
    write_config({"modelFallbacks": {STARTS: {"models": [NEXT]}}})
    policy = {"error": {"type": "content_policy_violation", "message": "flagged"}}
    fake_llm.script(fakellm.error(400, policy), fakellm.text("Done."))
    session = rig.session()
    result = await session.run_turn("hello")
    assert result.reason == "completed" and result.text == "Done."
    assert model_ids(fake_llm) == ["claude-sonnet-5-5", "claude-haiku-5-5"]
    (switch,) = frames(ev.MODEL_FALLBACK)
    assert switch["finish_reason"] == "refused" and "usage" not in switch
    assert set(session.ledger.by_model) == {NEXT}
    assert_valid_log(WS)


async def test_no_chain_keeps_a_refusal_as_the_reply(fake_llm: FakeLLM, rig: Rig) -> None:
    write_config({"modelFallbacks": {}})  # the key present and empty: no chains at all
    fake_llm.script(fakellm.refusal(text="No."))
    result = await rig.session().run_turn("hello")
    assert result.reason == "completed" and result.text == "No."
    assert model_ids(fake_llm) == ["claude-sonnet-5-5"]
    assert not frames(ev.MODEL_FALLBACK)


async def test_without_the_key_the_default_chain_applies(fake_llm: FakeLLM, rig: Rig) -> None:
    fake_llm.script(fakellm.refusal(), fakellm.text("Done."))
    result = await rig.session().run_turn("hello")
    assert result.reason == "completed"
    assert model_ids(fake_llm) == ["claude-sonnet-5-5", "claude-sonnet-5"]


async def test_a_fallback_with_no_usable_endpoint_ends_the_turn_clearly(
    fake_llm: FakeLLM, rig: Rig
) -> None:
    write_config({"modelFallbacks": {STARTS: {"models": ["nowhere:some-model"]}}})
    fake_llm.script(fakellm.refusal(text="No."))
    session = rig.session()
    session.resolve_model = lambda model: (
        rig.resolve(model) if model == STARTS else _no_provider(model)
    )
    result = await session.run_turn("hello")
    assert result.reason == "error" and result.error is not None
    assert "its fallback nowhere:some-model cannot be used" in result.error["message"]
    assert model_ids(fake_llm) == ["claude-sonnet-5-5"]
    assert_valid_log(WS)


def _no_provider(model: str) -> ModelRoute:
    from xum.engine.route import resolve_route

    return resolve_route(model, env={})


async def test_a_refusal_that_spends_the_budget_is_not_retried(fake_llm: FakeLLM, rig: Rig) -> None:
    write_config({"modelFallbacks": {STARTS: {"models": [NEXT]}}})
    fake_llm.script(fakellm.refusal(output_tokens=100_000), fakellm.text("must not be asked"))
    result = await rig.session(budget_usd=0.5).run_turn("hello")
    assert result.reason == "budget"
    assert model_ids(fake_llm) == ["claude-sonnet-5-5"]
    assert_valid_log(WS)


async def test_a_refusal_of_unknown_cost_under_a_budget_is_not_retried(
    fake_llm: FakeLLM, rig: Rig
) -> None:
    unpriced = "anthropic:claude-sonnet-5"  # no built-in price: its replies cost "unknown"
    write_config({"modelFallbacks": {unpriced: {"models": [NEXT]}}})
    fake_llm.script(fakellm.refusal(), fakellm.text("must not be asked"))
    result = await rig.session(budget_usd=5.0, model=unpriced).run_turn("hello")
    assert result.reason == "budget"
    assert model_ids(fake_llm) == ["claude-sonnet-5"]
    # No switch happened: the refusal is the turn's reply, its cost unknown.
    assert not frames(ev.MODEL_FALLBACK) and not rig.of_type("model-fallback")
    (reply,) = frames(ev.ASSISTANT_MESSAGE)
    assert reply["finish_reason"] == "refusal" and reply["cost_usd"] is None
    assert_valid_log(WS)
