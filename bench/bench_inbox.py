"""Attention inbox latency of `xum server`: 10 agents each ask for an approval at once; how long
until the item is in every connected client's inbox, and until it leaves them all once answered.

Setup: a real `xum server` subprocess (its own `$XUM_ROOT`), the fake LLM server on a thread of
this process, and `CLIENTS` WebSocket clients in one process of their own (so they share no GIL
with the fake server or this driver). Each of `AGENTS` workspaces runs in the `ask` permission
mode; all get a message at once, and the fake model answers each with one `bash` call, which
waits for an approval.

What is measured, per item and client:
- `added`: from the moment the server made the item (its `since`, the server's wall clock, in
  ms) to the moment the client's `recv()` returned the `inbox-added` message (the client's wall
  clock, same machine). The item is made in the same loop step as the approval request, so this
  is request -> every inbox.
- `added_from_model`: from the moment the fake model was asked for the reply holding the tool
  call (CLOCK_MONOTONIC of this process) to the same receipt (CLOCK_MONOTONIC of the client
  process): the model's stream, the engine, the approval gate and the fan-out together.
- `removed`: from just before the driver's `POST /api/inbox/{id}/approve` to the client's
  receipt of `inbox-removed` (both CLOCK_MONOTONIC).
The aim is an `added` p99 under 100 ms. Figures are percentiles of one run on a shared machine.

Then, on the same server, the browser round (`browser`): Debian's Chromium, driven by
Playwright as the browser tests drive it, opens the web UI and its inbox panel; `AGENTS` new
workspaces each ask for an approval; once all ten show in the panel, Approve once is clicked on
each in turn, waiting for the item to leave the panel before the next click. `clear_all_ms` is
from the first click to the last item gone; `per_item` is each click to its item's removal from
the page (the POST, the server's answer path, `inbox-removed`, React's render). Skipped, with the
reason, where Chromium or the built web UI is absent.
"""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from bench.util import percentile
from xum.testing import fakellm
from xum.testing.webui import CHROMIUM, chromium_launch_args, ui_built

XUM = str(Path(sys.executable).with_name("xum"))
AGENTS = 10
CLIENTS = 5
TOKEN = "bench-token-0123456789abcdef"
MODEL = "anthropic:claude-sonnet-5-5"
AGENT_MARK = re.compile(r"inbox agent (\d+)")


class Asked:
    """When the fake model was asked for each agent's tool call (monotonic, this process)."""

    def __init__(self) -> None:
        self.at: dict[int, float] = {}
        self._lock = threading.Lock()

    def responder(self, request: Any) -> fakellm.Reply:
        text = json.dumps(request.json.get("messages", []))
        found = AGENT_MARK.search(text)
        agent = int(found.group(1)) if found else -1
        if "tool_result" in text:
            return fakellm.reply("done")
        with self._lock:
            self.at[agent] = time.monotonic()
        return fakellm.tool_call(
            "bash", {"script": f"touch agent-{agent}.txt", "display_name": "touch"}
        )


