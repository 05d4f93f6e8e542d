"""What the page shows while a turn runs, against a real `xum server` and the fake LLM: the costs
panel grows with each finished step (not only at the turn's end), queued messages are listed by
their text, the header's branch follows a `git checkout -b` the agent ran, an edit of a file
outside the workspace (the plan file) has git-style diff labels, and Mermaid diagrams with HTML
in their labels draw without a Content-Security-Policy violation."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser_support import (
    LIVE_FIRST,
    XumServer,
    open_workspace,
    send,
    wait_until,
)

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

# Collects CSP violations (the event, and Chromium's console report) from the first script on.
CSP_PROBE = """
window.__csp = [];
document.addEventListener("securitypolicyviolation", (e) => {
  window.__csp.push(e.violatedDirective + " " + e.blockedURI);
});
"""


def test_costs_grow_during_the_turn_and_queued_texts_show(
    page: Any, xum_web: XumServer, tmp_path: Path
) -> None:
    ws = xum_web.create_workspace("live-costs")
    page.reload()
    open_workspace(page, ws["id"])
    page.get_by_role("tab", name="Costs").click()
    cost = page.get_by_test_id("session-tokens-in")
    cost.wait_for()
    assert cost.inner_text() == "0"

    barrier = tmp_path / "release-costs"
    send(page, f"[live] {barrier}")
    # The first step (the tool call) is committed; the tool now waits on the barrier, so the
    # turn is still running: the panel already counts that step's tokens.
    page.locator(".tool-card .live-output", has_text=LIVE_FIRST).wait_for()
    try:
        wait_until(
            page,
            "() => document.querySelector('[data-testid=session-tokens-in]').textContent !== '0'",
        )
        assert page.get_by_test_id("workspace-state").get_attribute("data-state") == "streaming"

        # Messages queued meanwhile are listed by their text, in the order they will run.
        box = page.locator("textarea[data-composer]")
        box.fill("first queued note")
        box.press("Enter")  # after this step
        box.fill("second queued note")
        box.press("Control+Enter")  # after the turn
        queued = page.get_by_role("list").filter(has_text="first queued note")
        queued.wait_for()
        items = page.locator(".queued-list li")
        wait_until(page, "() => document.querySelectorAll('.queued-list li').length === 2")
        assert "after this step" in items.nth(0).inner_text()
        assert "first queued note" in items.nth(0).inner_text()
        assert "after the turn" in items.nth(1).inner_text()
        assert "second queued note" in items.nth(1).inner_text()
    finally:
        barrier.touch()
    page.locator(".queued-list").wait_for(state="detached", timeout=30_000)
    xum_web.wait_idle(ws["id"])


def test_the_header_follows_a_branch_switch(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("branch-before")
    page.reload()
    open_workspace(page, ws["id"])
    header = page.locator(".chat-header [data-testid='branch']")
    wait_until(page, "() => document.querySelector('.chat-header [data-testid=branch]')")
    assert header.inner_text() == "branch-before"
    send(page, "[checkout] branch-after")
    page.get_by_text("The tool finished").wait_for()
    wait_until(
        page,
        "() => document.querySelector('.chat-header [data-testid=branch]').textContent"
        " === 'branch-after'",
    )
    row = page.locator(f".ws-row[data-workspace-id='{ws['id']}'] .ws-sub")
    wait_until(
        page,
        "(id) => document.querySelector(`.ws-row[data-workspace-id='${id}'] .ws-sub`)"
        ".textContent.includes('branch-after')",
        ws["id"],
    )
    assert "branch-after" in row.inner_text()


def test_plan_file_diff_labels(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("plan-diff")
    xum_web.api("PATCH", f"/api/workspaces/{ws['id']}", json={"agent": "plan"})
    page.reload()
    open_workspace(page, ws["id"])
    send(page, "make a [plan]")
    card = page.locator(".tool-card[data-tool='file_edit_insert']")
    card.wait_for()  # an edit card opens with its diff shown
    header = card.locator(".diff .line.file").first
    header.wait_for()
    text = header.inner_text()
    assert text.startswith("--- a/") and "a//" not in text, text
    page.get_by_text("The plan is ready for review.").wait_for()


def test_mermaid_html_labels_cause_no_csp_violation(page: Any, xum_web: XumServer) -> None:
    reports: list[str] = []
    page.on(
        "console",
        lambda msg: reports.append(msg.text) if "Content Security Policy" in msg.text else None,
    )
    page.add_init_script(CSP_PROBE)
    ws = xum_web.create_workspace("mermaid-csp")
    page.reload()
    open_workspace(page, ws["id"])
    send(page, "show me some [xss]")
    diagram = page.locator(".mermaid-diagram svg")
    diagram.wait_for()
    # The HTML in the label is shown as the text it is.
    label = diagram.first.locator("g.node").first.text_content() or ""
    assert label.startswith("<img src=x") and "onerror" in label, label
    send(page, "show [rich] output")
    page.locator(".mermaid-diagram svg").nth(1).wait_for()
    page.wait_for_timeout(0)  # let queued violation events fire (no sleep: a task turn)
    violations = page.evaluate("window.__csp")
    assert violations == [] and reports == [], (violations, reports)
    assert page.evaluate("window.__xss") is None
