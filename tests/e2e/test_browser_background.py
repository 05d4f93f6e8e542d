"""The background processes strip in the browser: a background command the agent started is
listed above the composer (what, since when, its last lines); the shortcut puts the keyboard on
it, Enter opens a row's output and Backspace stops it; a monitored process that ends wakes the
agent, which the chat shows as a one-line notice. Ordered by barrier files, never by sleeping."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser_support import BG_NAME, XumServer, open_workspace, screenshot, send

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]


def test_the_strip_lists_opens_and_stops_and_an_end_wakes_the_agent(
    page: Any, xum_web: XumServer, tmp_path: Path
) -> None:
    first_gate = tmp_path / "first"
    second_gate = tmp_path / "second"
    ws = xum_web.create_workspace("background-strip")
    page.reload()
    open_workspace(page, ws["id"])

    send(page, f"[bg] {first_gate}")
    page.get_by_text("The tool finished: tool-output-42 seen.").wait_for()
    strip = page.locator("section.bg-strip")
    strip.get_by_text("1 background process running").wait_for()
    # The last line shows without opening anything once the strip has asked for it.
    page.keyboard.press("Alt+J")
    row = strip.locator(f".bg-row[data-status='running']:has-text('{BG_NAME}')")
    row.wait_for()
    assert row.evaluate("el => el === document.activeElement")  # the keyboard is on it
    assert re.search(r"since \d", row.inner_text())
    row.locator("[data-testid='bg-last-line']").get_by_text("bg line two").wait_for()
    page.keyboard.press("Enter")
    lines = row.locator("[data-testid='bg-lines']")
    lines.wait_for()
    assert "bg line one" in lines.inner_text() and "bg line two" in lines.inner_text()
    screenshot(page, "background-strip-1280")

    # The process ends: its monitor wakes the agent, and the chat says so in one line.
    first_gate.touch()
    notice = page.locator(".notice.background")
    notice.wait_for()
    assert f"({BG_NAME}) has ended: exited, exit code 0." in notice.inner_text()
    page.get_by_text(re.compile(r"^Echo: Read its output with bash_output")).wait_for()
    strip.locator(".bg-row[data-status='exited']").wait_for()

    # A second one, stopped from the strip with Backspace (an explicit stop wakes nobody).
    send(page, f"[bg] {second_gate}")
    strip.get_by_text("1 background process running").wait_for()
    page.keyboard.press("Control+Shift+J")  # collapses (it was open), even from the composer
    strip.locator(".bg-strip-list").wait_for(state="detached")
    page.keyboard.press("Control+Shift+J")  # expands, keyboard on the newest row
    newest = strip.locator(".bg-row[data-index='0']")
    newest.wait_for()
    assert newest.get_attribute("data-status") == "running"
    page.keyboard.press("Backspace")
    strip.locator(".bg-row[data-index='0'][data-status='stopped']").wait_for()
    strip.get_by_text("2 background processes, none running").wait_for()
    assert not second_gate.exists()
