"""Prompt-cache stability: within a context segment the system prompt and the tool list stay
byte-identical while the workspace changes under them; changes arrive as rows appended to the
history. Measured with the fake server's cache accounting.

Each freeze has its own test below; each of them fails when that freeze is taken out (the
system prompt or a tool description would change, or the restart would rebuild)."""

from __future__ import annotations

import itertools
import json
import shutil
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.contextkit import bump, write
from tests.integration.context_harness import (
    ContextHarness,
    assert_prefix_chain,
    description_of,
    system_of,
    texts_of,
    tools_of,
)
from xum.context.frozen import prefix_breaks
from xum.store import frame_types as ev
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.fakellm.record import RecordedRequest

REVIEWER = """---
name: Reviewer
base: exec
---

Review the change on this branch before anything else; report findings with file paths.
"""


def skill(repo: Path, name: str, description: str, **extra: str) -> Path:
    front = "".join(f"{k}: {v}\n" for k, v in extra.items())
    return write(
        repo / ".xum/skills" / name / "SKILL.md",
        f"---\nname: {name}\ndescription: {description}\n{front}---\nSteps for {name}.\n",
    )


def edit(path: Path, text: str) -> None:
    write(path, text)
    bump(path)  # a real edit a moment later moves the mtime; coarse clocks may not


# `Mode:` sections live in xum's own instruction files; the global one is never edited below.
GLOBAL_MODES = (
    "## Mode: exec\nEXEC-MODE: verify before you report.\n"
    "## Mode: reviewer\nREVIEW-MODE: cite the line of every finding.\n"
)


@pytest.fixture(autouse=True)
def context_files(repo: Path, xum_root: Path) -> None:
    """The instructions, agent and skill every test here starts from (not committed)."""
    write(xum_root / "AGENTS.md", GLOBAL_MODES)
    write(repo / "AGENTS.md", "Run `make test` before finishing.\n")
    write(repo / ".xum/AGENTS.md", "## Tool: bash\nPrefer rg over grep.\n")
    write(repo / ".xum/agents/reviewer.md", REVIEWER)
    skill(repo, "alpha", "First skill")


@pytest.fixture
async def harness(fake_llm: FakeLLM, repo: Path) -> AsyncIterator[ContextHarness]:
    h = ContextHarness(fake_llm, repo)
    yield h
    await h.close()


def rows(ws_id: str) -> list[Any]:
    return [
        f
        for f in SessionLog.open(ws_id).frames
        if f.type == ev.SYNTHETIC_MESSAGE and f.data.get("kind") == "context_update"
    ]


def breaks_in(requests: list[RecordedRequest]) -> int:
    """Requests whose shared prefix with the earlier ones is shorter than the previous prompt:
    the bytes of the prefix changed."""
    return sum(
        1
        for before, after in itertools.pairwise(requests)
        if after.cache is not None
        and before.cache is not None
        and after.cache.matched_prefix_tokens < before.cache.prompt_tokens
    )


