"""Desktop notifications in the browser (docs/notifications.md), with the Notification API
granted: an agent's `notify` call in a workspace the page is not showing becomes a notification
whose click opens that workspace; the bell (and Ctrl+Shift+,) turns "Notify on all responses" on
and off, and a response then notifies."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_support import XumServer, open_workspace, screenshot, send
from xum.testing.webui import wait_until

pytestmark = [pytest.mark.slow, pytest.mark.timeout(120)]

# Records every notification the page makes (and keeps it, so the test can click it): a
# subclass of the real API, so permission and construction are the browser's own.
RECORD_NOTIFICATIONS = """
(() => {
  const Real = window.Notification;
  if (!Real) return;
  window.__notices = [];
  class Recorded extends Real {
    constructor(title, options) {
      super(title, options);
      window.__notices.push({ title, body: (options || {}).body || "", notification: this });
    }
    static get permission() { return Real.permission; }
    static requestPermission(...args) { return Real.requestPermission(...args); }
  }
  window.Notification = Recorded;
})();
"""


def _granted(page: Any, browser_context: Any, xum_web: XumServer) -> None:
    browser_context.grant_permissions(["notifications"], origin=xum_web.url)
    page.add_init_script(RECORD_NOTIFICATIONS)
    page.reload()
    page.wait_for_selector("nav[aria-label='Projects and workspaces']")
    assert page.evaluate("Notification.permission") == "granted"


def _notices(page: Any) -> list[dict[str, str]]:
    found: list[dict[str, str]] = page.evaluate(
        "window.__notices.map(n => ({ title: n.title, body: n.body }))"
    )
    return found


def test_a_notify_call_notifies_and_the_click_opens_its_workspace(
    page: Any, browser_context: Any, xum_web: XumServer
) -> None:
    ws = xum_web.create_workspace("notifier")
    elsewhere = xum_web.create_workspace("notify-elsewhere")
    _granted(page, browser_context, xum_web)
    open_workspace(page, elsewhere["id"])
    before = len(_notices(page))

    xum_web.api(
        "POST", f"/api/workspaces/{ws['id']}/messages", json={"text": "[notify] Build finished"}
    )
    wait_until(page, "(n) => window.__notices.length > n", before)
    notice = _notices(page)[before]
    assert notice == {"title": "Build finished", "body": "notifier: sent by the fake model"}
    assert page.locator(f".main[data-workspace-id='{elsewhere['id']}']").count() == 1

    page.evaluate("(i) => window.__notices[i].notification.onclick()", before)
    page.wait_for_selector(f".main[data-workspace-id='{ws['id']}'] [data-transcript-ready='true']")
    screenshot(page, "notification-opened-1280")


def test_the_bell_and_its_shortcut_toggle_notify_on_all_responses(
    page: Any, browser_context: Any, xum_web: XumServer
) -> None:
    ws = xum_web.create_workspace("belled")
    _granted(page, browser_context, xum_web)
    open_workspace(page, ws["id"])
    main = page.locator(f".main[data-workspace-id='{ws['id']}']")

    main.get_by_role("button", name="Notifications").click()
    main.get_by_role("checkbox", name="Notify on all responses").click()
    main.get_by_role("button", name="Notifications: on for all responses").wait_for()
    assert xum_web.api("GET", f"/api/workspaces/{ws['id']}")["notifyOnResponse"] is True
    screenshot(page, "notify-bell-1280")

    page.keyboard.press("Control+Shift+Comma")
    main.get_by_role("button", name="Notifications", exact=True).wait_for()
    assert xum_web.api("GET", f"/api/workspaces/{ws['id']}")["notifyOnResponse"] is False
    page.keyboard.press("Control+Shift+Comma")
    main.get_by_role("button", name="Notifications: on for all responses").wait_for()

    before = len(_notices(page))
    send(page, "hello there")
    wait_until(page, "(n) => window.__notices.length > n", before)
    assert _notices(page)[before] == {"title": "Response complete", "body": "belled"}
