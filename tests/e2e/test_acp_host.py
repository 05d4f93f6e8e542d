"""`xum acp` on the workspace host (`xum.host`): the real CLI in a subprocess, driven by the
scripted editor, against the fake LLM server. The editor's `/` menu lists exactly the chat
commands of the `acp` row of `xum.host.commands.OFFERED` and each one works as in the browser
(`/compact` compacts, `/clear` clears, `/goal` sets a goal that goes on by itself, `/idle` sets
the project's idle hours); an idle editor session holds no writer lock, so another process sees
the workspace as not busy until a turn runs."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest
from acp import RequestError, text_block

from tests.support.acp import bridge, env_for
from xum.context.slash import COMMAND_SUGGESTIONS
from xum.host import commands
from xum.store import compaction_config as cc
from xum.store import registry
from xum.store import sessions as session_files
from xum.testing import fakellm
from xum.testing.acpeditor import TestEditor
from xum.testing.fakellm import FakeLLM, RecordedRequest
from xum.workspaces.busy import streaming_local_siblings
from xum.workspaces.lifecycle import create_workspace

pytestmark = pytest.mark.timeout(120)

SUMMARY = "SUMMARY: the user wants a parser."


def _system(request: RecordedRequest) -> str:
    system = request.json.get("system") or []
    if isinstance(system, str):
        return system
    return "".join(block.get("text", "") for block in system)


def _is_compaction(request: RecordedRequest) -> bool:
    return '<agent id="compact"' in _system(request)


def _texts(request: RecordedRequest) -> list[str]:
    out = []
    for message in request.json["messages"]:
        content = message["content"]
        if isinstance(content, str):
            out.append(content)
            continue
        out.extend(b["text"] for b in content if b.get("type") == "text")
    return out


def _summarizing(request: RecordedRequest) -> fakellm.Reply:
    return fakellm.text(SUMMARY if _is_compaction(request) else "ok")


async def _poll(check: object, what: str) -> None:
    assert callable(check)
    for _ in range(600):
        if check():
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"timed out waiting for {what}")


async def test_the_menu_lists_exactly_the_offered_commands_and_each_works(
    fake_llm: FakeLLM, repo: Path
) -> None:
    fake_llm.set_responder(_summarizing)
    editor = TestEditor()
    async with bridge(editor, repo, env_for(fake_llm)) as (conn, _proc, _init):
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        sid = new.session_id
        update = await editor.wait_for(lambda r: r.kind == "available_commands_update")
        names = {c.name for c in update.update.available_commands}
        chat = {s.name.lstrip("/") for s in COMMAND_SUGGESTIONS}
        offered = {name for name, where in commands.OFFERED.items() if "acp" in where}
        assert names & chat == offered == {"model", "compact", "clear", "goal", "idle"}

        await conn.prompt(session_id=sid, prompt=[text_block("build a parser for INI files")])
        # /compact summarizes; the next request starts from the summary alone.
        compacted = await conn.prompt(session_id=sid, prompt=[text_block("/compact")])
        assert compacted.stop_reason == "end_turn"
        assert _is_compaction(fake_llm.requests[-1])
        await conn.prompt(session_id=sid, prompt=[text_block("what next?")])
        after = _texts(fake_llm.requests[-1])
        assert SUMMARY in after[0] and not any("INI files" in t for t in after)
        assert after[-1] == "what next?"

        # /clear: the next request carries only the new message.
        cleared = await conn.prompt(session_id=sid, prompt=[text_block("/clear")])
        assert cleared.stop_reason == "end_turn"
        await conn.prompt(session_id=sid, prompt=[text_block("fresh start")])
        texts = _texts(fake_llm.requests[-1])
        assert texts[-1] == "fresh start" and not any("what next?" in t for t in texts)

        # /idle sets the project's idle compaction and sends nothing to a model.
        sent = len(fake_llm.requests)
        idle = await conn.prompt(session_id=sid, prompt=[text_block("/idle 6")])
        assert idle.stop_reason == "end_turn" and len(fake_llm.requests) == sent
        record = registry.get_workspace(sid)
        assert record is not None and cc.idle_hours(record.project_path) == 6
        assert "idle" in editor.message_text()

        # /fork is not offered here, and says where it works.
        with pytest.raises(RequestError) as fork:
            await conn.prompt(session_id=sid, prompt=[text_block("/fork other")])
        assert "browser UI" in str(fork.value.data)


async def test_a_goal_set_in_the_editor_goes_on_until_it_is_complete(
    fake_llm: FakeLLM, repo: Path
) -> None:
    fake_llm.script(
        fakellm.text("Looking."),  # the kickoff
        fakellm.text("Working."),  # a continuation
        fakellm.tool_call("complete_goal", {"summary": "Done it."}),  # another
        fakellm.text("Finished."),
    )
    editor = TestEditor()
    async with bridge(editor, repo, env_for(fake_llm)) as (conn, _proc, _init):
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        answer = await conn.prompt(
            session_id=new.session_id, prompt=[text_block("/goal --turns 5 tidy the module")]
        )
        # The prompt answers once the goal stopped going on (as `xum run` exits then).
        assert answer.stop_reason == "end_turn"
    assert len(fake_llm.requests) == 4
    assert _texts(fake_llm.requests[0])[-1] == "tidy the module"
    assert "tidy the module" in _texts(fake_llm.requests[1])[-1]  # a continuation names it
    assert editor.message_text().endswith("Finished.")


async def test_an_idle_editor_session_holds_no_writer_lock(
    fake_llm: FakeLLM, repo: Path, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    script = f"while [ ! -e {release} ]; do sleep 0.01; done; echo released"
    fake_llm.script(
        fakellm.text("hello"),
        fakellm.tool_call("bash", {"script": script, "display_name": "wait"}),
        fakellm.text("done"),
    )
    # Another local workspace of the project, as the browser's server would have it: its tool
    # calls warn (`local-workspace-streaming`) about each sibling `streaming_local_siblings` names.
    sibling = await create_workspace(repo, "local", name_hint="sibling")
    try:
        async with bridge(TestEditor(), repo, env_for(fake_llm)) as (conn, _proc, _init):
            new = await conn.new_session(cwd=str(repo), mcp_servers=[])
            sid = new.session_id
            assert not session_files.is_busy(sid)  # open, never prompted
            await conn.prompt(session_id=sid, prompt=[text_block("hi")])
            # Idle after a turn: another process (the server, `xum run`) sees no agent here.
            assert not session_files.is_busy(sid)
            assert streaming_local_siblings(sibling.record) == []
            turn = asyncio.create_task(conn.prompt(session_id=sid, prompt=[text_block("wait")]))
            try:
                await _poll(lambda: session_files.is_busy(sid), "the turn to take the lock")
                assert [w.id for w in streaming_local_siblings(sibling.record)] == [sid]
            finally:
                release.touch()
            assert (await asyncio.wait_for(turn, 60)).stop_reason == "end_turn"
            assert not session_files.is_busy(sid)
            assert streaming_local_siblings(sibling.record) == []
    finally:
        await sibling.runtime.close()
