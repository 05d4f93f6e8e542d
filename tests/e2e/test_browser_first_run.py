"""A first run in the browser, on a server with no provider key (as `make run` on a fresh
machine): the empty page leads with Add project and says a key is missing, the first error
points to Settings, and Settings lists the providers set up first with the unconfigured
built-ins folded away and not shown as errors. Also: two providers serving a model of the same
name are told apart on the model pill."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.browser_support import (
    TOKEN,
    XumServer,
    browser_fake,
    open_workspace,
    responder,
    screenshot,
    send,
    serving,
)
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.webui import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

TWINS = """{
  // Two servers that both call their model "model".
  "a": {"providerType": "openai-compatible", "baseUrl": "%(url)s", "apiKey": "key-a-0123456789", "models": ["model"]},
  "b": {"providerType": "openai-compatible", "baseUrl": "%(url)s", "apiKey": "key-b-0123456789", "models": ["model"]},
}
"""


def answer(request: fakellm.RecordedRequest) -> fakellm.Reply:
    if "[auth]" in json.dumps(request.json or {}):
        return fakellm.error(401, message="invalid api key")
    return responder(request)


@pytest.fixture(scope="module")
def bare(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[XumServer, FakeLLM]]:
    """A server with no provider in its environment and, until a test writes one, no
    providers.jsonc."""
    with browser_fake(answer) as fake, serving(tmp_path_factory.mktemp("first-run"), {}) as server:
        yield server, fake


def providers_file(server: XumServer, text: str | None) -> None:
    path = server.root / "providers.jsonc"
    if text is None:
        path.unlink(missing_ok=True)
        return
    server.root.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o600)


def signed_in(browser_context: Any, server: XumServer, route: str = "") -> Any:
    page = browser_context.new_page()
    page.goto(f"{server.url}/?token={TOKEN}{route}")
    page.wait_for_selector("nav[aria-label='Projects and workspaces']")
    return page


def test_first_run_leads_to_a_project_and_a_key(
    browser_context: Any, bare: tuple[XumServer, FakeLLM]
) -> None:
    server, _ = bare
    providers_file(server, None)
    server.api("POST", "/api/projects", json={"path": str(server.repo)})  # as `make run` does
    page = signed_in(browser_context, server)

    steps = page.get_by_test_id("first-steps")
    steps.wait_for()
    add = steps.get_by_role("button", name="Add project")
    assert "btn-primary" in (add.get_attribute("class") or "")  # the obvious first step
    assert "repo" in steps.get_by_test_id("known-projects").inner_text()
    notice = steps.get_by_test_id("provider-notice")
    notice.wait_for()
    assert "No model provider" in notice.inner_text()
    screenshot(page, "first-run-1280")

    # Settings: the way to a key is open, and nothing there is an error yet.
    notice.get_by_role("button", name="Open Settings").click()
    settings = page.get_by_role("dialog", name="Settings")
    settings.get_by_test_id("no-provider").wait_for()
    providers = settings.get_by_role("region", name="Providers")
    providers.locator("[data-provider='anthropic']").wait_for()  # the built-ins are unfolded
    assert providers.locator(".provider-row").count() >= 9
    assert providers.locator(".form-error").count() == 0
    screenshot(page, "first-run-settings-1280")
    page.keyboard.press("Escape")
    settings.wait_for(state="detached")

    # The first message fails, and the error says where a key goes.
    steps.get_by_role("button", name="New workspace").click()
    dialog = page.get_by_role("dialog", name="New workspace")
    dialog.get_by_label("Branch or name").fill("first")
    dialog.get_by_role("button", name="Create").click()
    page.wait_for_selector(".main[data-workspace-id] [data-transcript-ready='true']")
    page.get_by_test_id("provider-notice").wait_for()  # the empty chat says it too
    send(page, "hello")
    error = page.locator(".composer .form-error")
    error.wait_for()
    assert "no model provider" in error.inner_text()
    error.get_by_role("button", name="Open Settings").click()
    page.get_by_role("dialog", name="Settings").wait_for()


def test_providers_set_up_come_first_and_twins_are_told_apart(
    browser_context: Any, bare: tuple[XumServer, FakeLLM]
) -> None:
    server, fake = bare
    providers_file(server, TWINS % {"url": fake.base_url()})
    try:
        body = {
            "projectPath": str(server.repo),
            "runtime": {"type": "worktree"},
            "name": "twins",
            "model": "a:model",
        }
        server.api("POST", "/api/projects", json={"path": str(server.repo)})
        ws = server.api("POST", "/api/workspaces", json=body)
        page = signed_in(browser_context, server)
        open_workspace(page, ws["id"])

        pill = page.locator("[data-model]")
        assert pill.inner_text().strip() == "model · a"
        page.keyboard.press("Control+/")
        wait_until(page, "() => document.querySelector('[data-model]').dataset.model === 'b:model'")
        assert pill.inner_text().strip() == "model · b"
        pill.click()
        menu = page.get_by_role("dialog", name="Models")
        assert menu.get_by_text("model · a").count() == 1
        assert menu.get_by_text("model · b").count() == 1
        page.keyboard.press("Escape")

        # A provider that refuses the key: the error card points to Settings.
        send(page, "check the [auth] path")
        card = page.locator(".error-card")
        card.wait_for()
        card.get_by_test_id("settings-hint").get_by_role("button", name="Open Settings").click()

        settings = page.get_by_role("dialog", name="Settings")
        providers = settings.get_by_role("region", name="Providers")
        providers.locator("[data-provider='a']").wait_for()
        order = providers.locator(".provider-row").evaluate_all(
            "rows => rows.map(r => r.dataset.provider)"
        )
        assert order.index("a") < order.index("anthropic")
        assert order.index("b") < order.index("anthropic")
        # The built-ins without a key are folded away, not listed in red above them.
        folded = providers.locator("details.provider-more")
        assert folded.get_attribute("open") is None
        assert not providers.locator("[data-provider='anthropic']").is_visible()
        assert settings.get_by_test_id("no-provider").count() == 0
    finally:
        providers_file(server, None)