async def test_forty_turns_of_workspace_changes_break_no_prefix(
    fake_llm: FakeLLM, harness: ContextHarness, repo: Path
) -> None:
    session = harness.session("exec")
    mutations = {
        3: lambda: skill(repo, "beta", "Second skill"),
        6: lambda: edit(repo / "AGENTS.md", "Run `make test` and `make lint` before finishing.\n"),
        9: lambda: edit(
            repo / ".xum/AGENTS.md", "## Tool: bash\nPrefer rg; never use find -exec.\n"
        ),
        12: lambda: shutil.rmtree(repo / ".xum/skills/alpha"),
        15: lambda: session.set_agent("reviewer"),
        18: lambda: session.set_agent("exec"),
        24: lambda: edit(
            repo / ".xum/AGENTS.md",
            "## Tool: bash\nPrefer rg; never use find -exec.\n## Model: sonnet\nBe brief.\n",
        ),
        27: lambda: edit(
            repo / ".xum/AGENTS.md",
            "## Tool: bash\nPrefer rg; never use find -exec.\n## Model: sonnet\nBe brief.\n"
            "## Tool: file_read\nRead whole files.\n",
        ),
        30: lambda: edit(
            repo / ".xum/AGENTS.md",
            "## Model: sonnet\nBe brief.\n## Tool: file_read\nRead whole files.\n",
        ),
        36: lambda: skill(repo, "gamma", "Third skill"),
        39: lambda: skill(repo, "beta", "Second skill, now with a better description"),
    }
    for turn in range(1, 41):
        if turn in mutations:
            mutations[turn]()
        if turn == 33:  # a restart with an edit in between: the new engine must not rebuild
            edit(repo / "AGENTS.md", "Run `make check` before finishing.\n")
            session = harness.session("exec")
        if turn == 21:  # a change made during the turn, by the agent's own command
            script = (
                "echo 'Also update the changelog.' >> AGENTS.md && touch -d '+2 seconds' AGENTS.md"
            )
            fake_llm.script(
                fakellm.tool_call("bash", {"script": script, "display_name": "note"}),
                fakellm.text(f"answer {turn}"),
            )
        elif turn % 2:
            fake_llm.script(
                fakellm.tool_call("bash", {"script": "true", "display_name": "check"}),
                fakellm.text(f"answer {turn}"),
            )
        else:
            fake_llm.script(fakellm.text(f"answer {turn}"))
        result = await session.run_turn(f"question {turn}")
        assert result.reason == "completed", (turn, result)

    requests = fake_llm.requests
    assert not fake_llm.errors
    assert len({system_of(r) for r in requests}) == 1
    assert len({tools_of(r) for r in requests}) == 1
    assert_prefix_chain(requests)
    assert breaks_in(requests) == 0
    assert prefix_breaks(SessionLog.open(harness.ws_id).frames) == []
    changed = [f.data["changed"] for f in rows(harness.ws_id)]
    assert len(changed) == len(mutations) + 2  # + the mid-turn edit + the edit across restart
    assert ["instructions"] in changed and ["tool:bash"] in changed and ["model"] in changed
    assert any("agent" in c for c in changed) and ["tool:file_read"] in changed
    # The mid-turn change landed after the tool result, before the next step's request.
    mid = next(r for r in requests if any("changelog" in t for t in texts_of(r)))
    assert mid.json["messages"][-1]["content"][0]["type"] == "tool_result"
    read = sum(r.cache.read_tokens for r in requests if r.cache)
    prompt = sum(r.cache.prompt_tokens for r in requests if r.cache)
    share = read / prompt
    print(
        f"\ncache: {len(requests)} requests, {read}/{prompt} input tokens from cache ({share:.1%})"
    )
    assert share > 0.85


async def test_an_agents_md_edit_is_a_row_and_the_system_prompt_stays(
    fake_llm: FakeLLM, harness: ContextHarness, repo: Path
) -> None:
    session = harness.session()
    fake_llm.script(fakellm.text("one"), fakellm.text("two"))
    await session.run_turn("first")
    edit(repo / "AGENTS.md", "Always write docstrings.\n")
    await session.run_turn("second")
    first, second = fake_llm.requests
    assert system_of(second) == system_of(first)
    assert "make test" in system_of(second) and "docstrings" not in system_of(second)
    row = texts_of(second)[-2]
    assert "<context-update>" in row and "Always write docstrings." in row
    assert texts_of(second)[-1] == "second"
    assert second.cache is not None and first.cache is not None
    assert second.cache.matched_prefix_tokens >= first.cache.prompt_tokens


async def test_skills_added_and_removed_are_rows_and_the_index_stays(
    fake_llm: FakeLLM, harness: ContextHarness, repo: Path
) -> None:
    session = harness.session()
    fake_llm.script(fakellm.text("a"), fakellm.text("b"), fakellm.text("c"))
    await session.run_turn("one")
    skill(repo, "beta", "Second skill")
    await session.run_turn("two")
    shutil.rmtree(repo / ".xum/skills/alpha")
    await session.run_turn("three")
    first, second, third = fake_llm.requests
    assert system_of(first) == system_of(second) == system_of(third)
    assert "- alpha: First skill" in system_of(third) and "beta" not in system_of(third)
    added = texts_of(second)[-2]
    assert "- beta: Second skill" in added and "- alpha: First skill" in added
    removed = texts_of(third)[-2]
    assert "- beta: Second skill" in removed and "alpha" not in removed