def _start_server(root: Path, fake_url: str) -> tuple[subprocess.Popen[str], str]:
    env = dict(os.environ)
    env.update(
        XUM_ROOT=str(root),
        HOME=str(root.parent),
        XUM_SERVER_AUTH_TOKEN=TOKEN,
        ANTHROPIC_API_KEY="bench-key",
        ANTHROPIC_BASE_URL=fake_url,
    )
    proc = subprocess.Popen(
        [XUM, "server", "--port", "0"],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    line = proc.stdout.readline()
    if "listening on" not in line:
        proc.kill()
        raise RuntimeError(f"xum server did not start: {line!r}")
    return proc, line.split("listening on ", 1)[1].strip()


async def _clients(url: str, count: int, agents: int) -> dict[str, Any]:
    """The client process: `count` sockets; READY once every one has its inbox snapshot; then
    the receipt times of every item's addition and removal, until all `agents` items left."""
    import orjson
    import websockets

    headers = {"Authorization": f"Bearer {TOKEN}"}
    ws_url = url.replace("http://", "ws://") + "/api/ws"
    out: dict[str, Any] = {"added": [], "removed": []}
    ready = 0
    all_ready = asyncio.Event()

    async def one(k: int) -> None:
        nonlocal ready
        seen: dict[str, str] = {}  # item id -> workspace id
        gone = 0
        async with websockets.connect(
            ws_url, additional_headers=headers, max_size=None, compression=None
        ) as ws:
            await ws.send(orjson.dumps({"type": "inbox-subscribe"}).decode())
            while orjson.loads(await ws.recv())["type"] != "inbox":
                pass
            ready += 1
            if ready == count:
                all_ready.set()
            async with asyncio.timeout(120):
                while gone < agents:
                    raw = await ws.recv()
                    wall, mono = time.time(), time.monotonic()
                    msg = orjson.loads(raw)
                    if msg["type"] == "inbox-added" and msg["item"]["kind"] == "approval":
                        item = msg["item"]
                        seen[item["id"]] = item["workspaceId"]
                        out["added"].append(
                            [k, item["id"], item["summary"], item["since"], wall, mono]
                        )
                    elif msg["type"] == "inbox-removed" and msg["id"] in seen:
                        gone += 1
                        out["removed"].append([k, msg["id"], mono])

    tasks = [asyncio.create_task(one(k)) for k in range(count)]
    await all_ready.wait()
    print("READY", flush=True)
    await asyncio.gather(*tasks)
    return out


async def _round(url: str, project: Path, asked: Asked) -> dict[str, Any]:
    import httpx

    headers = {"Authorization": f"Bearer {TOKEN}"}
    async with httpx.AsyncClient(base_url=url, headers=headers, timeout=60) as client:
        ids = []
        for _ in range(AGENTS):
            body = {"projectPath": str(project), "runtime": {"type": "local"}, "model": MODEL}
            res = await client.post("/api/workspaces", json=body)
            res.raise_for_status()
            wid = res.json()["id"]
            await client.patch(f"/api/workspaces/{wid}", json={"permissions": "ask"})
            ids.append(wid)
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "bench.bench_inbox",
            "--clients",
            url,
            str(CLIENTS),
            str(AGENTS),
            stdout=asyncio.subprocess.PIPE,
            cwd=str(Path(__file__).resolve().parents[1]),
        )
        assert proc.stdout is not None
        if (await proc.stdout.readline()).strip() != b"READY":
            raise RuntimeError("bench clients failed to connect")
        await asyncio.gather(
            *(
                client.post(f"/api/workspaces/{wid}/messages", json={"text": f"inbox agent {k}"})
                for k, wid in enumerate(ids)
            )
        )
        # Every approval waits; answer each (once) and time its way out of every inbox.
        answered: dict[str, float] = {}
        waiting: list[dict[str, Any]] = []
        async with asyncio.timeout(60):
            while len(waiting) < AGENTS:
                items = (await client.get("/api/inbox")).json()["items"]
                waiting = [i for i in items if i["kind"] == "approval"]
                if len(waiting) < AGENTS:
                    await asyncio.sleep(0.05)  # the driver's own poll; the clients never poll
        for item in waiting:
            answered[item["id"]] = time.monotonic()
            res = await client.post(f"/api/inbox/{item['id']}/approve", json={"decision": "once"})
            res.raise_for_status()
        out, _ = await proc.communicate()
    data = json.loads(out)
    added = [wall - since / 1000 for _k, _id, _s, since, wall, _m in data["added"]]
    from_model = []
    for _k, _id, summary, _since, _wall, mono in data["added"]:
        found = re.search(r"agent-(\d+)\.txt", summary)
        if found and int(found.group(1)) in asked.at:
            from_model.append(mono - asked.at[int(found.group(1))])
    removed = [mono - answered[i] for _k, i, mono in data["removed"] if i in answered]
    return {
        "agents": AGENTS,
        "clients": CLIENTS,
        "deliveries": len(added),
        "missing": AGENTS * CLIENTS - len(added),
        "added": _figures(added),
        "added_from_model": _figures(from_model),
        "removed": _figures(removed),
    }


