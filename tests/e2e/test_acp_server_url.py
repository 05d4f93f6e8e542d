"""`xum acp` attached to a running `xum server` (a real subprocess): the editor's session is a
workspace of the server, its turn streams to the editor and to another client of the server
live, the editor answers the server's approval request, and a wrong token is refused with a
message that says what to do."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from acp import RequestError, text_block

from tests.support.acp import bridge
from tests.support.xum_server import xum_server, xum_server_process
from xum.engine import events as E
from xum.host.listener import NullListener
from xum.host.remote import RemoteHosts
from xum.host.server_target import ServerTarget
from xum.testing import fakellm
from xum.testing.acpeditor import TestEditor
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(120)

TOKEN = "acp-remote-token-0123456789abcdef"
MODEL = "anthropic:claude-sonnet-5-5"


def _server_env(fake: FakeLLM) -> dict[str, str]:
    return {
        "XUM_SERVER_AUTH_TOKEN": TOKEN,
        "ANTHROPIC_API_KEY": "test-key",
        "ANTHROPIC_BASE_URL": fake.url,
    }


class Watcher(NullListener):
    """Another client of the server (as the browser is): the text deltas it sees."""

    def __init__(self) -> None:
        self.text: list[str] = []
        self.ended = asyncio.Event()

    def event(self, workspace_id: str, event: E.Event) -> None:
        if isinstance(event, E.TextDelta):
            self.text.append(event.text)
        elif isinstance(event, E.TurnEnd):
            self.ended.set()


async def test_an_editor_session_runs_on_the_server_found_through_its_lock(
    fake_llm: FakeLLM, repo: Path
) -> None:
    words = "the server ran this turn and streamed it word by word"
    fake_llm.script(fakellm.text(words, chunk_size=5, delay=0.02))
    editor = TestEditor()
    with xum_server(env=_server_env(fake_llm)) as url:
        # No URL, no token: both come from $XUM_ROOT/server.lock.
        async with bridge(editor, repo, {}) as (conn, _proc, _init):
            new = await conn.new_session(cwd=str(repo), mcp_servers=[])
            options = {o.id: o for o in new.config_options}
            async with RemoteHosts(ServerTarget(url, TOKEN), Watcher()) as browser:
                (record,) = await browser.list_workspaces()
                assert record.id == new.session_id and record.project_path == str(repo)
                watcher = browser.listener
                assert isinstance(watcher, Watcher)
                await browser.subscribe(record.id, after_seq=browser.last_seq(record.id))
                model = await conn.set_config_option(
                    config_id="model", session_id=new.session_id, value=MODEL
                )
                chosen = {o.id: o.current_value for o in model.config_options}
                assert chosen["model"] == MODEL
                assert options["model"].current_value  # the server's default, shown at once
                answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
                assert answer.stop_reason == "end_turn"
                await asyncio.wait_for(watcher.ended.wait(), 30)
                assert "".join(watcher.text) == words
                assert len(watcher.text) >= 3  # live, delta by delta
        assert editor.message_text() == words
        assert len(editor.of_kind("agent_message_chunk")) >= 2
        assert fake_llm.requests[0].json["model"] == MODEL.split(":", 1)[1]


def _pick(name: str) -> Any:
    def pick(options: list[Any], _call: Any) -> str | None:
        return next(o.option_id for o in options if o.name == name)

    return pick


async def test_the_editor_answers_the_servers_approval_request(
    fake_llm: FakeLLM, repo: Path
) -> None:
    fake_llm.script(
        fakellm.tool_call("bash", {"script": "touch made.txt", "display_name": "touch"}),
        fakellm.text("Made."),
    )
    editor = TestEditor(permission=_pick("Approve once"))
    with xum_server(env=_server_env(fake_llm)) as url:
        args = ("--server-url", url, "--auth-token", TOKEN)
        async with bridge(editor, repo, {}, *args) as (conn, _proc, _init):
            new = await conn.new_session(cwd=str(repo), mcp_servers=[])
            async with RemoteHosts(ServerTarget(url, TOKEN)) as browser:
                await browser.change_settings(new.session_id, permissions="ask", model=MODEL)
            answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("make it")])
            assert answer.stop_reason == "end_turn"
    assert len(editor.permission_requests) == 1
    assert (repo / "made.txt").exists()
    assert editor.message_text().endswith("Made.")


async def test_a_wrong_token_is_refused_with_what_to_do(fake_llm: FakeLLM, repo: Path) -> None:
    editor = TestEditor()
    with xum_server(env=_server_env(fake_llm)) as url:
        args = ("--server-url", url, "--auth-token", "not-the-token-0123456789")
        async with bridge(editor, repo, {}, *args) as (conn, _proc, _init):
            with pytest.raises(RequestError) as refused:
                await conn.new_session(cwd=str(repo), mcp_servers=[])
    assert refused.value.data["code"] == "unauthorized"


async def test_a_prompt_whose_server_went_away_ends_on_cancel(
    fake_llm: FakeLLM, repo: Path
) -> None:
    # The reply streams a little, then the model goes silent: the turn stays open.
    fake_llm.script(fakellm.text("thinking about it", chunk_size=3, stall=fakellm.Stall(4)))
    editor = TestEditor()
    with xum_server_process(env=_server_env(fake_llm)) as (url, server):
        args = ("--server-url", url, "--auth-token", TOKEN)
        async with bridge(editor, repo, {}, *args) as (conn, _proc, _init):
            new = await conn.new_session(cwd=str(repo), mcp_servers=[])
            async with RemoteHosts(ServerTarget(url, TOKEN)) as browser:
                await browser.change_settings(new.session_id, model=MODEL)
            prompt = asyncio.ensure_future(
                conn.prompt(session_id=new.session_id, prompt=[text_block("go")])
            )
            await editor.wait_for(lambda r: r.kind == "agent_message_chunk")
            server.kill()  # gone without a word: no turn end will ever come
            server.wait(timeout=10)
            await conn.cancel(session_id=new.session_id)
            with pytest.raises(RequestError) as failed:
                await asyncio.wait_for(prompt, 30)
    assert "did not answer" in str(failed.value)
