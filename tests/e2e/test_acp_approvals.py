"""`xum acp`: a tool call that needs the user is a permission request to the editor."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.support.acp import bridge, env_for, tool_results
from xum.store.config import update_config
from xum.testing import fakellm
from xum.testing.acpeditor import TestEditor
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(120)


def force_push(marker: Path) -> Any:
    # Critical in every permission mode; the remote does not exist, so nothing leaves the
    # machine. The marker says whether the script ran at all.
    script = f"git push --force nowhere main 2>/dev/null; touch {marker}"
    return fakellm.tool_call("bash", {"script": script, "display_name": "force push"})


def picking(name: str | None) -> Any:
    def pick(options: list[Any], _call: Any) -> str | None:
        if name is None:
            return None  # the editor answers `cancelled`
        return next(o.option_id for o in options if o.name == name)

    return pick


async def run_prompt(editor: TestEditor, repo: Path, fake_llm: FakeLLM) -> str:
    async with bridge(editor, repo, env_for(fake_llm)) as (conn, _proc, _init):
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("Push it")])
        return str(answer.stop_reason)


async def test_a_critical_command_runs_once_the_editor_approves(
    fake_llm: FakeLLM, repo: Path
) -> None:
    marker = repo / "approved.marker"
    fake_llm.script(force_push(marker), fakellm.text("Pushed."))
    editor = TestEditor(permission=picking("Approve once"))
    assert await run_prompt(editor, repo, fake_llm) == "end_turn"
    assert marker.exists()
    assert len(editor.permission_requests) == 1
    options, call = editor.permission_requests[0]
    # A critical command is never remembered: no "always" answer is offered.
    assert [(o.name, o.kind) for o in options] == [
        ("Approve once", "allow_once"),
        ("Deny", "reject_once"),
    ]
    assert call.title == "Run a critical command?"
    assert call.kind == "execute"
    body = call.content[0].content.text
    assert "git push --force nowhere main" in body and "force push" in body
    # The request names the tool call the editor was already shown.
    shown = [u.tool_call_id for u in editor.of_kind("tool_call")]
    assert call.tool_call_id in shown
    assert "was not run" not in tool_results(fake_llm.requests[1])[0]


@pytest.mark.parametrize("answer", ["Deny", None], ids=["denied", "cancelled"])
async def test_a_denied_or_unanswered_request_runs_nothing(
    fake_llm: FakeLLM, repo: Path, answer: str | None
) -> None:
    marker = repo / "denied.marker"
    fake_llm.script(force_push(marker), fakellm.text("Understood."))
    editor = TestEditor(permission=picking(answer))
    assert await run_prompt(editor, repo, fake_llm) == "end_turn"
    assert not marker.exists()
    result = tool_results(fake_llm.requests[1])[0]
    assert "was not run" in result or "denied" in result.lower()


async def test_an_always_answer_is_remembered_for_the_project(
    fake_llm: FakeLLM, repo: Path
) -> None:
    # In the `ask` mode a command outside the allowlist asks, and offers its prefix.
    first, second = repo / "first.marker", repo / "second.marker"
    fake_llm.script(
        fakellm.tool_call("bash", {"script": f"touch {first}", "display_name": "mark"}),
        fakellm.text("Marked."),
        fakellm.tool_call("bash", {"script": f"touch {second}", "display_name": "mark again"}),
        fakellm.text("Marked again."),
    )
    editor = TestEditor(permission=picking("Always allow `touch` in this project"))
    async with bridge(editor, repo, env_for(fake_llm)) as (conn, _proc, _init):
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        # The workspace's own mode, as the browser's composer stores it (read on every call).
        update_config(lambda c: c["workspaces"][new.session_id].update(permissions="ask"))
        for text in ("Mark it", "Mark it again"):
            answer = await conn.prompt(session_id=new.session_id, prompt=[text_block(text)])
            assert answer.stop_reason == "end_turn"
    assert first.exists() and second.exists()
    assert len(editor.permission_requests) == 1  # the second one matched the remembered prefix
