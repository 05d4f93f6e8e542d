"""Several workspaces in the terminal UI: two at work at once, switching between them, and the
lifecycle (create, fork, rename, archive, delete with its preview), against the fake LLM."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from tests.sshd import Sshd, ssh_host, sshd  # noqa: F401 - fixtures
from tests.tui.support import (
    MODEL,
    first_turn,
    held_command,
    model_app,
    notified,
    on_screen,
    project,
    screen_text,
    send,
    start_app,
    type_text,
    until,
    use_fake_llm,
)
from xum.store import registry
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM, RecordedRequest
from xum.tui.app import XumApp
from xum.tui.transcript import UserEntry
from xum.tui.views import UserView


def shown_users(app: XumApp) -> list[str]:
    """The user messages the transcript on screen draws."""
    return [str(v.render()) for v in app.query(UserView)]


async def test_two_workspaces_work_at_once_and_each_shows_its_progress(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    held = {name: held_command(tmp_path, name) for name in ("one", "two")}

    def responder(request: RecordedRequest) -> fakellm.Reply:
        messages = request.json["messages"]
        name = "one" if "task one" in str(messages[0]) else "two"
        if "tool_result" in str(messages[-1]):
            return fakellm.text(f"{name} finished")
        return fakellm.tool_call("bash", {"script": held[name][0], "display_name": name})

    fake_llm.set_responder(responder)
    app = model_app(monkeypatch, fake_llm, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await start_app(pilot)
        await send(pilot, "task one")
        await until(pilot, held["one"][1].exists, "the first command")
        first = app.selected
        assert first is not None
        await pilot.press("ctrl+up")  # to the new-workspace row
        await until(pilot, lambda: app.selected is None, "the new-workspace row")
        await send(pilot, "task two")
        await until(pilot, held["two"][1].exists, "the second command")
        second = app.selected
        assert second is not None and second is not first
        assert first.status == second.status == "working"
        await until(pilot, lambda: screen_text(app).count("● task-") == 2, "two working dots")
        assert any("task two" in u for u in shown_users(app))
        await pilot.press("ctrl+down")  # the list is newest first: `first` is below
        await until(pilot, lambda: app.selected is first, "the first workspace")
        await until(pilot, lambda: any("task one" in u for u in shown_users(app)), "its transcript")
        assert not any("task two" in u for u in shown_users(app))
        held["two"][2].touch()  # the one not on screen finishes
        await until(pilot, lambda: not second.running, "the second turn")
        await until(pilot, lambda: second.status == "unread", "the unread mark")
        await until(pilot, lambda: "• task-two" in screen_text(app), "the unread dot")
        held["one"][2].touch()
        await until(pilot, lambda: not first.running, "the first turn")
        await on_screen(pilot, "one finished")
        assert first.status == "idle"  # it was on screen: read
        await pilot.press("alt+up")  # Alt works as Ctrl does
        await until(pilot, lambda: app.selected is second, "the second workspace")
        await on_screen(pilot, "two finished")
        await pilot.press("alt+down")
        await until(pilot, lambda: app.selected is first, "back to the first")
        assert second.status == "idle"


async def test_create_a_worktree_workspace_then_delete_it_after_the_preview(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    app = XumApp(project(tmp_path))
    async with app.run_test(size=(100, 40)) as pilot:
        await start_app(pilot)
        await pilot.press("ctrl+n")
        await on_screen(pilot, "New workspace")
        await pilot.press("down", "enter")  # the runtime list: worktree
        await pilot.click("#name")
        await type_text(pilot, "feature-x")
        await pilot.press("enter")
        await until(pilot, lambda: app.selected is not None, "the new workspace")
        ws = app.selected
        assert ws is not None
        assert ws.record.runtime == "worktree" and ws.record.name == "feature-x"
        checkout = Path(ws.record.path)
        assert checkout.is_dir() and checkout != Path(ws.record.project_path)
        await on_screen(pilot, "feature-x worktree")
        (checkout / "scratch.txt").write_text("not committed\n")
        await pilot.press("ctrl+b", "d")
        await on_screen(pilot, "Delete feature-x?")
        text = screen_text(app)
        assert "worktree:" in text and "scratch.txt" in text  # what goes, and what is lost
        await pilot.click("#force")
        await until(pilot, lambda: registry.get_workspace(ws.id) is None, "the deletion")
        assert not checkout.exists()
        await until(pilot, lambda: "feature-x" not in screen_text(app), "the row to go")
        assert app.selected is None


async def test_fork_rename_and_archive_from_the_list(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = model_app(monkeypatch, fake_llm, tmp_path, fakellm.text("hello back"))
    async with app.run_test(size=(100, 40)) as pilot:
        source = await first_turn(pilot, "hello there", "the first turn")
        await until(pilot, lambda: source.transcript.last_seq > 0, "the turn on record")
        await pilot.press("ctrl+b")
        assert app.focused is app.sidebar
        await pilot.press("escape")
        assert app.focused is app.composer
        await pilot.press("ctrl+b", "f")
        await until(pilot, lambda: app.selected not in (None, source), "the fork")
        fork = app.selected
        assert fork is not None and fork.record.extra.get("forked_from") == source.id
        await on_screen(pilot, "hello back")  # the conversation came along
        await pilot.press("ctrl+b", "r")
        await on_screen(pilot, "Rename workspace")
        await pilot.press("ctrl+a", "ctrl+k")
        await type_text(pilot, "renamed-fork")
        await pilot.press("enter")
        await until(pilot, lambda: fork.record.name == "renamed-fork", "the rename")
        assert registry.get_workspace(fork.id).name == "renamed-fork"  # type: ignore[union-attr]
        await on_screen(pilot, "renamed-fork")
        await pilot.press("ctrl+b", "a")
        await until(
            pilot,
            lambda: registry.get_workspace(fork.id).archived_at is not None,  # type: ignore[union-attr]
            "the archive",
        )
        await until(pilot, lambda: "renamed-fork" not in screen_text(app), "the row to go")
        # `u` lists the archived workspaces; the one picked comes back, selected.
        await pilot.press("ctrl+b", "u")
        await on_screen(pilot, "Unarchive")
        await pilot.press("enter")
        await until(
            pilot,
            lambda: registry.get_workspace(fork.id).archived_at is None,  # type: ignore[union-attr]
            "the unarchive",
        )
        await until(pilot, lambda: app.selected is not None and app.selected.id == fork.id, "it")
        await on_screen(pilot, "renamed-fork")
        await pilot.press("ctrl+b", "u")
        await until(
            pilot,
            lambda: notified(app, "no archived workspace"),
            "the notice that none is left",
        )


async def test_slash_model_and_fork_are_carried_out_by_the_ui(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    app = model_app(monkeypatch, fake_llm, tmp_path, fakellm.text("ok"))
    async with app.run_test(size=(100, 40)) as pilot:
        ws = await first_turn(pilot, "first", "the first turn")
        await send(pilot, "/model anthropic:claude-haiku-5-5")
        await until(pilot, lambda: ws.record.model == "anthropic:claude-haiku-5-5", "the model")
        assert len(fake_llm.requests) == 1  # nothing was sent for it
        await send(pilot, "again")
        await until(pilot, lambda: len(fake_llm.requests) == 2 and not ws.running, "a turn")
        assert fake_llm.requests[1].json["model"] == "claude-haiku-5-5"
        await type_text(pilot, "/fork side-quest")
        await pilot.press("alt+enter")  # a new line: the fork's first message follows
        await send(pilot, "look at the other option")
        await until(
            pilot,
            lambda: app.selected is not None and app.selected.record.name == "side-quest",
            "the fork",
        )
        fork = app.selected
        await until(pilot, lambda: len(fake_llm.requests) == 3 and not fork.running, "its turn")
        users = [e.text for e in fork.transcript.entries if isinstance(e, UserEntry)]
        assert users == ["first", "again", "look at the other option"]


async def test_tui_reopens_a_workspace_with_its_history(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.set_default(fakellm.text("remembered"))
    repo = project(tmp_path)
    first = XumApp(repo)
    first.actions.draft_model = MODEL
    async with first.run_test(size=(100, 30)) as pilot:
        await start_app(pilot)
        await send(pilot, "note this")
        await until(pilot, lambda: first.selected and not first.selected.running, "the turn")
        name = first.selected.record.name  # type: ignore[union-attr]
    subprocess.run(["git", "status"], cwd=repo, check=True, capture_output=True)
    again = XumApp(repo, workspace="last")
    async with again.run_test(size=(100, 30)) as pilot:
        await start_app(pilot)
        assert again.selected is not None and again.selected.record.name == name
        await on_screen(pilot, "remembered")
        await on_screen(pilot, "› note this")
    by_name = XumApp(repo, workspace=name)
    async with by_name.run_test(size=(100, 30)) as pilot:
        await start_app(pilot)
        assert by_name.selected is not None and by_name.selected.record.name == name
    unknown = XumApp(repo, workspace="no-such")
    async with unknown.run_test(size=(100, 30)) as pilot:
        await start_app(pilot)
        assert unknown.selected is None
        await on_screen(pilot, "no workspace 'no-such'")


async def test_a_second_message_while_the_first_makes_its_workspace_goes_to_it(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import asyncio

    fake_llm.set_default(fakellm.text("ok"))
    app = model_app(monkeypatch, fake_llm, tmp_path)
    async with app.run_test(size=(100, 30)) as pilot:
        await start_app(pilot)
        # Both sends start before the first one's workspace exists (typed quickly in a real
        # terminal, the second Enter lands while the first creates the workspace).
        await asyncio.gather(app.actions.send("one", "step"), app.actions.send("two", "step"))
        ws = app.selected
        assert ws is not None
        await until(pilot, lambda: len(fake_llm.requests) == 2 and not ws.running, "two turns")
        assert [r.id for r in registry.list_workspaces()] == [ws.id]
        users = [e.text for e in ws.transcript.entries if isinstance(e, UserEntry)]
        assert users == ["one", "two"]


async def test_create_an_ssh_workspace_and_run_a_turn_on_the_host(
    fake_llm: FakeLLM,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    ssh_host: Sshd,  # noqa: F811
) -> None:
    fake_llm.script(
        fakellm.tool_call("bash", {"script": "cat app.py; hostname", "display_name": "where"}),
        fakellm.text("ran over ssh"),
    )
    app = model_app(monkeypatch, fake_llm, tmp_path)
    async with app.run_test(size=(100, 40)) as pilot:
        await start_app(pilot)
        await pilot.press("ctrl+n")
        await on_screen(pilot, "New workspace")
        await pilot.press("down", "down", "enter")  # the runtime list: ssh
        await pilot.click("#host")
        await type_text(pilot, ssh_host.alias)
        await pilot.press("enter")
        await until(pilot, lambda: app.selected is not None, "the SSH workspace")
        ws = app.selected
        assert ws is not None and ws.record.runtime == "ssh" and ws.record.host == ssh_host.alias
        await send(pilot, "where are you")
        await until(pilot, lambda: not ws.running and len(fake_llm.requests) == 2, "the turn")
        await on_screen(pilot, "ran over ssh")
        tool = next(e for e in ws.transcript.entries if e.__class__.__name__ == "ToolEntry")
        assert "return 'hi'" in tool.output  # type: ignore[attr-defined]
