"""Browser tests: a real `xum server` subprocess, the fake LLM, and Debian's Chromium driven by
Python Playwright (headless; browsers are never downloaded).

The fake model answers by keyword in the newest user prompt, so one server serves every test:
`[slow]` streams a long reply slowly, `[tool]` runs a bash tool call, `[live] <path>` runs a bash
command that prints a line and then waits until `<path>` exists, `[bg] <path>` starts a monitored
background command that prints two lines and ends once `<path>` exists, `[checkout] <name>` switches the
checkout to a new branch, `[edit]` inserts a line
into a file, `[todo]` writes a task list, `[xss]` answers with hostile Markdown, `[rich]` with
math and a diagram, `[fail]` with a provider error, `[ask]` asks a question (plan mode), `[plan]`
writes and proposes a plan (plan mode); anything else is echoed (its last line).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shlex
import shutil
import subprocess
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.webui import (
    CHROMIUM,
    GIT,
    REPO_ROOT,
    XumServer,
    make_repo,
    start_server,
    ui_built,
    wait_until,
)

__all__ = ["GIT", "XumServer", "make_repo", "wait_until"]

TOKEN = "browser-test-token-4242"
SCREENSHOTS = REPO_ROOT / "test-artifacts" / "screenshots"
DESKTOP = {"width": 1280, "height": 800}
PHONE = {"width": 375, "height": 740}

SLOW_WORDS = 120
SLOW_TEXT = " ".join(f"word{i}" for i in range(SLOW_WORDS)) + " END-OF-SLOW-REPLY"
XSS_TEXT = (
    "Careful: <img src=x onerror=\"window.__xss='model-html'\"> and "
    "[click me](javascript:window.__xss='model-link') and "
    "![pixel](javascript:window.__xss='model-image') and "
    "$$\\href{javascript:window.__xss='katex'}{math}$$ done.\n\n"
    "```mermaid\ngraph TD\n"
    "  A[\"<img src=x onerror=window.__xss='mermaid'>\"] --> B[Next]\n"
    "  click A \"javascript:window.__xss='mermaid-click'\"\n```\n"
)
TOOL_SCRIPT = "echo tool-output-42"
LIVE_FIRST = "live-first-line"
LIVE_LAST = "live-after-the-barrier"


def live_script(barrier: str) -> str:
    """Prints a line, blocks until `barrier` exists (the test creates it), prints another."""
    wait = f"while [ ! -e {shlex.quote(barrier)} ]; do sleep 0.02; done"
    return f"echo {LIVE_FIRST}; {wait}; echo {LIVE_LAST}"


BG_NAME = "bg watcher"


def background_call(barrier: str) -> dict[str, Any]:
    """`[bg] <path>`: a monitored background command that prints two lines, then ends once
    `barrier` exists (its end wakes the workspace)."""
    wait = f"while [ ! -e {shlex.quote(barrier)} ]; do sleep 0.02; done"
    return {
        "script": f"echo bg line one; echo bg line two; {wait}; echo bg finished",
        "display_name": BG_NAME,
        "run_in_background": True,
        "monitor": {},
    }


RICH_TEXT = (
    "Euler: $$e^{i\\pi} + 1 = 0$$ costs $5.\n\n"
    "$$\n\\sum_{k=1}^{n} k = \\frac{n(n+1)}{2}\n$$\n\n"
    "```mermaid\ngraph TD\n  A[Start the long running import job now] --> B[Finish]\n  A --> C{Check the results twice}\n```\n\n"
    "```python\ndef f(x):\n    return x * 2\n```\n"
)
PLAN_MD = "# Plan\n\n1. Add a **cache** in front of the API.\n2. Measure the hit ratio.\n"
EDIT_LINE = "added by the agent"
TODOS = [
    {"content": "Read the code", "status": "completed"},
    {"content": "Writing the tests", "status": "in_progress"},
    {"content": "Ship it", "status": "pending"},
]
QUESTION = {
    "question": "Which database should the cache use?",
    "header": "Database",
    "multiSelect": False,
    "options": [
        {"label": "Redis", "description": "An in-memory store."},
        {"label": "SQLite", "description": "A file next to the app."},
    ],
}


def skip_without_chromium() -> None:
    """Skip only when Chromium is missing and this is not CI (in CI a missing browser fails)."""
    if Path(CHROMIUM).exists():
        return
    if os.environ.get("CI"):
        pytest.fail(f"{CHROMIUM} is missing in CI: `make deps-system` installs it")
    pytest.skip(f"{CHROMIUM} is not installed (`make deps-system` installs it)")


def _last_prompt(messages: list[dict[str, Any]]) -> tuple[str, bool]:
    """(newest user text, whether the newest message is a tool result)."""
    after_tool = False
    for i, message in enumerate(reversed(messages)):
        content = message.get("content")
        parts = content if isinstance(content, list) else [{"type": "text", "text": content}]
        if i == 0 and any(p.get("type") == "tool_result" for p in parts):
            after_tool = True
        if message.get("role") != "user":
            continue
        texts = [p.get("text", "") for p in parts if p.get("type") == "text"]
        text = "\n".join(t for t in texts if t)
        if text:
            return text, after_tool
    return "", after_tool


def _last_tool(messages: list[dict[str, Any]]) -> str | None:
    for message in reversed(messages):
        if message.get("role") == "assistant" and isinstance(message.get("content"), list):
            for part in message["content"]:
                if part.get("type") == "tool_use":
                    return str(part.get("name"))
            return None
    return None


def _system_text(body: dict[str, Any]) -> str:
    system = body.get("system", "")
    if isinstance(system, list):
        return "\n".join(str(p.get("text", "")) for p in system if isinstance(p, dict))
    return str(system)


AFTER_TOOL = {
    "bash": "The tool finished: tool-output-42 seen.",
    "todo_write": "Tasks noted.",
    "propose_plan": "The plan is ready for review.",
    "ask_user_question": "Answer noted.",
    "notify": "You have been notified.",
}


COMPACT_SUMMARY = "SUMMARY: the user said hello and the agent answered."


def responder(request: fakellm.RecordedRequest) -> fakellm.Reply:
    body = request.json or {}
    messages = body.get("messages", [])
    if '<agent id="compact"' in _system_text(body):
        # A summarization pass; "[slowcompact]" anywhere in the conversation makes it slow.
        slow = "[slowcompact]" in json.dumps(messages)
        return fakellm.text(COMPACT_SUMMARY, chunk_size=4, delay=0.15 if slow else 0)
    choice = body.get("tool_choice")
    if isinstance(choice, dict) and choice.get("type") == "tool":
        # A forced step (the plan agent must end with propose_plan): make the call.
        return fakellm.tool_call(str(choice["name"]), {})
    if messages and messages[-1].get("role") == "assistant":
        # A continuation after a reply that skipped the agent's required tool.
        offered = {t.get("name") for t in body.get("tools", [])}
        if "propose_plan" in offered:
            return fakellm.tool_call("propose_plan", {})
        return fakellm.text("Done.")
    text, after_tool = _last_prompt(messages)
    if after_tool:
        tool = _last_tool(messages)
        if tool == "file_edit_insert" and "[edit]" in text:
            return fakellm.text("The file is edited.")
        if tool == "file_edit_insert":
            return fakellm.tool_call("propose_plan", {})
        return fakellm.text(AFTER_TOOL.get(tool or "", "Done."))
    if "[plan]" in text:
        match = re.search(r"(/\S+/plans/\S+?\.md)", _system_text(body))
        if match is None:
            return fakellm.text("No plan file path in the system prompt.")
        args = {
            "path": match.group(1),
            "content": PLAN_MD,
            "insert_after": None,
            "insert_before": None,
        }
        return fakellm.tool_call("file_edit_insert", args)
    if "[edit]" in text:
        args = {
            "path": "notes.txt",
            "content": EDIT_LINE + "\n",
            "insert_after": None,
            "insert_before": None,
        }
        return fakellm.tool_call("file_edit_insert", args)
    if "[todo]" in text:
        return fakellm.tool_call("todo_write", {"todos": TODOS})
    if "[ask]" in text:
        return fakellm.tool_call("ask_user_question", {"questions": [QUESTION]})
    notify = re.search(r"\[notify\] (.+)", text)
    if notify is not None:
        args = {"title": notify.group(1)[:64], "message": "sent by the fake model"}
        return fakellm.tool_call("notify", args)
    if "[rich]" in text:
        return fakellm.text(RICH_TEXT)
    if "[slow]" in text:
        return fakellm.text(SLOW_TEXT, chunk_size=6, delay=0.03)
    if "[tool]" in text:
        return fakellm.tool_call("bash", {"script": TOOL_SCRIPT, "display_name": "echo test"})
    checkout = re.search(r"\[checkout\] ([A-Za-z0-9._-]+)", text)
    if checkout is not None:
        script = f"git checkout -q -b {checkout.group(1)}"
        return fakellm.tool_call("bash", {"script": script, "display_name": "switch branch"})
    approve = re.search(r"\[approve\] (.+)", text)
    if approve is not None:
        script = approve.group(1)
        return fakellm.tool_call("bash", {"script": script, "display_name": "needs approval"})
    bg = re.search(r"\[bg\] (\S+)", text)
    if bg is not None:
        return fakellm.tool_call("bash", background_call(bg.group(1)))
    live = re.search(r"\[live\] (\S+)", text)
    if live is not None:
        script = live_script(live.group(1))
        return fakellm.tool_call("bash", {"script": script, "display_name": "live test"})
    if "[xss]" in text:
        return fakellm.text(XSS_TEXT)
    if "[fail]" in text:
        return fakellm.error(400, message="the fake provider refused this request")
    prompt = text.strip().splitlines()[-1] if text.strip() else ""
    return fakellm.text(f"Echo: {prompt}")


def screenshot(page: Any, name: str) -> Path:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    path = SCREENSHOTS / f"{name}.png"
    page.screenshot(path=str(path))
    return path


def ensure_ui_built() -> None:
    if ui_built():
        return
    if shutil.which("npm") is None:
        pytest.fail("the web UI is not built and npm is missing: run `make build-web`")
    # Under pytest-xdist several workers get here at once: one builds, the others wait on the
    # lock and then find the build there.
    REPO_ROOT.joinpath("test-artifacts").mkdir(exist_ok=True)
    with open(REPO_ROOT / "test-artifacts" / ".build-web.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not ui_built():
            subprocess.run(["make", "build-web"], cwd=REPO_ROOT, check=True, timeout=600)


def fake_env(fake: FakeLLM) -> dict[str, str]:
    """A server's environment with the fake LLM as its Anthropic provider."""
    return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}


