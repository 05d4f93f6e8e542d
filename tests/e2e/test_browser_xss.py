"""Repository-controlled strings and model output are never interpreted as HTML: a branch name,
a file path, a workspace title and model output that carry `<img ... onerror=...>`, and a
Markdown link with `javascript:`, all render inert. Each payload would set `window.__xss`."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser_support import GIT, XumServer, make_repo, open_workspace, screenshot, send

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

BRANCH = "<img/src=x/onerror=window.__xss='branch'>"
FILE = "<img src=x onerror=window.__xss='path'>.txt"
TITLE = "<img src=x onerror=window.__xss='title'>"
PROJECT_DIR = "<img src=x onerror=window.__xss='project'>"


def hostile_repo(base: Path) -> Path:
    repo = make_repo(base / PROJECT_DIR)
    subprocess.run([*GIT, "checkout", "-q", "-b", BRANCH], cwd=repo, check=True)
    (repo / FILE).write_text("<script>window.__xss='content'</script>\n")
    (repo / "app.py").write_text("def greet():\n    return '<img src=x onerror=window.__xss=1>'\n")
    return repo


def assert_inert(page: Any) -> None:
    assert page.evaluate("window.__xss") is None
    assert page.locator("img[onerror]").count() == 0
    assert page.locator("img").count() == 0  # no image from any payload was created
    assert page.locator("script:not([type='module'])").count() == 0
    hrefs = page.locator("a[href]").evaluate_all("els => els.map(e => e.getAttribute('href'))")
    assert not [h for h in hrefs if h.lower().startswith(("javascript:", "data:"))]


def test_hostile_strings_render_inert(page: Any, xum_web: XumServer, tmp_path: Path) -> None:
    repo = hostile_repo(tmp_path)
    xum_web.api("POST", "/api/projects", json={"path": str(repo)})
    ws = xum_web.api(
        "POST",
        "/api/workspaces",
        json={"projectPath": str(repo), "runtime": {"type": "local"}, "title": TITLE},
    )
    page.reload()
    open_workspace(page, ws["id"])

    # The title and the project's directory name are shown as the text they are.
    page.locator(".chat-title .t", has_text=TITLE).wait_for()
    page.locator(".project-header .name", has_text=PROJECT_DIR).wait_for()

    # Model output with raw HTML and a javascript: link.
    send(page, "show me some [xss]")
    page.get_by_text("done.").wait_for()
    inert = page.locator(".inert-link", has_text="click me")
    inert.wait_for()
    inert.click()
    assert page.get_by_text("<img src=x onerror=").count() >= 1  # shown literally
    # KaTeX runs untrusted (no \\href), Mermaid in strict mode, and both outputs are sanitized.
    page.locator(".math-inline .katex").wait_for()
    diagram = page.locator(".mermaid-diagram svg")
    diagram.wait_for()
    diagram.locator("g.node").first.click()

    # The review pane lists the file path and shows the diff, as text.
    page.get_by_role("tab", name="Review").click()
    page.get_by_test_id("git-branch").wait_for()
    assert page.get_by_test_id("git-branch").inner_text() == BRANCH
    page.locator(".file-list .path", has_text=FILE).wait_for()
    page.locator(".diff .line", has_text="onerror=window.__xss=1").first.wait_for()
    screenshot(page, "xss-inert-1280")
    assert_inert(page)
