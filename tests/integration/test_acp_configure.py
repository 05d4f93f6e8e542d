"""A model or thinking change in an editor session takes effect on the next turn without
reopening the session: the bridge (`XumAgent`) in process, its client the scripted editor, the
fake LLM server recording each request."""

from __future__ import annotations

from pathlib import Path
from typing import cast

import pytest
from acp import PROTOCOL_VERSION, text_block
from acp.interfaces import Client

from xum.acp.agent import XumAgent
from xum.testing import fakellm
from xum.testing.acpeditor import TestEditor
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(120)


async def test_model_and_thinking_change_without_reopening_the_session(
    fake_llm: FakeLLM, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "test-key")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    fake_llm.set_default(fakellm.text("ok"))
    editor = TestEditor()
    agent = XumAgent()
    agent.on_connect(cast("Client", editor))
    await agent.initialize(protocol_version=PROTOCOL_VERSION)
    try:
        new = await agent.new_session(cwd=str(repo), mcp_servers=[])
        sid = new.session_id
        await agent.prompt(sid, [text_block("hi")])
        host = agent.hosts.get(sid)
        assert host is not None
        opened = host.session
        assert fake_llm.requests[-1].json["model"] == "claude-opus-5-5"

        # /model: nothing sent, the next turn uses the new model in the same session.
        sent = len(fake_llm.requests)
        answer = await agent.prompt(sid, [text_block("/model haiku")])
        assert answer.stop_reason == "end_turn" and len(fake_llm.requests) == sent
        await agent.prompt(sid, [text_block("again")])
        assert fake_llm.requests[-1].json["model"] == "claude-haiku-5-5"

        # The config options do the same (model, then thinking).
        await agent.set_config_option("model", sid, "anthropic:claude-sonnet-5-5")
        await agent.set_config_option("thinking", sid, "off")
        await agent.prompt(sid, [text_block("and again")])
        request = fake_llm.requests[-1].json
        assert request["model"] == "claude-sonnet-5-5"
        assert request["thinking"] == {"type": "disabled"}
        assert len(request["messages"]) == 5  # the history goes on in the one session

        assert agent.hosts.get(sid) is host and host.session is opened  # never reopened
    finally:
        await agent.close_all()
