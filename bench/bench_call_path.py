"""The call path from a message to the provider request (issue 20): which xum modules run code
on the way, and how often the path climbs back up the layers.

A profile hook (`sys.setprofile`, and `threading.setprofile` for the threads the run starts: the
event loop's workers, the server's loop thread) watches a real in-process turn against the fake
LLM server. The window opens when the message is sent and closes at the first call of the
provider transport (`xum.llm.http.WireClient._post`, the function that writes the request).
Imports are kept out: a warm-up turn runs first in the same process, and module top-level code
(`<module>`) is not counted.

- `modules`: the distinct `xum.*` modules with a function that ran in the window;
- `climbs`: the distinct (caller module, called module) pairs where the caller's layer is lower
  than the called function's (core < store,llm < tools,runtime < context < engine < workspaces <
  host < cli,tui,server,acp): a callback or a call back up the stack. The caller is the frame
  that called (`contextlib`'s wrappers skipped); a coroutine resumed by the event loop has no xum
  caller, so resumptions count no climb. `climb_calls` counts every such call.

Paths: `run_first` (`xum run`'s `execute` with a new workspace, as `xum run "task"` does after
reading its flags, to the first request), `run_step` (from the first request to the second: the
reply streamed, one `bash` tool call, the next request) and `server_first` (the first message
of a new workspace through `POST /api/workspaces/{id}/messages` of the in-process app, to the
request; opening the session is on this path) and `server_next` (the next message of the same
workspace, its session open: the path of a message alone). Besides modules and climbs:
`functions`, the distinct xum functions that ran, and `calls`, every call of one (a coroutine's
resumption counts as a call, as the profiler reports it): the work on the path, which splitting a
module into two does not change.
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import threading
import time
import warnings
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

from bench.util import git_repo
from xum.testing import fakellm

MODEL = "anthropic:claude-sonnet-5-5"
LAYERS: dict[str, int] = {
    "core": 0,
    "store": 1,
    "llm": 1,
    "tools": 2,
    "runtime": 2,
    "context": 3,
    "engine": 4,
    "workspaces": 5,
    "host": 6,
    "cli": 7,
    "tui": 7,
    "server": 7,
    "acp": 7,
}
SKIPPED_CALLERS = ("contextlib",)  # wrappers between a caller and its context manager
STOP = ("xum.llm.http", "_post")


def layer(module: str) -> int | None:
    parts = module.split(".")
    return LAYERS.get(parts[1]) if len(parts) > 1 and parts[0] == "xum" else None


@dataclass
class Window:
    """What ran between `open()` and the `stops`-th provider request."""

    stops: int = 1
    active: bool = False
    seen_stops: int = 0
    modules: set[str] = field(default_factory=set)
    climbs: set[tuple[str, str]] = field(default_factory=set)
    climb_calls: int = 0
    functions: set[tuple[str, str]] = field(default_factory=set)
    calls: int = 0
    counts: Counter[str] = field(default_factory=Counter)
    done: threading.Event = field(default_factory=threading.Event)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def open(self, stops: int = 1, *, reset_at_first: bool = False) -> None:
        self.stops, self.seen_stops, self.reset_at_first = stops, 0, reset_at_first
        self.modules, self.climbs, self.climb_calls = set(), set(), 0
        self.functions, self.calls = set(), 0
        self.counts = Counter()
        self.stop_frames = set()
        self.done.clear()
        self.active = True

    reset_at_first: bool = False
    stop_frames: set[int] = field(default_factory=set)

    def hook(self, frame: FrameType, event: str, arg: Any) -> None:
        if event != "call" or not self.active:
            return
        module = frame.f_globals.get("__name__", "")
        if not module.startswith("xum.") or module.startswith("xum.testing"):
            return
        code = frame.f_code
        if code.co_name == "<module>":
            return
        with self.lock:
            if not self.active:
                return
            if (module, code.co_name) == STOP:
                # `_post` is an async generator: each resumption is a call; count new frames.
                if id(frame) in self.stop_frames:
                    return
                self.stop_frames.add(id(frame))
                self.seen_stops += 1
                if self.seen_stops == 1 and self.reset_at_first and self.stops > 1:
                    # The step window: start counting at the first request.
                    self.modules, self.climbs, self.climb_calls = set(), set(), 0
                    self.functions, self.calls = set(), 0
                    self.counts = Counter()
                self.modules.add(module)
                if self.seen_stops >= self.stops:
                    self.active = False
                    self.done.set()
                return
            self.modules.add(module)
            self.functions.add((module, code.co_qualname))
            self.calls += 1
            self.counts[f"{module}.{code.co_qualname}"] += 1
            caller = frame.f_back
            while caller is not None and caller.f_globals.get("__name__", "").startswith(
                SKIPPED_CALLERS
            ):
                caller = caller.f_back
            if caller is None:
                return
            source = caller.f_globals.get("__name__", "")
            low, high = layer(source), layer(module)
            if low is not None and high is not None and low < high:
                self.climbs.add((source, module))
                self.climb_calls += 1

    def figures(self) -> dict[str, Any]:
        return {
            "modules": len(self.modules),
            "climbs": len(self.climbs),
            "climb_calls": self.climb_calls,
            "functions": len(self.functions),
            "calls": self.calls,
            "module_list": sorted(self.modules),
            "climb_list": sorted(f"{a} -> {b}" for a, b in self.climbs),
            "function_list": sorted(f"{m}.{f}" for m, f in self.functions),
            "most_called": dict(self.counts.most_common()),
        }


def _env(root: Path, url: str) -> None:
    os.environ.update(
        XUM_ROOT=str(root / ".xum"),
        HOME=str(root),
        ANTHROPIC_API_KEY="bench",
        ANTHROPIC_BASE_URL=url,
    )


def _run_once(repo: Path, window: Window | None, stops: int, reset_at_first: bool) -> None:
    from xum.cli.render import QuietRenderer
    from xum.cli.run_flow import RunRequest, execute
    from xum.runtime.git import WorkTreeQuery

    request = RunRequest(
        text="bench task",
        directory=repo,
        model=MODEL,
        runtime="local",
        runtime_given=False,
        mode="exec",
        mode_given=False,
        thinking=None,
        budget=None,
        renderer=QuietRenderer(),
    )
    if window is not None:
        window.open(stops, reset_at_first=reset_at_first)
    request.project = WorkTreeQuery(repo.resolve())
    outcome = asyncio.run(execute(request))
    if outcome.exit_code != 0:
        raise RuntimeError(f"xum run failed: {outcome.reason} {outcome.extra}")


def _script(server: fakellm.FakeLLM) -> None:
    server.script(
        fakellm.tool_call("bash", {"script": "true", "display_name": "noop"}, chunk_size=0),
        fakellm.text("done", chunk_size=0),
    )


def measure_run(tmp: Path) -> dict[str, Any]:
    window = Window()
    repo = git_repo(tmp / "run")
    with fakellm.FakeLLM() as server:
        _env(tmp / "run", server.url)
        _script(server)
        _run_once(repo, None, 1, False)  # warm-up: imports, caches
        sys.setprofile(window.hook)
        threading.setprofile(window.hook)
        try:
            _script(server)
            _run_once(repo, window, 1, False)
            first = window.figures()
            _script(server)
            _run_once(repo, window, 2, True)
            step = window.figures()
        finally:
            sys.setprofile(None)
            threading.setprofile(None)  # type: ignore[arg-type]
    return {"run_first": first, "run_step": step}


def measure_server(tmp: Path) -> dict[str, Any]:
    warnings.filterwarnings("ignore", message="Using `httpx` with `starlette.testclient`")
    from starlette.testclient import TestClient

    from xum.server.app import create_app
    from xum.server.state import ServerConfig

    token = "bench-token-0123456789"
    auth = {"Authorization": f"Bearer {token}"}
    window = Window()
    figures: dict[str, Any] = {}
    repo = git_repo(tmp / "server")
    with fakellm.FakeLLM() as server:
        _env(tmp / "server", server.url)
        threading.setprofile(window.hook)  # the app's loop thread and its workers
        try:
            app = create_app(ServerConfig(token=token, maintenance_interval_s=3600.0))
            with TestClient(app, base_url="http://localhost:3000") as client:
                for traced in (False, True):
                    server.script(fakellm.text("done", chunk_size=0))
                    body = {"projectPath": str(repo), "runtime": {"type": "local"}, "model": MODEL}
                    made = client.post("/api/workspaces", json=body, headers=auth)
                    wid = made.json()["id"]
                    if traced:
                        window.open(1)
                    sent = client.post(
                        f"/api/workspaces/{wid}/messages", json={"text": "bench task"}, headers=auth
                    )
                    if sent.status_code != 202:
                        raise RuntimeError(f"send failed: {sent.status_code} {sent.text}")
                    server.wait_for_requests(len(server.requests) or 1, timeout=60)
                    _wait_idle(client, wid, auth)
                if not window.done.is_set():
                    raise RuntimeError("the provider request was not seen")
                figures["server_first"] = window.figures()
                # The next message of the same workspace: its session is open, so this is the
                # path of a message alone, without opening anything.
                server.script(fakellm.text("again", chunk_size=0))
                window.open(1)
                sent = client.post(
                    f"/api/workspaces/{wid}/messages", json={"text": "next"}, headers=auth
                )
                if sent.status_code != 202:
                    raise RuntimeError(f"send failed: {sent.status_code} {sent.text}")
                if not window.done.wait(60):
                    raise RuntimeError("the second provider request was not seen")
                figures["server_next"] = window.figures()
                _wait_idle(client, wid, auth)
        finally:
            threading.setprofile(None)  # type: ignore[arg-type]
    return figures


def _wait_idle(client: Any, wid: str, auth: dict[str, str]) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        status = client.get(f"/api/workspaces/{wid}", headers=auth).json()["status"]
        if status["state"] == "idle":
            return
        time.sleep(0.05)
    raise RuntimeError("the workspace did not go idle")


def run() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as tmp:
        out = measure_run(Path(tmp))
        out.update(measure_server(Path(tmp)))
    for figures in out.values():
        # The lists make the JSON long; the counts are the figures (`--lists` keeps them).
        if "--lists" not in sys.argv:
            figures.pop("module_list", None)
            figures.pop("climb_list", None)
            figures.pop("function_list", None)
            figures.pop("most_called", None)
    return out


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
