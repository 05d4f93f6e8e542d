"""Fixtures for the browser tests (test_browser_*.py): one `xum server` and one Chromium for the
whole session, a fresh browser context per test; and the git repository the CLI tests run in.
Nothing here is autouse."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.browser_support import (
    DESKTOP,
    TOKEN,
    ensure_ui_built,
    fake_env,
    responder,
    screenshot,
    serving,
    skip_without_chromium,
)
from xum.testing.fakellm import FakeLLM
from xum.testing.webui import XumServer, chromium_launch_args


@pytest.fixture(scope="session")
def fake_model() -> Iterator[FakeLLM]:
    """The fake LLM behind the browser tests' server (see browser_support.responder)."""
    fake = FakeLLM().start()
    fake.set_responder(responder)
    try:
        yield fake
    finally:
        fake.stop()


@pytest.fixture(scope="session")
def xum_web(tmp_path_factory: pytest.TempPathFactory, fake_model: FakeLLM) -> Iterator[XumServer]:
    skip_without_chromium()
    ensure_ui_built()
    with serving(tmp_path_factory.mktemp("xum-web"), fake_env(fake_model)) as server:
        yield server


# Module scope, not session: Playwright's sync API keeps an event loop running on this thread
# while it is started, and the asyncio tests of later modules need the thread free.
@pytest.fixture(scope="module")
def chromium() -> Iterator[Any]:
    skip_without_chromium()
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw:
        browser = pw.chromium.launch(**chromium_launch_args())
        try:
            yield browser
        finally:
            browser.close()


@pytest.fixture
def browser_context(chromium: Any) -> Iterator[Any]:
    context = chromium.new_context(viewport=DESKTOP)
    try:
        yield context
    finally:
        context.close()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    outcome = yield
    report = outcome.get_result()  # type: ignore[attr-defined]
    if report.when == "call":
        item.stash[CALL_FAILED] = report.failed


CALL_FAILED = pytest.StashKey[bool]()


@pytest.fixture
def page(request: pytest.FixtureRequest, browser_context: Any, xum_web: XumServer) -> Iterator[Any]:
    """A signed-in page at desktop width. Page errors fail the test; a failing test leaves a
    screenshot in test-artifacts/screenshots/failed-<test>.png."""
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    # Kept for a failure's report: what the console said and which requests failed.
    notes: list[str] = []
    page.on("console", lambda msg: notes.append(f"console {msg.type}: {msg.text}"))
    page.on("requestfailed", lambda req: notes.append(f"failed {req.url}: {req.failure}"))
    page.goto(f"{xum_web.url}/?token={TOKEN}")
    page.wait_for_selector("nav[aria-label='Projects and workspaces']")
    yield page
    if request.node.stash.get(CALL_FAILED, False):
        shot = screenshot(page, f"failed-{request.node.name}")
        tail = "".join(xum_web.output[-60:])
        # Beside the screenshot: the call's report is made before this teardown runs.
        shot.with_suffix(".log").write_text(
            "page console, failed requests:\n" + "\n".join(notes) + "\n\nserver:\n" + tail
        )
    assert not errors, f"uncaught errors in the page: {errors}"