@contextmanager
def browser_fake(
    reply: Callable[[fakellm.RecordedRequest], fakellm.Reply] = responder,
    models: list[str] | None = None,
) -> Iterator[FakeLLM]:
    """For a module's server of its own, once Chromium and the built UI are there: a fake LLM
    answering with `reply` (and listing `models` when given), stopped after."""
    skip_without_chromium()
    ensure_ui_built()
    fake = (FakeLLM() if models is None else FakeLLM(models=models)).start()
    fake.set_responder(reply)
    try:
        yield fake
    finally:
        fake.stop()


@contextmanager
def serving(base: Path, env: dict[str, str], token: str | None = TOKEN) -> Iterator[XumServer]:
    """A `xum server` at `base` with `env`, stopped after."""
    server = start_server(base, token, env)
    try:
        yield server
    finally:
        server.stop()


# ---- Page helpers ----------------------------------------------------------------------------


def open_workspace(page: Any, workspace_id: str) -> None:
    """Select a workspace from the sidebar (opening the drawer first on a phone)."""
    nav = page.locator("nav[aria-label='Projects and workspaces']")
    if page.viewport_size["width"] < 760 and nav.count() == 0:
        page.get_by_role("button", name="Toggle sidebar").first.click()
    page.locator(f".ws-row[data-workspace-id='{workspace_id}']").click()
    page.wait_for_selector(
        f".main[data-workspace-id='{workspace_id}'] [data-transcript-ready='true']"
    )