def _figures(samples: list[float]) -> dict[str, float | None]:
    return {
        "p50_ms": round(percentile(samples, 50) * 1000, 2) if samples else None,
        "p99_ms": round(percentile(samples, 99) * 1000, 2) if samples else None,
        "max_ms": round(max(samples) * 1000, 2) if samples else None,
    }


def _browser_round(url: str, project: Path) -> dict[str, Any]:
    """Ten approvals cleared from the browser's inbox panel, one Approve once click each."""
    if not Path(CHROMIUM).exists():
        return {"skipped": f"{CHROMIUM} is not installed (make deps-system)"}
    if not ui_built():
        return {"skipped": "the web UI is not built (make build-web)"}
    import httpx
    from playwright.sync_api import sync_playwright

    headers = {"Authorization": f"Bearer {TOKEN}"}
    with httpx.Client(base_url=url, headers=headers, timeout=60) as client, sync_playwright() as pw:
        browser = pw.chromium.launch(**chromium_launch_args())
        try:
            context = browser.new_context(viewport={"width": 1280, "height": 800})
            context.request.post(f"{url}/api/auth/login", data={"token": TOKEN})
            page = context.new_page()
            page.set_default_timeout(60_000)  # every wait below is bounded
            page.goto(f"{url}/")
            page.get_by_role("button", name=re.compile(r"^Inbox: \d+ waiting$")).click()
            panel = page.locator("section[aria-label='Inbox']")
            panel.wait_for()
            ids = []
            for _ in range(AGENTS):
                body = {"projectPath": str(project), "runtime": {"type": "local"}, "model": MODEL}
                res = client.post("/api/workspaces", json=body)
                res.raise_for_status()
                client.patch(f"/api/workspaces/{res.json()['id']}", json={"permissions": "ask"})
                ids.append(res.json()["id"])
            for k, wid in enumerate(ids):
                text = f"inbox agent {100 + k}"
                client.post(f"/api/workspaces/{wid}/messages", json={"text": text})
            approvals = panel.locator(".inbox-item[data-kind='approval']")
            approvals.nth(AGENTS - 1).wait_for()
            items = [approvals.nth(k).get_attribute("data-item-id") for k in range(AGENTS)]
            per_item = []
            began = time.monotonic()
            for item_id in items:
                row = panel.locator(f".inbox-item[data-item-id='{item_id}']")
                clicked = time.monotonic()
                row.get_by_role("button", name="Approve once").click()
                row.wait_for(state="detached")
                per_item.append(time.monotonic() - clicked)
            clear_all = time.monotonic() - began
            left = approvals.count()
        finally:
            browser.close()
    return {
        "agents": AGENTS,
        "cleared": len(per_item),
        "approvals_left": left,
        "clear_all_ms": round(clear_all * 1000, 1),
        "per_item": _figures(per_item),
    }


def run() -> dict[str, Any]:
    asked = Asked()
    server = fakellm.FakeLLM().start()
    server.set_responder(asked.responder)
    try:
        with tempfile.TemporaryDirectory(prefix="xum-bench-inbox-") as tmp:
            base = Path(tmp)
            project = base / "project"
            project.mkdir()
            root = base / ".xum"
            proc, url = _start_server(root, server.url)
            try:
                result = asyncio.run(_round(url, project, asked))
                result["browser"] = _browser_round(url, project)
            finally:
                proc.send_signal(signal.SIGTERM)
                proc.wait(timeout=30)
    finally:
        server.stop()
    return {
        **result,
        "aim": "added p99 < 100 ms (request -> item in every connected inbox)",
        "method": "item `since` (server wall clock) vs client recv() wall clock, same machine",
    }


if __name__ == "__main__":
    if sys.argv[1:2] == ["--clients"]:
        times = asyncio.run(_clients(sys.argv[2], int(sys.argv[3]), int(sys.argv[4])))
        print(json.dumps(times), flush=True)
    else:
        print(json.dumps(run(), indent=2))
