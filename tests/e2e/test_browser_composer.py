"""The composer and its pickers in the browser: slash suggestions from the server's registry
(`/model`, `/fork`), the agent picker with a project's own agents, renaming from the palette,
the composer's keys, edit and task-list cards, and a write-only provider key in Settings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser_support import (
    EDIT_LINE,
    PHONE,
    XumServer,
    open_workspace,
    screenshot,
    send,
    wait_for_streamed_words,
    wait_until,
)
from xum.testing.webui import make_repo

pytestmark = [pytest.mark.slow, pytest.mark.timeout(90)]

SONNET = "anthropic:claude-sonnet-5-5"


def composer(page: Any) -> Any:
    return page.locator("textarea[data-composer]")


def user_texts(page: Any) -> list[str]:
    texts: list[str] = page.locator("[data-role='user']").all_inner_texts()
    return texts


def test_slash_suggestions_run_model_and_fork(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("slash-source")
    page.reload()
    open_workspace(page, ws["id"])
    box = composer(page)

    # `/` lists the registry: the chat commands first, each with what it takes.
    box.fill("/")
    popover = page.get_by_role("listbox", name="Slash commands")
    popover.wait_for()
    options = popover.get_by_role("option")
    assert options.nth(0).inner_text().startswith("/model")
    assert options.nth(1).inner_text().startswith("/fork")
    commands = popover.locator("[data-kind='command']").all_inner_texts()
    names = ["/model", "/fork", "/compact", "/clear", "/goal", "/idle"]
    assert len(commands) == len(names)
    assert all(c.startswith(n) for c, n in zip(commands, names, strict=True)), commands
    screenshot(page, "slash-popover-1280")
    box.fill("/+")  # the thinking-only override; accepting it waits for the level
    assert popover.get_by_role("option").first.inner_text().startswith("/+")
    box.press("Tab")
    assert box.input_value() == "/+"
    box.fill("/")

    # Pick `/model` with the keyboard: narrow, move down and back, accept with Enter.
    box.press_sequentially("mo")
    box.press("ArrowDown")
    box.press("ArrowUp")
    assert popover.get_by_role("option", selected=True).inner_text().startswith("/model")
    box.press("Enter")
    assert box.input_value() == "/model "
    box.press_sequentially("sonnet")
    box.press("Enter")
    page.wait_for_selector(f"[data-model='{SONNET}']")
    assert xum_web.api("GET", f"/api/workspaces/{ws['id']}")["model"] == SONNET
    assert box.input_value() == ""
    assert user_texts(page) == []  # a command, not a message: nothing went to the model

    # A bare `/model` opens the model picker instead.
    box.fill("/model")
    box.press("Escape")  # close the suggestions, keep the text
    box.press("Enter")
    page.get_by_role("dialog", name="Models").wait_for()
    page.keyboard.press("Escape")

    # `/fork name`, then the fork's first message on the next line: the UI moves to the fork.
    box.fill("/fork slash-fork")
    box.press("Escape")
    box.press("Shift+Enter")
    box.press_sequentially("hello from the fork")
    box.press("Enter")
    wait_until(
        page,
        "(id) => { const m = document.querySelector('.main[data-workspace-id]');"
        " return m && m.dataset.workspaceId !== id; }",
        ws["id"],
    )
    fork_id = page.locator(".main[data-workspace-id]").get_attribute("data-workspace-id")
    page.get_by_text("Echo: hello from the fork").wait_for()
    fork = xum_web.api("GET", f"/api/workspaces/{fork_id}")
    assert fork["name"] == "slash-fork" and fork["model"] == SONNET
    assert page.locator(f".ws-row[data-workspace-id='{fork_id}']").count() == 1
    open_workspace(page, ws["id"])
    assert composer(page).input_value() == ""  # the command did not stay behind as a draft
    assert user_texts(page) == []


def test_agent_picker_lists_the_projects_agents(
    page: Any, xum_web: XumServer, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "agents-repo")
    agents = repo / ".xum" / "agents"
    agents.mkdir(parents=True)
    (agents / "review.md").write_text(
        "---\nname: Review\ndescription: Terse reviewer feedback\nbase: exec\n"
        "ui:\n  color: '#aa3366'\n---\nReview the change.\n"
    )
    (agents / "hidden-one.md").write_text(
        "---\nname: Hidden\nbase: exec\nui:\n  hidden: true\n---\n"
    )
    ws = xum_web.create_workspace("agents", project=repo, runtime="local")
    page.reload()
    open_workspace(page, ws["id"])

    page.locator("[data-agent]").click()
    menu = page.get_by_role("dialog", name="Agent")
    menu.get_by_text("Terse reviewer feedback").wait_for()
    names = menu.get_by_role("option").all_inner_texts()
    assert any(n.startswith("Review") for n in names)
    assert not any("Hidden" in n for n in names)
    screenshot(page, "agent-picker-1280")
    menu.get_by_role("option").filter(has_text="Terse reviewer feedback").click()
    page.wait_for_selector("[data-agent='review']")
    assert xum_web.api("GET", f"/api/workspaces/{ws['id']}")["agent"] == "review"

    # Ctrl+. steps to the next agent of the list; Ctrl+Shift+A opens the picker.
    page.keyboard.press("Control+Period")
    wait_until(page, "() => document.querySelector('[data-agent]').dataset.agent !== 'review'")
    page.keyboard.press("Control+Shift+A")
    page.get_by_role("dialog", name="Agent").wait_for()
    page.keyboard.press("Escape")


def test_rename_workspace_from_the_palette(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("before-rename")
    page.reload()
    open_workspace(page, ws["id"])
    page.keyboard.press("Control+Shift+P")
    page.keyboard.type(">rename")
    page.locator("[data-entry='rename']").wait_for()
    page.keyboard.press("Enter")
    dialog = page.get_by_role("dialog", name="Rename workspace")
    field = dialog.get_by_label("Workspace name")
    assert field.input_value() == "before-rename"
    field.fill("after-rename")
    field.press("Enter")
    dialog.wait_for(state="detached")
    renamed = xum_web.api("GET", f"/api/workspaces/{ws['id']}")
    assert renamed["name"] == "after-rename" and renamed["branch"] == "after-rename"
    page.get_by_test_id("branch").filter(has_text="after-rename").wait_for()


def test_composer_keys_newline_queue_and_model_cycle(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("composer-keys")
    page.reload()
    open_workspace(page, ws["id"])
    box = composer(page)

    # Shift+Enter is a newline, not a send.
    box.fill("line one")
    box.press("Shift+Enter")
    box.press_sequentially("line two")
    assert box.input_value() == "line one\nline two"
    assert user_texts(page) == []
    box.press("Enter")
    page.get_by_text("Echo: line two").wait_for()

    # Ctrl+Enter while a turn runs: queued after the turn, then run as its own turn.
    send(page, "a [slow] one")
    wait_for_streamed_words(page, 3)
    box.fill("after the turn")
    box.press("Control+Enter")
    page.get_by_text("1 queued message").wait_for()
    assert "after this step" not in page.locator(".queue-bar").first.inner_text()
    page.get_by_text("Echo: after the turn").wait_for(timeout=30000)
    page.wait_for_selector(f".ws-row[data-workspace-id='{ws['id']}'][data-status='idle']")
    assert page.get_by_text("END-OF-SLOW-REPLY").count() == 1  # the slow turn finished first

    # Ctrl+/ moves the model pill to the next usable model.
    before = page.locator("[data-model]").get_attribute("data-model")
    page.keyboard.press("Control+Slash")
    wait_until(page, "(b) => document.querySelector('[data-model]').dataset.model !== b", before)
    after = page.locator("[data-model]").get_attribute("data-model")
    assert xum_web.api("GET", f"/api/workspaces/{ws['id']}")["model"] == after


def test_edit_and_todo_cards(page: Any, xum_web: XumServer) -> None:
    ws = xum_web.create_workspace("cards")
    page.reload()
    open_workspace(page, ws["id"])
    send(page, "please [edit] the notes")
    card = page.locator(".tool-card[data-tool='file_edit_insert'][data-phase='done']")
    card.wait_for()
    diff = card.locator(".diff")
    diff.wait_for()
    assert f"+{EDIT_LINE}" in diff.inner_text()
    assert "notes.txt" in card.locator(".tool-head").inner_text()
    page.get_by_text("The file is edited.").wait_for()
    assert (Path(ws["path"]) / "notes.txt").read_text() == EDIT_LINE + "\n"

    send(page, "track this with a [todo]")
    todo = page.locator(".tool-card[data-tool='todo_write'][data-phase='done']")
    todo.wait_for()
    bar = todo.get_by_role("progressbar")
    assert bar.get_attribute("aria-valuenow") == "1" and bar.get_attribute("aria-valuemax") == "3"
    assert "1/3" in todo.locator(".tool-head").inner_text()
    items = todo.locator(".todo-list li")
    assert items.count() == 3
    assert "completed" in (items.nth(0).get_attribute("class") or "")
    page.get_by_text("Tasks noted.").wait_for()
    screenshot(page, "edit-todo-cards-1280")


def test_saving_a_provider_key_never_shows_it(page: Any, xum_web: XumServer) -> None:
    secret = "sk-browser-secret-value-9876"
    page.keyboard.press("Control+Comma")
    settings = page.get_by_role("dialog", name="Settings")
    # Built-ins without a key are folded below the providers set up (anthropic, by env here).
    settings.get_by_text("Other built-in providers").click()
    row = settings.locator("[data-provider='deepseek']")
    row.wait_for()
    field = row.get_by_label("DeepSeek API key", exact=False)
    field.fill(secret)
    row.get_by_role("button", name="Save key").click()
    row.get_by_role("button", name="Remove key").wait_for()
    assert field.input_value() == ""
    assert "providers.jsonc" in row.get_by_test_id("credential").inner_text()
    assert secret not in settings.inner_text()
    assert secret not in page.content()
    # The sessions section lists this browser.
    settings.get_by_text("this browser").wait_for()
    row.get_by_role("button", name="Remove key").click()
    wait_until(
        page,
        "() => !document.querySelector(\"[data-provider='deepseek'] [data-testid='credential']\")"
        ".textContent.includes('providers.jsonc')",
    )


def test_slash_popover_and_agent_picker_at_phone_width(chromium: Any, xum_web: XumServer) -> None:
    from tests.e2e.browser_support import TOKEN

    ws = xum_web.create_workspace("phone-slash")
    context = chromium.new_context(viewport=PHONE, is_mobile=True, has_touch=True)
    try:
        page = context.new_page()
        page.goto(f"{xum_web.url}/?token={TOKEN}#/w/{ws['id']}")
        page.wait_for_selector(
            f".main[data-workspace-id='{ws['id']}'] [data-transcript-ready='true']"
        )
        composer(page).fill("/")
        popover = page.get_by_role("listbox", name="Slash commands")
        popover.wait_for()
        box = popover.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
        screenshot(page, "slash-popover-375")
        composer(page).fill("")
        page.locator("[data-agent]").click()
        menu = page.get_by_role("dialog", name="Agent")
        menu.wait_for()
        box = menu.bounding_box()
        assert box is not None and box["x"] >= 0 and box["x"] + box["width"] <= PHONE["width"]
        screenshot(page, "agent-picker-375")
        assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    finally:
        context.close()