def open_new_workspace(
    browser_context: Any, server: XumServer, name: str
) -> tuple[Any, dict[str, Any], list[str]]:
    """A new workspace `name` opened in a new signed-in page: (the page, the workspace, the
    page's errors as they happen)."""
    ws = server.create_workspace(name)
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{server.url}/?token={TOKEN}")
    open_workspace(page, ws["id"])
    return page, ws, errors


def signed_in_page(browser_context: Any, server: XumServer) -> tuple[Any, list[str]]:
    """A new page signed in to `server`, its sidebar shown: (the page, its errors as they
    happen)."""
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{server.url}/?token={TOKEN}")
    page.wait_for_selector("nav[aria-label='Projects and workspaces']")
    return page, errors


def agent_dialog(page: Any, agent: str) -> Any:
    """The new-workspace dialog opened with the external agent `agent` picked and the local
    runtime chosen (the caller fills in the rest and clicks Create)."""
    page.keyboard.press("Alt+n")
    dialog = page.get_by_role("dialog", name="New workspace")
    choice = dialog.get_by_label("Agent")
    choice.locator(f"option[value={agent}]").wait_for(state="attached")
    choice.select_option(agent)
    dialog.get_by_label("Runtime").select_option("local")
    return dialog


def send(page: Any, text: str) -> None:
    box = page.locator("textarea[data-composer]")
    box.fill(text)
    box.press("Enter")


def assistant_texts(page: Any) -> list[str]:
    texts: list[str] = page.locator("[data-role='assistant'] .md").all_inner_texts()
    return texts


def wait_for_reply(page: Any, text: str) -> None:
    """Wait until a finished assistant reply shows `text`."""
    wait_until(
        page,
        "(text) => [...document.querySelectorAll(\"[data-role='assistant'] .md\")]"
        ".some((el) => el.innerText.includes(text))",
        text,
    )


def streaming_text(page: Any) -> str:
    loc = page.locator("[data-role='assistant-streaming'] .md")
    return str(loc.inner_text()) if loc.count() else ""


def wait_for_streamed_words(page: Any, at_least: int, timeout_ms: int = 15000) -> None:
    """Wait until the in-flight reply shows at least `at_least` words of the slow reply."""
    wait_until(
        page,
        """(n) => {
            const el = document.querySelector("[data-role='assistant-streaming'] .md");
            return !!el && el.innerText.split(/\\s+/).filter(Boolean).length >= n;
        }""",
        at_least,
        timeout=timeout_ms / 1000,
    )
