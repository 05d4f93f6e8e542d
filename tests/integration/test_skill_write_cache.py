"""A skill the agent writes or deletes in the middle of a turn leaves the cached prefix alone:
the system prompt (its `<agent-skills>` index) and the tools stay byte-identical for the rest of
the context segment, the change arrives as one `context_update` row, and every request of the
segment is a byte prefix of the next."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from tests.contextkit import write
from tests.integration.context_harness import (
    ContextHarness,
    assert_prefix_chain,
    system_of,
    texts_of,
    tools_of,
)
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

SKILLER = """---
name: Skiller
base: exec
tools:
  add:
    - agent_skill_write
    - agent_skill_delete
---

You keep the project's skills up to date.
"""
NEW = "---\nname: beta\ndescription: Second skill\n---\nSteps for beta.\n"


@pytest.fixture
async def harness(fake_llm: FakeLLM, repo: Path) -> AsyncIterator[ContextHarness]:
    write(repo / ".xum/agents/skiller.md", SKILLER)
    write(
        repo / ".xum/skills/alpha/SKILL.md",
        "---\nname: alpha\ndescription: First skill\n---\nSteps for alpha.\n",
    )
    h = ContextHarness(fake_llm, repo)
    yield h
    await h.close()


async def test_writing_and_deleting_skills_keeps_the_prefix(
    fake_llm: FakeLLM, harness: ContextHarness, repo: Path
) -> None:
    session = harness.session("skiller")
    fake_llm.script(
        fakellm.tool_call("agent_skill_write", {"name": "beta", "content": NEW}),
        fakellm.tool_call("agent_skill_read", {"name": "beta"}),
        fakellm.text("written"),
        fakellm.tool_call(
            "agent_skill_delete", {"name": "alpha", "target": "skill", "confirm": True}
        ),
        fakellm.text("deleted"),
    )
    await session.run_turn("add a beta skill")
    await session.run_turn("now drop alpha")
    requests = fake_llm.requests
    assert len(requests) == 5
    assert (repo / ".xum/skills/beta/SKILL.md").exists()
    assert not (repo / ".xum/skills/alpha").exists()
    first = system_of(requests[0])
    assert "- alpha: First skill" in first and "beta" not in first
    assert all(system_of(r) == first for r in requests)
    assert all(tools_of(r) == tools_of(requests[0]) for r in requests)
    assert_prefix_chain(requests)
    # The step after the write is told, in a row, and can load the new skill.
    added = [t for t in texts_of(requests[1]) if "context-update" in t]
    assert len(added) == 1 and "- beta: Second skill" in added[0]
    assert "Steps for beta." in str(requests[2].json["messages"])
    removed = [t for t in texts_of(requests[4]) if "context-update" in t]
    assert len(removed) == 2 and "alpha" not in removed[1] and "- beta" in removed[1]
