"""Long sessions in the browser: /compact with its progress and its collapsible summary card,
Start Here on a reply, /clear, the Context bar's threshold marker, and the idle badge."""

from __future__ import annotations

import os
from typing import Any

import pytest

from tests.e2e.browser_support import (
    COMPACT_SUMMARY,
    XumServer,
    open_workspace,
    screenshot,
    send,
)
from xum.testing.webui import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def command(page: Any, text: str) -> None:
    """Send a slash command: Esc closes the suggestions first (Enter would pick one)."""
    box = page.locator("textarea[data-composer]")
    box.fill(text)
    box.press("Escape")
    box.press("Enter")


def fresh(page: Any, xum_web: XumServer, name: str) -> dict[str, Any]:
    ws = xum_web.create_workspace(name)
    page.reload()
    open_workspace(page, ws["id"])
    return ws


def test_compact_shows_its_progress_then_a_collapsible_summary(
    page: Any, xum_web: XumServer
) -> None:
    ws = fresh(page, xum_web, "compact-ui")
    send(page, "hello [slowcompact]")
    page.get_by_text("Echo: hello [slowcompact]").wait_for()
    xum_web.wait_idle(ws["id"])
    command(page, "/compact")
    page.get_by_role("status").filter(has_text="Compacting the conversation").wait_for()
    screenshot(page, "compacting-1280")
    card = page.locator(".compaction-card")
    card.wait_for()
    assert "Compacted" in card.locator("summary").inner_text()
    body = card.locator(".compaction-body")
    assert not body.is_visible()  # collapsed until opened
    card.locator("summary").click()
    body.get_by_text(COMPACT_SUMMARY).wait_for()
    screenshot(page, "compaction-card-1280")
    # The earlier messages stay in the transcript above the boundary.
    assert page.get_by_text("Echo: hello [slowcompact]").is_visible()


def test_start_here_makes_a_reply_the_context(page: Any, xum_web: XumServer) -> None:
    ws = fresh(page, xum_web, "start-here-ui")
    send(page, "the plan is X")
    reply = page.locator("[data-role='assistant']").filter(has_text="Echo: the plan is X")
    reply.wait_for()
    xum_web.wait_idle(ws["id"])
    reply.get_by_role("button", name="Start Here").click()
    card = page.locator(".compaction-card[data-trigger='start_here']")
    card.wait_for()
    assert "Started here" in card.inner_text()
    events = xum_web.api("GET", f"/api/workspaces/{ws['id']}/history")["events"]
    boundary = next(e for e in events if e["type"] == "compaction")
    assert boundary["trigger"] == "start_here" and boundary["summary"].endswith(
        "Echo: the plan is X"
    )


def test_clear_empties_the_chat(page: Any, xum_web: XumServer) -> None:
    ws = fresh(page, xum_web, "clear-ui")
    send(page, "something to forget")
    page.get_by_text("Echo: something to forget").wait_for()
    xum_web.wait_idle(ws["id"])
    command(page, "/clear")
    page.get_by_text("Chat cleared.").wait_for()
    assert page.get_by_text("Echo: something to forget").count() == 0
    page.reload()  # and after a reload, from the server's history
    open_workspace(page, ws["id"])
    page.get_by_text("Chat cleared.").wait_for()
    assert page.get_by_text("something to forget").count() == 0


def test_the_context_bar_sets_the_threshold_per_model(page: Any, xum_web: XumServer) -> None:
    ws = fresh(page, xum_web, "threshold-ui")
    send(page, "fill some context")
    page.get_by_text("Echo: fill some context").wait_for()
    xum_web.wait_idle(ws["id"])
    page.get_by_role("tab", name="Costs").click()
    bar = page.get_by_test_id("context-bar")
    marker = bar.get_by_role("slider", name="Auto-compaction threshold")
    marker.wait_for()
    model = xum_web.api("GET", f"/api/workspaces/{ws['id']}/context")["model"]
    start = int(marker.get_attribute("aria-valuenow"))
    marker.focus()
    marker.press("ArrowLeft")
    label = page.get_by_test_id("auto-compact-label")
    wait_until(
        page,
        "(n) => document.querySelector('[role=slider]')?.getAttribute('aria-valuenow') === n",
        str(start - 1),
    )
    label.filter(has_text=f"Auto-compacts at {start - 1}%").wait_for()
    assert xum_web.api("GET", f"/api/workspaces/{ws['id']}/context")["threshold"] == start - 1
    # Drag the marker to the far right: auto-compaction is off for this model.
    meter = bar.locator(".threshold-meter")
    box = meter.bounding_box()
    handle = marker.bounding_box()
    page.mouse.move(handle["x"] + 1, handle["y"] + handle["height"] / 2)
    page.mouse.down()
    page.mouse.move(box["x"] + box["width"] + 20, box["y"] + box["height"] / 2, steps=5)
    page.mouse.up()
    label.filter(has_text="Auto-compaction is off").wait_for()
    context = xum_web.api("GET", f"/api/workspaces/{ws['id']}/context")
    assert context["threshold"] == 100 and context["autoCompact"] is False
    screenshot(page, "context-bar-1280")
    xum_web.api("PUT", "/api/settings/auto-compaction", json={"model": model, "threshold": 70})


def test_an_idle_compacted_workspace_has_the_badge(
    page: Any, xum_web: XumServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    ws = xum_web.create_workspace("idle-badge-ui")
    last = xum_web.api("GET", f"/api/workspaces/{ws['id']}")["status"]["lastSeq"]
    # What the server's idle check records once it compacted (tested in test_server_compaction).
    monkeypatch.setenv("XUM_ROOT", str(xum_web.root))
    from xum.store import registry

    record = registry.get_workspace(ws["id"])
    assert record is not None
    registry.update_workspace(ws["id"], extra={**record.extra, "idle_compacted_seq": last})
    os.environ["XUM_ROOT"] = str(xum_web.root)
    page.reload()
    row = page.locator(f".ws-row[data-workspace-id='{ws['id']}']")
    row.get_by_role("img", name="Compacted while idle").wait_for()


def test_goal_runs_its_continuations_and_says_how_it_ended(page: Any, xum_web: XumServer) -> None:
    ws = fresh(page, xum_web, "goal-ui")
    command(page, "/goal --turns 1 tidy the README")
    page.get_by_text("Goal: tidy the README").wait_for()
    page.get_by_text("The goal continues: an automatic turn.").wait_for()
    page.get_by_text("Goal stopped (goal turns): tidy the README").wait_for()
    xum_web.wait_idle(ws["id"])
    screenshot(page, "goal-notices-1280")
