"""A server that stops and comes back, seen from the browser at phone width: the lost connection
is shown over the chat (not only in the sidebar's footer), the header stops claiming the agent
works, the composer's "cannot be reached" goes away once the server is back, drafts survive a
reload and a new sign-in, the generated token is kept across a restart (nobody is signed out),
and a sign-in that ended says why."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.browser_support import (
    PHONE,
    XumServer,
    ensure_ui_built,
    responder,
    screenshot,
    skip_without_chromium,
)
from xum.testing.fakellm import FakeLLM
from xum.testing.webui import restart, start_server, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(150)]

DRAFT = "half-written message that must survive"
BANNER = "[data-testid='connection-banner']"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeLLM]:
    model = FakeLLM().start()
    model.set_responder(responder)
    try:
        yield model
    finally:
        model.stop()


@pytest.fixture
def own_server(tmp_path_factory: pytest.TempPathFactory, fake: FakeLLM) -> Iterator[list[Any]]:
    """A server of its own (this test stops and restarts it) with a generated token; the list
    holds the current server so the test can swap in the restarted one."""
    skip_without_chromium()
    ensure_ui_built()
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}
    holder: list[Any] = [start_server(tmp_path_factory.mktemp("conn"), None, env)]
    try:
        yield holder
    finally:
        holder[0].stop()


def state_label(page: Any) -> str:
    return str(page.get_by_test_id("workspace-state").get_attribute("data-state"))


def test_server_restarts_are_visible_and_lose_nothing(chromium: Any, own_server: list[Any]) -> None:
    server: XumServer = own_server[0]
    assert server.generated_token
    ws = server.create_workspace("conn")
    context = chromium.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        page.goto(f"{server.url}/?token={server.token}#/w/{ws['id']}")
        page.wait_for_selector(f".main[data-workspace-id='{ws['id']}'] [data-transcript-ready]")
        box = page.locator("textarea[data-composer]")
        box.fill(DRAFT)
        assert page.locator(BANNER).count() == 0

        # The server stops: a banner over the chat, visible at 375 px, and the header says
        # offline instead of the last status it had.
        server.stop()
        banner = page.locator(BANNER)
        banner.wait_for()
        assert banner.is_visible() and "cannot be reached" in banner.inner_text()
        bbox = banner.bounding_box()
        assert bbox is not None and bbox["x"] >= 0 and bbox["x"] + bbox["width"] <= PHONE["width"]
        assert state_label(page) == "offline"
        screenshot(page, "server-lost-375")
        # Sending now fails and says so; the text stays in the composer.
        box.press("Enter")
        page.locator(".composer .form-error[data-network]").wait_for()
        assert box.input_value() == DRAFT

        # Back on the same port, with the token it kept: the page reconnects by itself (or at
        # "Retry now"), nobody is signed out, and the stale error is gone.
        server = restart(server, same_port=True)
        own_server[0] = server
        # The page may reconnect by itself at any moment, taking the banner away, so "Retry
        # now" is pressed inside the page in one step (present and enabled, then clicked)
        # rather than by a locator click that would wait on a button already gone.
        page.evaluate(
            """(selector) => {
                const banner = document.querySelector(selector);
                const buttons = banner ? [...banner.querySelectorAll('button')] : [];
                const retry = buttons.find((b) => b.textContent.trim() === 'Retry now');
                if (retry && !retry.disabled) retry.click();
            }""",
            BANNER,
        )
        banner.wait_for(state="detached", timeout=30_000)
        assert page.get_by_test_id("signin").count() == 0
        page.locator(".composer .form-error[data-network]").wait_for(state="detached")
        wait_until(
            page,
            "() => document.querySelector('[data-testid=workspace-state]').dataset.state === 'idle'",
        )
        assert box.input_value() == DRAFT

        # A reload keeps the draft (it is in this browser's storage, per workspace).
        page.reload()
        page.wait_for_selector(f".main[data-workspace-id='{ws['id']}'] [data-transcript-ready]")
        assert page.locator("textarea[data-composer]").input_value() == DRAFT

        # The server comes back with another token: the page says why it must sign in again.
        server = restart(server, same_port=True, token="a-different-token-0123456789")
        own_server[0] = server
        reason = page.get_by_test_id("signin-reason")
        reason.wait_for(timeout=30_000)
        assert "ended" in reason.inner_text()
        screenshot(page, "signin-again-375")
        page.get_by_label("Server token").fill(server.token)
        page.get_by_role("button", name="Sign in").click()
        page.wait_for_selector(f".main[data-workspace-id='{ws['id']}'] [data-transcript-ready]")
        assert page.locator("textarea[data-composer]").input_value() == DRAFT
    finally:
        context.close()


def test_a_reload_with_an_ended_sign_in_says_why(chromium: Any, own_server: list[Any]) -> None:
    server: XumServer = own_server[0]
    context = chromium.new_context(viewport=PHONE)
    try:
        page = context.new_page()
        page.goto(f"{server.url}/?token={server.token}")
        page.wait_for_selector("[data-transcript-ready], .empty-state")
        server = restart(server, same_port=True, token="yet-another-token-9876543210")
        own_server[0] = server
        page.reload()
        page.get_by_test_id("signin-reason").wait_for()
        # A browser that never signed in gets the plain page, no "ended" notice.
        fresh = context.browser.new_context(viewport=PHONE).new_page()
        fresh.goto(server.url + "/")
        fresh.get_by_test_id("signin").wait_for()
        assert fresh.get_by_test_id("signin-reason").count() == 0
        fresh.context.close()
    finally:
        context.close()
