"""The browser's new-workspace dialog and the Docker runtime, against a real `xum server`: the
Docker choice (an image field and "Share credentials") is offered when the server's container
engine answers, and absent when it does not; a Docker workspace made from the dialog runs its
turn's command in the container. Skipped without a container engine (failed under CI)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.browser_support import TOKEN, XumServer, browser_fake, fake_env, send, serving
from tests.support.containers import Engine, container_image  # noqa: F401
from xum.testing import fakellm

pytestmark = [pytest.mark.slow, pytest.mark.timeout(180)]

SCRIPT = ". /etc/os-release; echo container-id=$ID; pwd"


def reply(request: fakellm.RecordedRequest) -> fakellm.Reply:
    if "tool_result" in str(request.json["messages"][-1]):
        return fakellm.text("Ran in the container.")
    return fakellm.tool_call("bash", {"script": SCRIPT, "display_name": "where am I"})


@pytest.fixture(scope="module")
def docker_web(
    tmp_path_factory: pytest.TempPathFactory,
    container_image: Engine,  # noqa: F811
) -> Iterator[tuple[XumServer, Engine]]:
    with browser_fake(reply) as fake:
        env = {**fake_env(fake), **container_image.env}
        with serving(tmp_path_factory.mktemp("docker-web"), env) as server:
            yield server, container_image


def _signed_in(browser_context: Any, server: XumServer) -> tuple[Any, list[str]]:
    page = browser_context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda exc: errors.append(str(exc)))
    page.goto(f"{server.url}/?token={TOKEN}")
    page.wait_for_selector("nav[aria-label='Projects and workspaces']")
    return page, errors


def test_create_a_docker_workspace_from_the_dialog(
    browser_context: Any, docker_web: tuple[XumServer, Engine]
) -> None:
    server, engine = docker_web
    server.api("POST", "/api/projects", json={"path": str(server.repo)})
    # What "Share credentials" copies in (the server's HOME is its own).
    (server.home / ".gitconfig").write_text("[user]\n\tname = Shared From Home\n")
    found = server.api("GET", "/api/server/container-engine")
    assert found["available"] and found["cli"] == engine.cli and found["version"]
    page, errors = _signed_in(browser_context, server)
    page.keyboard.press("Alt+n")
    dialog = page.get_by_role("dialog", name="New workspace")
    runtime = dialog.get_by_label("Runtime")
    # The choice appears once the engine has answered, naming it.
    dialog.locator("option[value='docker']").wait_for(state="attached")
    assert engine.cli in dialog.locator("option[value='docker']").inner_text()
    assert dialog.get_by_label("Image").count() == 0  # only for Docker
    runtime.select_option("docker")
    dialog.get_by_role("button", name="Create").click()  # no image yet: refused, said why
    assert "container image" in dialog.get_by_role("alert").inner_text()
    dialog.get_by_label("Image").fill(engine.image)
    dialog.get_by_label("Share credentials").check()
    dialog.get_by_label("Branch or name").fill("in-a-box")
    dialog.get_by_role("button", name="Create").click()
    page.wait_for_selector(".main[data-workspace-id] [data-transcript-ready='true']")
    workspace_id = page.locator(".main[data-workspace-id]").get_attribute("data-workspace-id")
    ws = server.api("GET", f"/api/workspaces/{workspace_id}")
    assert ws["name"] == "in-a-box"
    assert ws["runtime"]["type"] == "docker" and ws["runtime"]["image"] == engine.image
    assert f"docker {engine.image}" in page.locator(".chat-header").inner_text()
    shared = engine.run("exec", f"xum-{workspace_id}", "cat", "/root/.gitconfig")
    assert "Shared From Home" in shared.stdout, shared.stderr
    try:
        send(page, "where do you run?")
        card = page.locator(".tool-card[data-tool='bash'][data-phase='done']")
        card.wait_for(timeout=60_000)
        card.locator(".tool-head").click()
        output = card.locator(".tool-body").inner_text()
        assert "container-id=xum-test" in output and "/src" in output
        page.get_by_text("Ran in the container.").wait_for()
        assert not errors, errors
    finally:
        server.api("DELETE", f"/api/workspaces/{workspace_id}", params={"force": "true"})
    assert engine.state(f"xum-{workspace_id}") is None


def test_no_container_engine_no_docker_choice(browser_context: Any, tmp_path: Path) -> None:
    with browser_fake(reply) as fake:
        env = {**fake_env(fake), "XUM_CONTAINER_CLI": str(tmp_path / "no-such-cli")}
        with serving(tmp_path / "server", env) as server:
            server.api("POST", "/api/projects", json={"path": str(server.repo)})
            found = server.api("GET", "/api/server/container-engine")
            assert not found["available"] and "no-such-cli" in found["problem"]
            page, errors = _signed_in(browser_context, server)
            # The dialog asks when it opens; once told no, it offers the other three.
            with page.expect_response("**/api/server/container-engine"):
                page.keyboard.press("Alt+n")
            dialog = page.get_by_role("dialog", name="New workspace")
            values = dialog.get_by_label("Runtime").locator("option")
            values.first.wait_for(state="attached")
            assert sorted(values.evaluate_all("os => os.map(o => o.value)")) == [
                "local",
                "ssh",
                "worktree",
            ]
            assert not errors, errors
