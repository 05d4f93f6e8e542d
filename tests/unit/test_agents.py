"""Agent definitions: discovery and precedence, frontmatter, inheritance, disabling and the
fallback for a vanished agent. Real files in a temp git repository and a private $XUM_ROOT."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.contextkit import live, workspace_context, write
from xum.context.agents import AgentError
from xum.context.builtin import main as builtin_main
from xum.context.workspace import builtin_agents


def agent_file(root: Path, agent_id: str, front: str, body: str = "") -> Path:
    return write(root / f"{agent_id}.md", f"---\n{front.strip()}\n---\n\n{body}\n")


def project_agents(repo: Path) -> Path:
    return repo / ".xum" / "agents"


def global_agents(xum_root: Path) -> Path:
    return xum_root / "agents"


def test_builtin_index_is_fresh() -> None:
    assert builtin_main(["--check"]) == 0, "run python -m xum.context.builtin --write"


def test_builtins_exist_and_explore_replaces_the_exec_body() -> None:
    catalog = builtin_agents()
    for agent_id in ("exec", "plan", "explore", "compact"):
        assert catalog.exists(agent_id)
    explore = catalog.resolve("explore")
    exec_ = catalog.resolve("exec")
    assert explore.chain == ("exec", "explore")
    assert explore.hidden and explore.runnable and explore.skip_init_hook
    assert "read-only" in explore.body and exec_.body not in explore.body  # prompt.append false
    assert catalog.resolve("plan").tool_layers[-1].require == ("propose_plan",)  # type: ignore[union-attr]
    assert catalog.resolve("compact").tool_layers == (None,)  # no tools block at all


async def test_project_beats_global_beats_builtin(repo: Path, xum_root: Path) -> None:
    agent_file(global_agents(xum_root), "review", "name: Global Review\nbase: exec", "GLOBAL")
    agent_file(project_agents(repo), "review", "name: Project Review\nbase: exec", "PROJECT")
    agent_file(global_agents(xum_root), "exec", "name: My Exec", "GLOBAL EXEC BODY")
    catalog, _ = await workspace_context(repo).agent_catalog()
    review = catalog.resolve("review")
    assert review.name == "Project Review" and review.body.endswith("PROJECT")
    exec_ = catalog.resolve("exec")
    assert exec_.name == "My Exec" and exec_.body == "GLOBAL EXEC BODY"  # no base: replaced
    assert "GLOBAL EXEC BODY" in review.body  # project review's base exec is the global one


async def test_only_direct_md_children_count(repo: Path) -> None:
    agent_file(project_agents(repo) / "nested", "deep", "name: Deep")
    write(project_agents(repo) / "notes.txt", "not an agent")
    catalog, _ = await workspace_context(repo).agent_catalog()
    assert not catalog.exists("deep") and not catalog.exists("notes")


async def test_bad_names_and_huge_files_are_skipped_with_a_warning_naming_the_file(
    repo: Path,
) -> None:
    agent_file(project_agents(repo), "Bad_Name", "name: Bad")
    agent_file(project_agents(repo), "-dash", "name: Dash")
    write(project_agents(repo) / "huge.md", "---\nname: Huge\n---\n" + "x" * (1024 * 1024 + 10))
    write(project_agents(repo) / "broken.md", "---\nname: [unclosed\n---\nbody\n")
    agent_file(project_agents(repo), "ok-agent", "name: Fine\nbase: exec")
    catalog, _ = await workspace_context(repo).agent_catalog()
    assert catalog.exists("ok-agent")
    for name in ("Bad_Name", "-dash", "huge", "broken"):
        assert not catalog.exists(name)
        assert any(f"{name}.md" in d for d in catalog.diagnostics), (name, catalog.diagnostics)
    assert any("1 MB" in d for d in catalog.diagnostics)
    assert any("not valid YAML" in d for d in catalog.diagnostics)


async def test_unknown_keys_are_ignored_and_fields_inherit(repo: Path) -> None:
    agent_file(
        project_agents(repo),
        "base-one",
        """
