"""The browser's new-workspace dialog offers the Dev Container runtime only for a project with a
devcontainer.json, and lets the user pick among several configs (the server's list,
`GET /api/projects/devcontainers`). Nothing is created: the choice itself is what is tested."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.browser_support import XumServer, open_workspace
from tests.gitrepo import make_repo


def test_the_dev_container_choice_appears_only_with_a_config(
    page: Any, xum_web: XumServer, tmp_path: Path
) -> None:
    configs = make_repo(
        tmp_path / "with-configs",
        {
            ".devcontainer/devcontainer.json": "{}\n",
            ".devcontainer/web/devcontainer.json": "{}\n",
        },
    )
    xum_web.api("POST", "/api/projects", json={"path": str(configs)})
    existing = xum_web.create_workspace("dc-choice")
    page.reload()
    open_workspace(page, existing["id"])
    page.keyboard.press("Alt+n")
    dialog = page.get_by_role("dialog", name="New workspace")
    runtime = dialog.get_by_label("Runtime")
    option = runtime.locator("option[value=devcontainer]")

    dialog.get_by_label("Project").select_option(str(xum_web.repo))
    option.wait_for(state="detached")  # the test project has no devcontainer.json

    dialog.get_by_label("Project").select_option(str(configs))
    option.wait_for(state="attached")
    runtime.select_option("devcontainer")
    choice = dialog.get_by_label("Dev Container config")
    choice.wait_for()
    labels = choice.locator("option").all_inner_texts()
    assert labels == [
        ".devcontainer/devcontainer.json",
        "web (.devcontainer/web/devcontainer.json)",
    ]

    # Back to a project without one: the choice goes, and the runtime falls back to worktree.
    dialog.get_by_label("Project").select_option(str(xum_web.repo))
    option.wait_for(state="detached")
    choice.wait_for(state="detached")
    assert runtime.input_value() == "worktree"
