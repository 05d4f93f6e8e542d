"""Streaming in the browser: interrupting a turn, reloading mid-stream, losing the WebSocket,
two workspaces streaming at once, and forking."""

from __future__ import annotations

from typing import Any

import pytest

from tests.e2e.browser_support import (
    SLOW_TEXT,
    XumServer,
    assistant_texts,
    open_workspace,
    screenshot,
    send,
    wait_for_streamed_words,
    wait_until,
)
from xum.testing.webui import write_long_session

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def _final_text(page: Any) -> str:
    page.get_by_text("END-OF-SLOW-REPLY").wait_for(timeout=20000)
    page.wait_for_selector("[data-role='assistant'] .md >> text=END-OF-SLOW-REPLY")
    texts = assistant_texts(page)
    return texts[-1].strip()


def test_interrupt_a_running_turn_with_escape(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("interrupt")
    page.reload()
    open_workspace(page, ws["id"])
    send(page, "a [slow] answer please")
    wait_for_streamed_words(page, 5)
    page.wait_for_selector(f".ws-row[data-workspace-id='{ws['id']}'][data-status='streaming']")
    screenshot(page, "chat-streaming-1280")
    page.locator("textarea[data-composer]").press("Escape")
    page.get_by_text("Turn interrupted.").wait_for()
    page.wait_for_selector(f".ws-row[data-workspace-id='{ws['id']}'][data-status='idle']")
    state = xum_web.wait_idle(ws["id"])
    assert state["status"]["state"] == "idle"
    # What streamed before the interrupt is kept, and the reply stopped short.
    kept = assistant_texts(page)[-1]
    assert kept.startswith("word0 word1")
    assert "END-OF-SLOW-REPLY" not in kept


def test_reload_mid_stream_continues_the_stream(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("reload")
    page.reload()
    open_workspace(page, ws["id"])
    send(page, "[slow] please")
    wait_for_streamed_words(page, 10)
    page.reload()
    # After the reload the in-flight reply comes back (the server's partial) and keeps growing.
    page.wait_for_selector(f".main[data-workspace-id='{ws['id']}'] [data-transcript-ready='true']")
    wait_for_streamed_words(page, 20)
    assert _final_text(page) == SLOW_TEXT


def test_websocket_loss_reconnects_and_resumes(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("reconnect")
    sockets: list[Any] = []

    def route(socket: Any) -> None:
        server = socket.connect_to_server()
        sockets.append((socket, server))

    page.route_web_socket("**/api/ws", route)
    page.reload()
    open_workspace(page, ws["id"])
    page.wait_for_selector("[data-connection='open']")
    send(page, "[slow] again")
    wait_for_streamed_words(page, 10)
    # Drop the connection from the server side, as a network change would.
    first_socket, first_server = sockets[0]
    first_server.close()
    first_socket.close()
    page.wait_for_selector("[data-connection='open']", timeout=15000)
    assert len(sockets) >= 2  # a new socket was opened
    # Nothing lost and nothing doubled: the finished reply is exactly the model's text.
    assert _final_text(page) == SLOW_TEXT


def test_two_workspaces_stream_at_once(page: Any, xum_web: XumServer) -> None:
    a = xum_web.create_workspace("para-a")
    b = xum_web.create_workspace("para-b")
    page.reload()
    open_workspace(page, a["id"])
    send(page, "[slow] first")
    wait_for_streamed_words(page, 3)
    open_workspace(page, b["id"])
    send(page, "[slow] second")
    wait_for_streamed_words(page, 3)
    # Both run at the same time: the sidebar shows both streaming.
    for w in (a, b):
        page.wait_for_selector(f".ws-row[data-workspace-id='{w['id']}'][data-status='streaming']")
    screenshot(page, "two-streaming-1280")
    assert _final_text(page) == SLOW_TEXT
    open_workspace(page, a["id"])
    assert _final_text(page) == SLOW_TEXT


def test_fork_copies_the_conversation(page: Any, xum_web: XumServer) -> None:
    if not xum_web.has_route("POST", "/api/workspaces/{}/fork"):
        pytest.skip("this server has no fork route (docs/api.md: 'when supported')")
    ws = xum_web.create_workspace("forkme")
    page.reload()
    open_workspace(page, ws["id"])
    send(page, "remember the word pineapple")
    page.get_by_text("Echo: remember the word pineapple").wait_for()
    xum_web.wait_idle(ws["id"])
    row = page.locator(f".ws-row[data-workspace-id='{ws['id']}']")
    row.hover()
    row.get_by_role("button", name="Fork workspace").click()
    dialog = page.get_by_role("dialog", name="Fork forkme", exact=False)
    dialog.get_by_label("Fork name").fill("forked")
    dialog.get_by_role("button", name="Fork").click()
    wait_until(
        page,
        "(id) => { const m = document.querySelector('.main[data-workspace-id]');"
        " return m && m.dataset.workspaceId !== id; }",
        ws["id"],
    )
    fork_id = page.locator(".main[data-workspace-id]").get_attribute("data-workspace-id")
    assert fork_id != ws["id"]
    page.get_by_text("Echo: remember the word pineapple").wait_for()
    send(page, "and now in the fork")
    page.get_by_text("Echo: and now in the fork").wait_for()
    # The original is untouched.
    open_workspace(page, ws["id"])
    page.get_by_text("Echo: remember the word pineapple").wait_for()
    assert page.get_by_text("Echo: and now in the fork").count() == 0


def test_long_history_loads_older_pages_on_scroll(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("long-history", runtime="local")
    # Written before the server opens this workspace's log (it has had no turn yet).
    write_long_session(xum_web.root, ws["id"], 1000)
    page.reload()
    open_workspace(page, ws["id"])
    transcript = page.locator(".transcript")
    page.get_by_text("Please do step 499.").wait_for()
    # Windowed: far fewer rows in the DOM than messages.
    assert page.locator(".transcript .row").count() < 60
    for _ in range(60):
        if page.get_by_text("Please do step 0.", exact=True).count():
            break
        transcript.evaluate("el => { el.scrollTop = 0; }")
        page.wait_for_timeout(150)
    page.get_by_text("Please do step 0.", exact=True).wait_for()
    assert page.locator(".transcript .row").count() < 60