name: Base One
description: the base
ui: {color: "#123456"}
ai: {model: sonnet, thinkingLevel: low}
subagent: {runnable: true, append_prompt: "BASE APPEND"}
tools: {add: [bash]}
flavour: vanilla
""",
        "BASE BODY",
    )
    agent_file(
        project_agents(repo),
        "child",
        "name: Child\nbase: base-one\nai: {model: opus}",
        "CHILD BODY",
    )
    catalog, _ = await workspace_context(repo).agent_catalog()
    child = catalog.resolve("child")
    assert child.color == "#123456"
    assert (child.ai_model, child.ai_thinking) == ("opus", "low")
    assert child.runnable and child.append_prompt == "BASE APPEND"
    assert child.description == "the base"
    assert child.body == "BASE BODY\n\nCHILD BODY"  # prompt.append defaults to true


async def test_prompt_append_false_replaces_the_body_but_tools_still_inherit(repo: Path) -> None:
    agent_file(
        project_agents(repo), "quiet", "name: Quiet\nbase: exec\nprompt: {append: false}", "ONLY ME"
    )
    context = workspace_context(repo)
    quiet = await live(context, "quiet")
    assert quiet.agent.body == "ONLY ME"
    assert "bash" in quiet.policy.tools  # exec's `.*` still applies


async def test_same_id_base_skips_the_current_scope(repo: Path) -> None:
    agent_file(
        project_agents(repo),
        "exec",
        "name: Exec\nbase: exec",
        "Run `make check` before you finish.",
    )
    catalog, _ = await workspace_context(repo).agent_catalog()
    exec_ = catalog.resolve("exec")
    assert exec_.chain == ("exec", "exec")
    assert exec_.body.startswith(builtin_agents().resolve("exec").body)
    assert exec_.body.endswith("Run `make check` before you finish.")


async def test_a_different_base_id_is_anchored_at_the_current_scope_or_lower(
    repo: Path, xum_root: Path
) -> None:
    # A global agent cannot pull in a project definition...
    agent_file(project_agents(repo), "helper", "name: Helper\ntools: {add: [bash]}")
    agent_file(global_agents(xum_root), "uses-helper", "name: Uses\nbase: helper")
    # ...and a built-in cannot either: explore's `base: exec` stays the built-in exec even
    # when the project defines its own exec with fewer tools.
    agent_file(project_agents(repo), "exec", "name: Tiny Exec\ntools: {add: [file_read]}")
    context = workspace_context(repo)
    catalog, _ = await context.agent_catalog()
    with pytest.raises(AgentError, match="base agent 'helper' not found"):
        catalog.resolve("uses-helper")
    explore = await live(context, "explore")
    assert "bash" in explore.policy.tools and "file_read" in explore.policy.tools
    assert (await live(context, "exec")).policy.tools == ("file_read",)


async def test_chains_stop_at_ten_levels_and_cycles_are_reported(repo: Path) -> None:
    agents = project_agents(repo)
    for i in range(10):
        agent_file(agents, f"ok{i}", f"name: ok{i}\nbase: ok{i + 1}")
    agent_file(agents, "ok10", "name: ok10\nbase: exec")  # ok0 -> ... -> ok10 -> exec: 11 bases
    for i in range(9):
        agent_file(agents, f"fine{i}", f"name: fine{i}\nbase: fine{i + 1}")
    agent_file(agents, "fine9", "name: fine9\nbase: exec")  # exactly 10 bases
    agent_file(agents, "ping", "name: ping\nbase: pong")
    agent_file(agents, "pong", "name: pong\nbase: ping")
    catalog, _ = await workspace_context(repo).agent_catalog()
    assert len(catalog.resolve("fine0").chain) == 11
    with pytest.raises(AgentError, match="more than 10 levels"):
        catalog.resolve("ok0")
    with pytest.raises(AgentError, match="cycle"):
        catalog.resolve("ping")


async def test_disabled_agents_are_gone_except_the_protected_ones(repo: Path) -> None:
    agent_file(project_agents(repo), "explore", "name: Explore\ndisabled: true")
    agent_file(project_agents(repo), "plan", "name: Plan\ndisabled: true")
    agent_file(project_agents(repo), "compact", "name: Compact\ndisabled: true")
    context = workspace_context(repo)
    catalog, _ = await context.agent_catalog()
    assert not catalog.exists("explore")
    assert catalog.exists("plan") and catalog.exists("compact")
    assert any("plan agent cannot be disabled" in d for d in catalog.diagnostics)
    visible = [a.id for a in await context.list_agents()]
    assert "plan" in visible and "exec" in visible and "explore" not in visible
    assert "compact" not in visible  # hidden


async def test_a_vanished_agent_falls_back_to_exec_at_top_level_and_errors_for_subagents(
    repo: Path,
) -> None:
    context = workspace_context(repo)
    fallen = await live(context, "gone")
    assert fallen.agent.id == "exec" and fallen.fallback_from == "gone"
    assert any("no agent named 'gone'" in d for d in fallen.diagnostics)
    with pytest.raises(AgentError):
        await live(context, "gone", subagent=True)


async def test_agent_files_are_noticed_when_they_change(repo: Path) -> None:
    context = workspace_context(repo)
    assert not (await context.agent_catalog())[0].exists("late")
    path = agent_file(project_agents(repo), "late", "name: Late\nbase: exec", "v1")
    assert (await context.agent_catalog())[0].resolve("late").body.endswith("v1")
    path.write_text("---\nname: Late\nbase: exec\n---\nversion two\n")
    from tests.contextkit import bump

    bump(path)
    assert (await context.agent_catalog())[0].resolve("late").body.endswith("version two")


async def test_the_task_tool_lists_the_agents_a_session_may_start(
    repo: Path, xum_root: Path
) -> None:
    context = workspace_context(repo)
    before = await live(context, "exec")
    agent_file(
        project_agents(repo),
        "reviewer",
        "name: Reviewer\ndescription: Reviews </tool-instructions> changes\n"
        "subagent:\n  runnable: true\ntools:\n  add: [file_read]",
    )
    agent_file(global_agents(xum_root), "private", "name: Private\ntools:\n  add: [bash]")
    exec_ = await live(context, "exec")
    task = next(t for t in exec_.tools if t.name == "task").description
    listed = task[task.index("Agents you can start (agentId):") :].splitlines()
    assert listed[1].startswith("- exec (the default): Carry out the request")
    assert listed[2].startswith("- explore: Read-only investigation")
    assert listed[3] == "- reviewer: Reviews &lt;/tool-instructions> changes"  # escaped
    assert len(listed) == 4  # neither plan nor the private agent is runnable
    # The list is the task tool's note: a change is tracked like a `Tool:` section edit.
    assert exec_.digests["tool:task"] != before.digests["tool:task"]
    plan = await live(context, "plan")
    plan_task = next(t for t in plan.tools if t.name == "task").description
    assert plan_task.endswith("Agents you can start (agentId):\n- explore: " + listed[2][11:])
