"""A real `xum server` in a subprocess and Debian's Chromium, for the browser tests and the UI
benchmark. Playwright is imported by the callers (it is a dev dependency); nothing here needs it.

Chromium is always Debian's `/usr/bin/chromium`: browsers are never downloaded.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = (
    "--no-sandbox",  # as root (CI) Chromium cannot use its sandbox
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
)
GIT = ["git", "-c", "user.name=Test", "-c", "user.email=test@example.com"]
REPO_ROOT = Path(__file__).resolve().parents[3]
STATIC_INDEX = Path(__file__).resolve().parents[1] / "server" / "static" / "index.html"
XUM = str(Path(sys.executable).with_name("xum"))


def chromium_launch_args() -> dict[str, Any]:
    """Keyword arguments for `playwright.chromium.launch`."""
    return {"executable_path": CHROMIUM, "args": list(CHROMIUM_ARGS), "headless": True}


def wait_until(page: Any, script: str, arg: Any = None, timeout: float = 15.0) -> Any:
    """Poll `script` (a JS function taking `arg`) in the page until it returns a truthy value.

    The server's Content-Security-Policy forbids eval, which Playwright's wait_for_function
    relies on; page.evaluate goes through the DevTools protocol and is not affected."""
    deadline = time.monotonic() + timeout
    while True:
        value = page.evaluate(script, arg)
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for: {script}")
        time.sleep(0.05)


def ui_built() -> bool:
    return STATIC_INDEX.is_file()


def make_repo(path: Path, branch: str = "main") -> Path:
    """A git repository with one commit."""
    path.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", "-b", branch], cwd=path, check=True)
    (path / "app.py").write_text("def greet():\n    return 'hi'\n")
    subprocess.run([*GIT, "add", "."], cwd=path, check=True)
    subprocess.run([*GIT, "commit", "-qm", "init"], cwd=path, check=True)
    return path


@dataclass
class XumServer:
    """A running `xum server` with its own HOME and XUM_ROOT."""

    url: str
    token: str
    process: subprocess.Popen[str]
    home: Path
    root: Path
    repo: Path
    env: dict[str, str]
    generated_token: bool = False  # the server made (or reused) its own token
    output: list[str] = field(default_factory=list)

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"}

    def api(self, method: str, path: str, **kwargs: Any) -> Any:
        res = httpx.request(method, self.url + path, headers=self.headers, timeout=15, **kwargs)
        if res.status_code >= 400:
            raise AssertionError(f"{method} {path}: {res.status_code} {res.text}")
        return res.json() if res.content else None

    def has_route(self, method: str, path: str) -> bool:
        """Whether the server routes `METHOD path` (path parameters written as `{}`)."""
        doc = self.api("GET", "/openapi.json")
        routes = {
            (m.upper(), re.sub(r"\{[^}]+\}", "{}", p))
            for p, methods in doc["paths"].items()
            for m in methods
        }
        return (method.upper(), path) in routes

    def create_workspace(
        self, name: str, project: Path | None = None, runtime: str = "worktree"
    ) -> dict[str, Any]:
        project = project or self.repo
        self.api("POST", "/api/projects", json={"path": str(project)})
        body = {"projectPath": str(project), "runtime": {"type": runtime}, "name": name}
        ws: dict[str, Any] = self.api("POST", "/api/workspaces", json=body)
        return ws

    def wait_idle(self, workspace_id: str, timeout: float = 20) -> dict[str, Any]:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            ws: dict[str, Any] = self.api("GET", f"/api/workspaces/{workspace_id}")
            if ws["status"]["state"] != "streaming":
                return ws
            time.sleep(0.1)
        raise AssertionError(f"workspace {workspace_id} still streaming after {timeout}s")

    def stop(self) -> None:
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout=5)


def server_env(home: Path, extra: dict[str, str]) -> dict[str, str]:
    """This process's environment without provider settings or XUM_*, plus `extra`."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.endswith(("_API_KEY", "_BASE_URL", "_AUTH_TOKEN")) and not k.startswith("XUM_")
    }
    env.update(
        HOME=str(home),
        XUM_ROOT=str(home / ".xum"),
        GIT_AUTHOR_NAME="Test",
        GIT_AUTHOR_EMAIL="test@example.com",
        GIT_COMMITTER_NAME="Test",
        GIT_COMMITTER_EMAIL="test@example.com",
    )
    env.update(extra)
    return env


def start_server(
    base: Path, token: str | None, env_extra: dict[str, str], repo: Path | None = None
) -> XumServer:
    """Start `xum server` on a free loopback port with a private HOME under `base`. With
    `token=None` the server generates (or reuses) its own, read from the sign-in link it prints."""
    home = base / "home"
    home.mkdir(parents=True, exist_ok=True)
    repo = repo or make_repo(base / "repo")
    env = server_env(home, env_extra)
    return _spawn(home, repo, token, env, base)


