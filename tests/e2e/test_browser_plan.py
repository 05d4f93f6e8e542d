"""Plan mode in the browser: `ask_user_question` as a form, `propose_plan` as a plan card, and
rich Markdown (KaTeX math, a Mermaid diagram, highlighted code) under the server's CSP."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_support import PLAN_MD, XumServer, open_workspace, screenshot, send
from xum.testing.fakellm import FakeLLM

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def plan_workspace(page: Any, xum_web: XumServer, name: str) -> dict[str, Any]:
    ws = xum_web.create_workspace(name)
    xum_web.api("PATCH", f"/api/workspaces/{ws['id']}", json={"agent": "plan"})
    page.reload()
    open_workspace(page, ws["id"])
    page.locator(".pill.mode-plan").wait_for()
    return ws


def test_ask_user_question_is_answered_in_a_form(
    page: Any, xum_web: XumServer, fake_model: FakeLLM
) -> None:
    ws = plan_workspace(page, xum_web, "ask")
    send(page, "please [ask] me first")
    form = page.locator(".tool-card[data-tool='ask_user_question'] form.question-form")
    form.wait_for()
    page.wait_for_selector(f".ws-row[data-workspace-id='{ws['id']}'][data-status='waiting']")
    form.get_by_label("SQLite").check()
    screenshot(page, "ask-user-question-1280")
    form.get_by_role("button", name="Submit answers").click()
    page.get_by_text("Answer noted.").wait_for()
    card = page.locator(".tool-card[data-tool='ask_user_question']")
    assert "SQLite" in card.inner_text()
    # The model got the answer as the tool's result.
    bodies = [r.body.decode("utf-8", "replace") for r in fake_model.requests]
    assert any("The user answered" in b and "SQLite" in b for b in bodies)


def test_propose_plan_shows_a_plan_card(page: Any, xum_web: XumServer) -> None:
    plan_workspace(page, xum_web, "planner")
    send(page, "make a [plan]")
    card = page.locator(".plan-card")
    card.wait_for()
    page.get_by_text("The plan is ready for review.").wait_for()
    body = card.locator(".plan-body")
    assert body.locator("strong", has_text="cache").count() == 1  # rendered Markdown
    card.get_by_role("button", name="Show Text").click()
    assert body.locator("pre").inner_text() == PLAN_MD
    card.get_by_role("button", name="Show Markdown").click()
    body.locator("strong", has_text="cache").wait_for()
    screenshot(page, "plan-card-1280")


def test_math_diagrams_and_code_render(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("rich")
    page.reload()
    open_workspace(page, ws["id"])
    send(page, "show [rich] output")
    reply = page.locator("[data-role='assistant'] .md").last
    reply.locator(".math-inline .katex").wait_for()
    reply.locator(".math-display .katex-display").wait_for()
    reply.locator(".mermaid-diagram svg").wait_for()
    reply.locator("code.language-python .hljs-keyword").first.wait_for()
    assert "costs $5." in reply.inner_text()  # a single $ is not math
    assert reply.locator(".mermaid-diagram svg foreignObject, .mermaid-diagram script").count() == 0
    screenshot(page, "rich-markdown-1280")
