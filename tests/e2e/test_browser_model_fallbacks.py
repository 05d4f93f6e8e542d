"""Settings → Models → Model Fallbacks in the browser against a real `xum server`: the built-in
chains are shown, a chain added there lands in config.json, and a workspace whose model then
refuses shows one line about the switch and the next model's answer, not the refusal."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.browser_support import (
    XumServer,
    assistant_texts,
    browser_fake,
    fake_env,
    open_new_workspace,
    responder,
    screenshot,
    send,
    serving,
)
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.webui import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

REFUSED = "I will not help with that."


def refusing(request: fakellm.RecordedRequest) -> fakellm.Reply:
    """Opus 5.5 (the default model here) refuses a message with [refuse]; others answer."""
    if request.model == "claude-opus-5-5" and "[refuse]" in json.dumps(request.json or {}):
        return fakellm.refusal(text=REFUSED)
    return responder(request)


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[XumServer, FakeLLM]]:
    """A server of its own: this module edits config.json."""
    with browser_fake(refusing) as fake:
        base = tmp_path_factory.mktemp("model-fallbacks")
        with serving(base, fake_env(fake)) as server:
            yield server, fake


def test_a_chain_set_in_settings_carries_a_refused_turn(
    browser_context: Any, served: tuple[XumServer, FakeLLM]
) -> None:
    server, fake = served
    page, ws, errors = open_new_workspace(browser_context, server, "fallbacks")

    page.keyboard.press("Control+Comma")
    settings = page.get_by_role("dialog", name="Settings")
    section = settings.get_by_test_id("model-fallbacks")
    section.locator("[data-chain='anthropic:claude-sonnet-5-5']").wait_for()  # built-in chains
    assert "built-in chains" in section.inner_text()

    section.get_by_role("button", name="Add chain").click()
    section.get_by_label("Model that refuses").last.fill("anthropic:claude-opus-5-5")
    section.get_by_label("Fallback models").last.fill("haiku")
    section.get_by_role("button", name="Save chains").click()
    section.get_by_text("Saved; applies from the next refusal.").wait_for()
    config = json.loads((server.root / "config.json").read_text())
    assert config["modelFallbacks"]["anthropic:claude-opus-5-5"] == {"models": ["haiku"]}
    assert config["modelFallbacks"]["anthropic:claude-sonnet-5-5"] == {
        "models": ["anthropic:claude-sonnet-5"]
    }
    screenshot(page, "settings-model-fallbacks-1280")
    page.keyboard.press("Escape")

    send(page, "[refuse] scan my server")
    notice = page.locator(".notice.advisory", has_text="continued with")
    notice.wait_for()
    assert notice.inner_text() == (
        "anthropic:claude-opus-5-5 refused (cyber); continued with anthropic:claude-haiku-5-5"
    )
    wait_until(page, "() => document.querySelectorAll(\"[data-role='assistant']\").length === 1")
    (answer,) = assistant_texts(page)
    assert answer.startswith("Echo:") and REFUSED not in page.content()
    models = [r.model for r in fake.requests if r.wire is not None]
    assert models[-2:] == ["claude-opus-5-5", "claude-haiku-5-5"]
    # The sidebar's costs: each model charged for its own reply.
    costs = page.get_by_label("Costs by model")
    costs.locator("[data-model-cost='anthropic:claude-opus-5-5']").wait_for()
    assert costs.locator("[data-model-cost='anthropic:claude-haiku-5-5']").count() == 1
    screenshot(page, "transcript-model-fallback-1280")
    assert errors == []
    server.wait_idle(ws["id"])
