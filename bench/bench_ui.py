"""The web UI on a long workspace: time to the first paint of a 5,000-message transcript and the
page's JS heap, in Debian's Chromium against a real `xum server`.

The workspace's session log is written with the real log writer (2,500 turns: a user message
and a Markdown reply each, 5,000 messages) while the server is stopped, then the server is
started on it. Each load is a fresh browser context (cold HTTP cache), opened straight on the
workspace; the figure is the `xum:transcript-painted` performance mark the UI sets on the first
animation frame after the transcript rendered (milliseconds from navigation start). The
baseline is the same measurement on an empty workspace, in the same run.
"""

from __future__ import annotations

import statistics
import tempfile
from pathlib import Path
from typing import Any

from xum.testing.webui import (
    CHROMIUM,
    chromium_launch_args,
    restart,
    start_server,
    ui_built,
    wait_until,
    write_long_session,
)

MESSAGES = 5000
LOADS = 5
TOKEN = "bench-ui-token"


def _measure(browser: Any, url: str, workspace_id: str) -> tuple[float, int, int]:
    """(paint ms, JS heap used bytes, transcript rows in the DOM) of one cold load."""
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    try:
        context.request.post(f"{url}/api/auth/login", data={"token": TOKEN})
        page = context.new_page()
        page.goto(f"{url}/#/w/{workspace_id}")
        wait_until(
            page,
            "() => performance.getEntriesByName('xum:transcript-painted').length > 0",
            timeout=30,
        )
        paint = page.evaluate("performance.getEntriesByName('xum:transcript-painted')[0].startTime")
        cdp = context.new_cdp_session(page)
        cdp.send("HeapProfiler.collectGarbage")
        cdp.send("Performance.enable")
        metrics = {m["name"]: m["value"] for m in cdp.send("Performance.getMetrics")["metrics"]}
        rows = page.locator(".transcript .row").count()
        return float(paint), int(metrics.get("JSHeapUsedSize", 0)), rows
    finally:
        context.close()


def run() -> dict[str, Any]:
    if not Path(CHROMIUM).exists():
        return {"skipped": f"{CHROMIUM} is not installed (make deps-system)"}
    if not ui_built():
        return {"skipped": "the web UI is not built (make build-web)"}
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="xum-bench-ui-") as tmp:
        base = Path(tmp)
        # No provider is needed: nothing is sent to a model.
        server = start_server(base, TOKEN, {"ANTHROPIC_API_KEY": "unused"})
        try:
            empty = server.create_workspace("bench-empty", runtime="local")
            long = server.create_workspace("bench-long", runtime="local")
            server.stop()
            write_long_session(server.root, long["id"], MESSAGES)
            server = restart(server)
            page = server.api(
                "GET", f"/api/workspaces/{long['id']}/history?beforeSeq=999999999&limit=1"
            )
            committed = page["logLastSeq"]
            with sync_playwright() as pw:
                browser = pw.chromium.launch(**chromium_launch_args())
                try:
                    _measure(browser, server.url, long["id"])  # warm the server's caches
                    base_runs = [_measure(browser, server.url, empty["id"]) for _ in range(LOADS)]
                    runs = [_measure(browser, server.url, long["id"]) for _ in range(LOADS)]
                finally:
                    browser.close()
        finally:
            server.stop()

    paint = statistics.median(r[0] for r in runs)
    base_paint = statistics.median(r[0] for r in base_runs)
    heap = statistics.median(r[1] for r in runs)
    base_heap = statistics.median(r[1] for r in base_runs)
    return {
        "messages": MESSAGES,
        "log_frames": committed,
        "loads": LOADS,
        "first_paint_ms": round(paint, 1),
        "first_paint_ms_all": [round(r[0], 1) for r in runs],
        "baseline_empty_first_paint_ms": round(base_paint, 1),
        "paint_ratio_vs_empty": round(paint / base_paint, 2) if base_paint else None,
        "js_heap_used_mb": round(heap / 2**20, 2),
        "baseline_empty_js_heap_used_mb": round(base_heap / 2**20, 2),
        "rows_in_dom": runs[-1][2],
        "target_first_paint_ms": 1000,
        "meets_target": paint < 1000,
    }