def restart(server: XumServer, *, same_port: bool = False, token: str | None = None) -> XumServer:
    """Stop the server and start a new one on the same HOME: on a new port, or on the same one
    (so an open page can reconnect to it). `token`: a token of its own for the new server;
    without it a server that was given one gets it again, and one that generated its own
    generates (or reuses) one again."""
    port = int(server.url.rsplit(":", 1)[1]) if same_port else 0
    server.stop()
    given = token if token is not None else (None if server.generated_token else server.token)
    return _spawn(server.home, server.repo, given, server.env, server.home.parent, port)


def _spawn(
    home: Path, repo: Path, token: str | None, env: dict[str, str], cwd: Path, port: int = 0
) -> XumServer:
    args = ["--auth-token", token] if token is not None else []
    process = subprocess.Popen(
        [XUM, "server", "--host", "127.0.0.1", "--port", str(port), *args],
        env=env,
        cwd=cwd,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    output: list[str] = []
    deadline = time.monotonic() + 30
    url = None
    while time.monotonic() < deadline:
        line = process.stdout.readline()
        if not line:
            break
        output.append(line)
        match = re.search(r"listening on (http://\S+)", line)
        if match:
            url = match.group(1)
        link = re.search(r"sign in: \S+\?token=(\S+)", line)
        if link and token is None:
            token = unquote(link.group(1))
        if url is not None and token is not None:
            break
    if url is None or token is None:
        process.kill()
        process.wait(timeout=5)
        raise AssertionError("xum server did not start:\n" + "".join(output))
    server = XumServer(
        url=url,
        token=token,
        generated_token="--auth-token" not in args,
        process=process,
        home=home,
        root=home / ".xum",
        repo=repo,
        env=env,
        output=output,
    )
    threading.Thread(target=_pump, args=(process, output), daemon=True).start()
    return server


def _pump(process: subprocess.Popen[str], sink: list[str]) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        sink.append(line)


def _reply(i: int) -> str:
    text = f"Step {i}: I read the module and changed **two** functions. See `parse_{i}()`.\n\n"
    if i % 10 == 0:
        text += f"```python\ndef parse_{i}(s):\n    return s.split(',')\n```\n\n"
    if i % 25 == 0:
        text += "| file | lines |\n|---|---|\n| a.py | 12 |\n| b.py | 40 |\n\n"
    return text + "- [x] tests pass\n- [ ] docs updated\n"


def write_long_session(root: Path, workspace_id: str, messages: int) -> None:
    """Append `messages` (half user, half assistant, in turns) to a workspace's session log with
    the real log writer. Run it while no server has the workspace open."""
    previous = os.environ.get("XUM_ROOT")
    os.environ["XUM_ROOT"] = str(root)  # the log writer finds the sessions directory here
    try:
        _append_turns(workspace_id, messages)
    finally:
        if previous is None:
            os.environ.pop("XUM_ROOT", None)
        else:
            os.environ["XUM_ROOT"] = previous


def _append_turns(workspace_id: str, messages: int) -> None:
    from xum.llm.types import text_message
    from xum.store import frame_types as ev
    from xum.store.sessionlog import SessionLog

    usage = {
        "input_tokens": 1200,
        "output_tokens": 80,
        "cache_read_tokens": 1000,
        "cache_write_tokens": 0,
        "reasoning_tokens": 0,
    }
    log = SessionLog.open(workspace_id, purpose="bench")
    log.begin_write(purpose="bench fill")
    try:
        batch: list[ev.FrameSpec] = []
        for i in range(messages // 2):
            turn = f"bench-turn-{i:05d}"
            batch += [
                ev.spec(ev.TURN_START, {"turn_id": turn}),
                ev.spec(ev.USER_MESSAGE, {"message": text_message("user", f"Please do step {i}.")}),
                ev.spec(ev.STEP_START, {"turn_id": turn, "step": 1}),
                ev.spec(
                    ev.ASSISTANT_MESSAGE,
                    {
                        "message": text_message("assistant", _reply(i)),
                        "usage": usage,
                        "finish_reason": "stop",
                        "model": "anthropic:claude-sonnet-5-5",
                        "cost_usd": 0.001,
                        "step": 1,
                    },
                ),
                ev.spec(ev.TURN_END, {"turn_id": turn, "reason": "completed"}),
            ]
            if len(batch) >= 1000:
                log.append_many(batch)
                batch = []
        if batch:
            log.append_many(batch)
    finally:
        log.end_write()
        log.close()
