"""The browser's new-workspace dialog has the "Share credentials" checkbox with the Dev Container
choice (as with Docker): checked, the workspace made from the dialog (real `xum server`, the
real Dev Container CLI, podman) records the choice (`containerCredentials` in config.json) and gets `~/.gitconfig` in the
container. Skipped without a container engine or the CLI (failed under CI)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import pytest

from tests.e2e.browser_support import TOKEN, XumServer, browser_fake, fake_env, serving
from tests.gitrepo import make_repo
from tests.support.containers import Engine, container_image  # noqa: F401
from tests.support.devcontainer_cli import devcontainer_json, devcontainer_tool  # noqa: F401
from xum.testing import fakellm

pytestmark = [pytest.mark.slow, pytest.mark.timeout(240)]


@pytest.fixture(scope="module")
def devcontainer_web(
    tmp_path_factory: pytest.TempPathFactory,
    container_image: Engine,  # noqa: F811
    devcontainer_tool: str,  # noqa: F811
) -> Iterator[tuple[XumServer, Engine]]:
    with browser_fake(lambda _req: fakellm.text("ok")) as fake:
        env = {**fake_env(fake), **container_image.env, "XUM_DEVCONTAINER_CLI": devcontainer_tool}
        with serving(tmp_path_factory.mktemp("devcontainer-web"), env) as server:
            yield server, container_image


def test_share_credentials_with_the_dev_container_choice(
    browser_context: Any, devcontainer_web: tuple[XumServer, Engine]
) -> None:
    server, engine = devcontainer_web
    project = make_repo(
        server.home.parent / "dc-project",
        {".devcontainer/devcontainer.json": devcontainer_json(engine.image)},
    )
    server.api("POST", "/api/projects", json={"path": str(project)})
    (server.home / ".gitconfig").write_text("[user]\n\tname = Shared From Home\n")
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{server.url}/?token={TOKEN}")
    page.wait_for_selector("nav[aria-label='Projects and workspaces']")
    page.keyboard.press("Alt+n")
    dialog = page.get_by_role("dialog", name="New workspace")
    dialog.get_by_label("Project").select_option(str(project))
    runtime = dialog.get_by_label("Runtime")
    dialog.locator("option[value='devcontainer']").wait_for(state="attached")
    assert dialog.get_by_label("Share credentials").count() == 0  # not for a worktree
    runtime.select_option("devcontainer")
    dialog.get_by_label("Share credentials").check()
    dialog.get_by_label("Branch or name").fill("dc-shared")
    dialog.get_by_role("button", name="Create").click()
    page.wait_for_selector(
        ".main[data-workspace-id] [data-transcript-ready='true']", timeout=180_000
    )
    workspace_id = page.locator(".main[data-workspace-id]").get_attribute("data-workspace-id")
    try:
        ws = server.api("GET", f"/api/workspaces/{workspace_id}")
        assert ws["name"] == "dc-shared" and ws["runtime"]["type"] == "devcontainer"
        # The record carries the choice (what a fork inherits, and what `up` acted on).
        stored = json.loads((server.root / "config.json").read_text())["workspaces"]
        record = stored[workspace_id]
        assert record.get("containerCredentials") is True, record
        shared = engine.run("exec", record["container"], "cat", "/root/.gitconfig")
        assert "Shared From Home" in shared.stdout, shared.stderr
        assert not errors, errors
    finally:
        server.api("DELETE", f"/api/workspaces/{workspace_id}", params={"force": "true"})