async def test_a_tool_section_edit_leaves_the_tool_descriptions_frozen(
    fake_llm: FakeLLM, harness: ContextHarness, repo: Path
) -> None:
    session = harness.session()
    fake_llm.script(fakellm.text("a"), fakellm.text("b"))
    await session.run_turn("one")
    edit(repo / ".xum/AGENTS.md", "## Tool: bash\nNever run git push.\n")
    await session.run_turn("two")
    first, second = fake_llm.requests
    assert tools_of(first) == tools_of(second)
    assert "Prefer rg over grep." in description_of(second, "bash")
    row = texts_of(second)[-2]
    assert '<tool-instructions tool="bash">\nProject instructions for this tool' in row
    assert row.endswith("Never run git push.\n</tool-instructions>\n</context-update>")


async def test_a_restart_reuses_the_recorded_sections(
    fake_llm: FakeLLM, harness: ContextHarness, repo: Path
) -> None:
    fake_llm.script(fakellm.text("before"), fakellm.text("after"))
    await harness.session().run_turn("one")
    # While xum is down: new instructions, a new skill, a new tool note.
    edit(repo / "AGENTS.md", "New rules after the restart.\n")
    skill(repo, "beta", "Second skill")
    edit(repo / ".xum/AGENTS.md", "## Tool: bash\nChanged while down.\n")
    await harness.session().run_turn("two")  # a new engine over the same log
    first, second = fake_llm.requests
    assert system_of(second) == system_of(first)
    assert tools_of(second) == tools_of(first)
    row = texts_of(second)[-2]
    assert "New rules after the restart." in row and "beta" in row and "Changed while down." in row
    frozen = [f for f in SessionLog.open(harness.ws_id).frames if f.type == ev.CONTEXT_FROZEN]
    assert len(frozen) == 1


async def test_switching_to_an_agent_with_the_same_tools_is_a_row(
    fake_llm: FakeLLM, harness: ContextHarness
) -> None:
    session = harness.session("exec")
    fake_llm.script(fakellm.text("a"), fakellm.text("b"), fakellm.text("c"))
    await session.run_turn("one")
    session.set_agent("reviewer")
    await session.run_turn("two")
    session.set_agent("exec")
    await session.run_turn("three")
    first, second, third = fake_llm.requests
    assert system_of(first) == system_of(second) == system_of(third)
    assert tools_of(first) == tools_of(third)
    assert "EXEC-MODE" in system_of(first) and "REVIEW-MODE" not in system_of(first)
    # The new agent's body and its `Mode:` sections arrive as one row each way.
    to_reviewer, to_exec = texts_of(second)[-2], texts_of(third)[-2]
    assert '<agent id="reviewer"' in to_reviewer
    assert "Mode-specific instructions now in effect:\n<mode-exec>" in to_reviewer
    assert "REVIEW-MODE: cite the line" in to_reviewer
    assert '<agent id="exec"' in to_exec
    assert "EXEC-MODE" in to_exec and "REVIEW-MODE" not in to_exec
    assert [f.data["changed"] for f in rows(harness.ws_id)] == [["agent", "mode"]] * 2
    assert prefix_breaks(SessionLog.open(harness.ws_id).frames) == []
    assert breaks_in(fake_llm.requests) == 0


async def test_a_new_plan_file_path_is_a_row(fake_llm: FakeLLM, harness: ContextHarness) -> None:
    """The plan section changes on its own when the workspace gets another name (a rename moves
    its plan file) while the session goes on with the same log and tools."""
    fake_llm.script(
        fakellm.tool_call("propose_plan", {}),
        fakellm.text("a"),
        fakellm.tool_call("propose_plan", {}),
        fakellm.text("b"),
    )
    old_plan = str(harness.plan_file)
    await harness.session("plan").run_turn("one")
    harness.name = "renamed-ws-cd34"
    await harness.session("plan").run_turn("two")
    first, *_, later = fake_llm.requests
    assert system_of(later) == system_of(first) and tools_of(later) == tools_of(first)
    assert f"Plan file: {old_plan}" in system_of(later)
    (row,) = rows(harness.ws_id)
    assert row.data["changed"] == ["plan"]
    text = row.data["message"]["content"][0]["text"]
    assert "Plan-mode rules now in effect:" in text
    assert f"Plan file: {harness.plan_file}" in text and old_plan not in text
    assert prefix_breaks(SessionLog.open(harness.ws_id).frames) == []


