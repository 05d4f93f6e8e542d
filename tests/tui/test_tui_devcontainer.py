"""The terminal UI's new-workspace dialog and the Dev Container runtime: the choice appears only
for a project with a devcontainer.json, with a config picker when it has several (listed here,
or by the server the UI is attached to: `GET /api/projects/devcontainers`); a workspace made
from it with a named config runs its turn's commands in that config's container."""

from __future__ import annotations

from pathlib import Path

import pytest
from textual.pilot import Pilot
from textual.widgets import Checkbox, RadioButton, Select

from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from tests.support.devcontainer_cli import devcontainer_json, devcontainer_tool  # noqa: F401
from tests.tui.support import model_app, on_screen, send, start_app, until
from xum.host.server_target import ServerTarget
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.webui import make_repo, start_server
from xum.tui.app import XumApp
from xum.tui.attached_actions import attach_to
from xum.tui.dialogs import NewWorkspaceDialog
from xum.workspaces import lifecycle

BASE = ["local", "worktree", "ssh", "scratch"]


def add_configs(project: Path, image: str = "xum-test:none") -> None:
    """An unnamed config and one named `py` (not committed: the project's own files count)."""
    (project / ".devcontainer" / "py").mkdir(parents=True)
    (project / ".devcontainer" / "devcontainer.json").write_text(devcontainer_json(image))
    (project / ".devcontainer" / "py" / "devcontainer.json").write_text(
        devcontainer_json(image, containerEnv={"WHICH_CONFIG": "py"})
    )


async def open_dialog(pilot: Pilot[None]) -> NewWorkspaceDialog:
    await pilot.press("ctrl+n")
    await on_screen(pilot, "New workspace")
    dialog = pilot.app.screen
    assert isinstance(dialog, NewWorkspaceDialog)
    await until(pilot, lambda: not dialog.workers, "the dialog's probes")
    return dialog


async def pick_named_config(pilot: Pilot[None], dialog: NewWorkspaceDialog) -> None:
    """Choose Dev Container, then the `py` config in the picker (the unnamed one is first)."""
    await pilot.click("#devcontainer")
    assert dialog.query_one("#devcontainer", RadioButton).value
    picker = dialog.query_one("#devconfig", Select)
    assert picker.display and picker.value == ""
    await pilot.click("#devconfig")
    await pilot.press("down", "enter")
    await until(pilot, lambda: picker.value == "py", "the py config picked")


async def test_no_devcontainer_json_leaves_the_choice_out(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XUM_CONTAINER_CLI", str(tmp_path / "no-such-cli"))
    app = model_app(monkeypatch, fake_llm, tmp_path)
    async with app.run_test(size=(100, 44)) as pilot:
        await start_app(pilot)
        dialog = await open_dialog(pilot)
        assert [b.id for b in dialog.query(RadioButton)] == BASE
        assert not dialog.query_one("#devconfig").display
        await on_screen(pilot, "devcontainer: not offered (the project has no devcontainer.json)")


async def test_the_choice_and_its_config_picker_give_the_runtime_spec(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("XUM_CONTAINER_CLI", str(tmp_path / "no-such-cli"))
    app = model_app(monkeypatch, fake_llm, tmp_path)
    add_configs(app.project_dir)
    async with app.run_test(size=(100, 44)) as pilot:
        await start_app(pilot)
        dialog = await open_dialog(pilot)
        assert [b.id for b in dialog.query(RadioButton)] == [*BASE, "devcontainer"]
        assert not dialog.query_one("#devconfig").display  # shown once Dev Container is chosen
        chosen: list[object] = []
        dialog.dismiss = chosen.append  # type: ignore[method-assign,assignment]
        await pick_named_config(pilot, dialog)
        assert dialog.query_one("#share", Checkbox).display
        assert not dialog.query_one("#image").display
        await pilot.click("#create")
        await until(pilot, lambda: chosen, "the dialog's choice")
        (choice,) = chosen
        assert getattr(choice, "runtime", None) == "devcontainer py"


@pytest.mark.slow
async def test_create_a_dev_container_workspace_from_the_dialog_and_run_a_turn_in_it(
    fake_llm: FakeLLM,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    container_engine: Engine,  # noqa: F811
    devcontainer_tool: str,  # noqa: F811
) -> None:
    fake_llm.script(
        fakellm.tool_call(
            "bash",
            {
                "script": '. /etc/os-release; echo "id=$ID config=$WHICH_CONFIG"',
                "display_name": "w",
            },
        ),
        fakellm.text("ran in the dev container"),
    )
    app = model_app(monkeypatch, fake_llm, tmp_path)
    add_configs(app.project_dir, container_engine.image)
    async with app.run_test(size=(100, 44)) as pilot:
        await start_app(pilot)
        dialog = await open_dialog(pilot)
        await pick_named_config(pilot, dialog)
        await pilot.click("#create")
        await until(pilot, lambda: app.selected is not None, "the Dev Container workspace")
        ws = app.selected
        assert ws is not None
        record = ws.record
        assert record.runtime == "devcontainer"
        assert record.extra["devcontainer_config"] == ".devcontainer/py/devcontainer.json"
        await send(pilot, "where are you")
        await until(pilot, lambda: not ws.running and len(fake_llm.requests) == 2, "the turn")
        await on_screen(pilot, "ran in the dev container")
        tool = next(e for e in ws.transcript.entries if e.__class__.__name__ == "ToolEntry")
        assert "id=xum-test config=py" in tool.output  # type: ignore[attr-defined]
    await lifecycle.delete_workspace(record.id, force=True)
    assert container_engine.state(str(record.extra["container"])) is None


@pytest.mark.slow
async def test_attached_to_a_server_the_dialog_lists_the_servers_configs(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_llm.url}
    token = "tui-devcontainer-token"
    repo = make_repo(tmp_path / "repo")
    add_configs(repo)
    server = start_server(tmp_path / "srv", token, env, repo=repo)
    try:
        app = XumApp(server.repo, attach=attach_to(ServerTarget(server.url, token)))
        async with app.run_test(size=(110, 44)) as pilot:
            await start_app(pilot)
            dialog = await open_dialog(pilot)
            assert "devcontainer" in [b.id for b in dialog.query(RadioButton)]
            chosen: list[object] = []
            dialog.dismiss = chosen.append  # type: ignore[method-assign,assignment]
            await pick_named_config(pilot, dialog)
            await pilot.click("#create")
            await until(pilot, lambda: chosen, "the dialog's choice")
            assert getattr(chosen[0], "runtime", None) == "devcontainer py"
    finally:
        server.stop()
