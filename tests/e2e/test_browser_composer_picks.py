"""Picking things in the browser: one Enter runs a slash command picked from the suggestions,
`@` offers the workspace's files (from the server's checkout listing), Add project takes `~/`
paths and has a folder browser, and the New workspace dialog checks out an existing branch."""

from __future__ import annotations

import subprocess
from typing import Any

import pytest

from tests.e2e.browser_support import GIT, XumServer, make_repo, open_workspace, send

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]


def composer(page: Any) -> Any:
    return page.locator("textarea[data-composer]")


def test_one_enter_runs_a_picked_slash_command(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("one-enter")
    page.reload()
    open_workspace(page, ws["id"])
    send(page, "something to forget")
    page.get_by_text("Echo: something to forget").wait_for()
    xum_web.wait_idle(ws["id"])
    box = composer(page)
    box.press_sequentially("/cle")
    page.get_by_role("listbox", name="Slash commands").wait_for()
    box.press("Enter")  # once: /clear needs nothing more
    page.get_by_text("Chat cleared").wait_for()
    assert box.input_value() == ""


def test_at_offers_the_workspace_files(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("mentions")
    page.reload()
    open_workspace(page, ws["id"])
    box = composer(page)
    box.press_sequentially("look at @ap")
    listbox = page.get_by_role("listbox", name="File mentions")
    listbox.get_by_role("option", name="@app.py").wait_for()
    box.press("Enter")  # takes the highlighted path; does not send
    assert box.input_value() == "look at @app.py "
    box.press_sequentially("please")
    box.press("Enter")
    page.get_by_text("Echo: look at @app.py please").wait_for()
    # An e-mail address is no mention.
    box.press_sequentially("mail me@ap")
    page.wait_for_timeout(300)  # longer than the suggestions' debounce: nothing may open
    assert page.get_by_role("listbox", name="File mentions").count() == 0


def test_add_project_with_the_folder_browser_and_home_paths(page: Any, xum_web: XumServer) -> None:
    picked = make_repo(xum_web.home / "src" / "picked")
    typed = make_repo(xum_web.home / "typed")
    page.get_by_role("button", name="Add project").first.click()
    dialog = page.get_by_role("dialog", name="Add project")
    dialog.get_by_role("button", name="Browse folders…").click()
    browser = dialog.get_by_role("group", name="Folder browser")
    browser.get_by_role("button", name="src").click()
    browser.get_by_role("button", name="picked").click()
    field = dialog.get_by_label("Project directory")
    for _ in range(50):
        if field.input_value() == str(picked.resolve()):
            break
        page.wait_for_timeout(100)
    assert field.input_value() == str(picked.resolve())
    dialog.get_by_role("button", name="Add").click()
    page.get_by_role("dialog", name="New workspace").wait_for()
    page.keyboard.press("Escape")
    projects = [p["path"] for p in xum_web.api("GET", "/api/projects")["projects"]]
    assert str(picked.resolve()) in projects

    page.get_by_role("button", name="Add project").first.click()
    dialog = page.get_by_role("dialog", name="Add project")
    dialog.get_by_label("Project directory").fill("~/typed")
    dialog.get_by_role("button", name="Add").click()
    page.get_by_role("dialog", name="New workspace").wait_for()
    page.keyboard.press("Escape")
    projects = [p["path"] for p in xum_web.api("GET", "/api/projects")["projects"]]
    assert str(typed.resolve()) in projects


def test_new_workspace_checks_out_an_existing_branch(page: Any, xum_web: XumServer) -> None:
    repo = make_repo(xum_web.home / "branchy")
    subprocess.run([*GIT, "branch", "existing-work"], cwd=repo, check=True)
    xum_web.api("POST", "/api/projects", json={"path": str(repo)})
    page.reload()
    page.get_by_role("button", name="New workspace in branchy").click()
    dialog = page.get_by_role("dialog", name="New workspace")
    dialog.get_by_label("Branch or name").fill("existing-work")
    dialog.get_by_role("button", name="Create").click()
    dialog.wait_for(state="detached")
    listed = xum_web.api("GET", "/api/workspaces")["workspaces"]
    ws = next(w for w in listed if w["projectPath"] == str(repo.resolve()))
    assert ws["branch"] == "existing-work" and ws["name"] == "existing-work"