async def test_a_reset_folds_the_changes_into_new_frozen_sections(
    fake_llm: FakeLLM, harness: ContextHarness, repo: Path
) -> None:
    session = harness.session()
    fake_llm.script(fakellm.text("a"), fakellm.text("b"), fakellm.text("c"))
    await session.run_turn("one")
    edit(repo / "AGENTS.md", "Folded at the reset.\n")
    await session.run_turn("two")
    session.log.append(ev.CONTEXT_RESET, {"reason": "test"})
    await session.run_turn("three")
    third = fake_llm.requests[2]
    assert "Folded at the reset." in system_of(third)
    assert not any("<context-update>" in t for t in texts_of(third))
    assert texts_of(third) == ["three"]
    reasons = [
        f.data["reason"]
        for f in SessionLog.open(harness.ws_id).frames
        if f.type == ev.CONTEXT_FROZEN
    ]
    assert reasons == ["start", "context_reset"]


async def test_an_empty_skill_list_and_a_list_that_becomes_empty(
    fake_llm: FakeLLM, harness: ContextHarness, repo: Path
) -> None:
    shutil.rmtree(repo / ".xum/skills/alpha")
    # Hide the built-in skill from the model so the list starts empty.
    skill(repo, "xum-customize", "kept out of the index", advertise="false")
    session = harness.session()
    fake_llm.script(fakellm.text("a"), fakellm.text("b"), fakellm.text("c"))
    await session.run_turn("one")
    assert "<agent-skills>" not in system_of(fake_llm.requests[0])
    skill(repo, "first", "The first skill ever")
    await session.run_turn("two")
    assert "- first: The first skill ever" in texts_of(fake_llm.requests[1])[-2]
    shutil.rmtree(repo / ".xum/skills/first")
    await session.run_turn("three")
    assert "No skills are available any more" in texts_of(fake_llm.requests[2])[-2]
    assert len({system_of(r) for r in fake_llm.requests}) == 1


async def test_anthropic_breakpoints_sit_on_the_frozen_prefix_and_the_history_tail(
    fake_llm: FakeLLM, harness: ContextHarness
) -> None:
    fake_llm.script(fakellm.text("a"), fakellm.text("b"))
    session = harness.session()
    await session.run_turn("one")
    await session.run_turn("two")
    body = fake_llm.requests[1].json
    assert "cache_control" in body["tools"][-1]
    assert all("cache_control" not in t for t in body["tools"][:-1])
    assert "cache_control" in body["system"][-1]
    assert "cache_control" in body["messages"][-1]["content"][-1]
    assert fake_llm.requests[1].cache.read_tokens > 0  # type: ignore[union-attr]


async def test_openai_requests_carry_a_stable_per_workspace_cache_key(
    fake_llm: FakeLLM, repo: Path
) -> None:
    fake_llm.cache_config.openai_min_tokens = 0  # short test prompts can hit, exactly
    fake_llm.cache_config.openai_increment = 1
    h = ContextHarness(fake_llm, repo, wire="openai-responses")
    try:
        session = h.session()
        fake_llm.script(fakellm.text("a"), fakellm.text("b"))
        await session.run_turn("one")
        edit(repo / "AGENTS.md", "A change for the second request.\n")
        await session.run_turn("two")
    finally:
        await h.close()
    keys = {r.json.get("prompt_cache_key") for r in fake_llm.requests}
    assert keys == {f"xum-{h.ws_id}"}
    first, second = fake_llm.requests
    assert first.json["instructions"] == second.json["instructions"]
    assert json.dumps(first.json["tools"]) == json.dumps(second.json["tools"])
    assert second.cache is not None and first.cache is not None
    assert second.cache.read_tokens >= first.cache.prompt_tokens
