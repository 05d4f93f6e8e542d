"""`xum acp`'s `/` menu offers the model aliases that can be used now, as the model picker
does: those of a provider with a key. The real CLI in a subprocess, the test editor."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.cli import XUM
from tests.gitrepo import APP_FILES, make_repo
from xum.testing.acpeditor import TestEditor, connect
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(120)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "proj", APP_FILES)


async def menu(project: Path, env: dict[str, str]) -> tuple[set[str], set[str]]:
    """(the `/` menu's command names, the model picker's models) of a new session."""
    editor = TestEditor()
    async with connect(
        editor, [XUM, "acp"], env=env, cwd=project, stderr=project.parent / "acp.log"
    ) as (conn, _proc, _init):
        new = await conn.new_session(cwd=str(project), mcp_servers=[])
        update = await editor.wait_for(lambda r: r.kind == "available_commands_update")
    names = {c.name for c in update.update.available_commands}
    picker = next(o for o in new.config_options if o.id == "model")
    models = {str(o.value) for o in picker.options}
    return names, models


async def test_only_aliases_of_providers_with_a_key_are_offered(
    fake_llm: FakeLLM, project: Path
) -> None:
    env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake_llm.url}
    names, models = await menu(project, env)
    assert {"model", "sonnet", "opus", "haiku"} <= names
    assert not {"gpt", "sol", "gemini", "grok", "deepseek", "kimi", "glm"} & names
    # The same rule as the model picker's.
    assert not [m for m in models if m.startswith("openai:")]

    names, models = await menu(project, {**env, "OPENAI_API_KEY": "sk-test-openai"})
    assert {"sonnet", "gpt", "sol", "luna"} <= names
    assert not {"gemini", "grok"} & names
    assert [m for m in models if m.startswith("openai:")]
