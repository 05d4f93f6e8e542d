"""Tool policy: anchored add/remove per layer, `require`, and the runtime restrictions that no
frontmatter can undo. The restrictions are checked over a tool list that includes the task and
report tools, as they apply to whatever tools exist."""

from __future__ import annotations

from pathlib import Path

from tests.contextkit import live, workspace_context, write
from tests.gitrepo import make_repo
from xum.context.agents import ToolLayer
from xum.context.toolpolicy import PolicyContext, resolve_tool_policy
from xum.context.workspace import builtin_agents

AVAILABLE = (
    "bash",
    "file_read",
    "file_edit_replace_string",
    "file_edit_insert",
    "propose_plan",
    "ask_user_question",
    "task",
    "task_await",
    "task_list",
    "agent_report",
    "mux_config_read",
)


def policy(*layers: ToolLayer | None, **context: object):  # type: ignore[no-untyped-def]
    warnings: list[str] = []
    result = resolve_tool_policy(layers, AVAILABLE, PolicyContext(**context), warnings.append)  # type: ignore[arg-type]
    return result, warnings


def test_add_then_remove_per_layer_base_first() -> None:
    base = ToolLayer(add=(".*",), remove=("file_edit_.*", "task"))
    child = ToolLayer(add=("file_edit_insert",), remove=("bash",))
    result, _ = policy(base, child)
    assert "file_edit_insert" in result.tools and "file_edit_replace_string" not in result.tools
    assert "bash" not in result.tools and "task" not in result.tools
    assert list(result.tools) == [n for n in AVAILABLE if n in result.tools]  # registry order


def test_patterns_are_anchored() -> None:
    result, _ = policy(ToolLayer(add=(".*",), remove=("task_.*",)))
    assert "task" in result.tools and "task_await" not in result.tools
    only, _ = policy(ToolLayer(add=("file",)))
    assert only.tools == ()  # `file` does not match file_read


def test_no_layer_with_tools_means_no_tools() -> None:
    result, _ = policy(None, None)
    assert result.tools == () and result.required is None
    assert builtin_agents().resolve("compact").tool_layers == (None,)


def test_require_is_literal_last_entry_wins_and_the_child_replaces_the_base() -> None:
    base = ToolLayer(add=("bash",), require=("file_read", "bash"))
    result, _ = policy(base)
    assert result.required == "bash"
    child = ToolLayer(require=("propose_plan",))
    result, _ = policy(base, child)
    assert result.required == "propose_plan" and "propose_plan" in result.tools  # enabled by it
    cleared, _ = policy(base, ToolLayer(require=()))
    assert cleared.required is None
    regex, warnings = policy(ToolLayer(add=("bash",), require=("bash", "task_.*")))
    assert regex.required == "bash"
    assert any("task_.*" in w for w in warnings)


def test_invalid_patterns_are_reported_and_ignored() -> None:
    result, warnings = policy(ToolLayer(add=("bash", "(unclosed")))
    assert result.tools == ("bash",)
    assert any("(unclosed" in w for w in warnings)


def test_subagents_never_ask_the_user() -> None:
    everything = ToolLayer(add=(".*",))
    assert "ask_user_question" in policy(everything)[0].tools
    assert "ask_user_question" not in policy(everything, subagent=True)[0].tools
    forced, _ = policy(ToolLayer(add=("bash",), require=("ask_user_question",)), subagent=True)
    assert forced.required is None  # a hard restriction beats `require`


def test_plan_like_subagents_must_propose_and_cannot_report() -> None:
    plan_like = ToolLayer(add=(".*",))
    result, _ = policy(plan_like, subagent=True)
    assert result.plan_like
    assert result.required == "propose_plan" and "agent_report" not in result.tools


def test_other_subagents_report_and_cannot_propose() -> None:
    exec_like = ToolLayer(add=("bash",))
    result, _ = policy(exec_like, subagent=True)
    assert not result.plan_like
    assert "agent_report" in result.tools  # switched on although no layer added it
    assert "propose_plan" not in result.tools
    top_level, _ = policy(exec_like)
    assert "agent_report" not in top_level.tools


def test_the_task_family_is_off_at_the_depth_limit() -> None:
    everything = ToolLayer(add=(".*",))
    below, _ = policy(everything, task_depth=1, max_task_depth=2)
    assert {"task", "task_await", "task_list"} <= set(below.tools)
    at, _ = policy(everything, task_depth=2, max_task_depth=2)
    assert not {"task", "task_await", "task_list"} & set(at.tools)


def test_plan_like_agents_may_only_spawn_explore_and_edit_only_the_plan_file() -> None:
    result, _ = policy(ToolLayer(add=(".*",)))
    assert result.plan_like and result.plan_file_only
    assert result.spawnable_agents == frozenset({"explore"})
    exec_like, _ = policy(ToolLayer(add=(".*",), remove=("propose_plan",)))
    assert not exec_like.plan_file_only and exec_like.spawnable_agents is None


async def test_builtin_policies_over_the_real_registry(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    context = workspace_context(repo)
    exec_ = await live(context, "exec")
    plan = await live(context, "plan")
    explore = await live(context, "explore", subagent=True)
    compact = await live(context, "compact")
    assert (
        "propose_plan" not in exec_.policy.tools and "ask_user_question" not in exec_.policy.tools
    )
    assert exec_.mode == "exec" and exec_.plan_file is None
    assert {"propose_plan", "ask_user_question", "file_edit_insert"} <= set(plan.policy.tools)
    assert plan.mode == "plan" and plan.required_tool == "propose_plan"
    assert plan.plan_file is not None and plan.plan_file.endswith("/plans/repo/test-ws-ab12.md")
    assert not any(t.startswith("file_edit_") for t in explore.policy.tools)
    assert "ask_user_question" not in explore.policy.tools
    assert compact.tools == [] and compact.policy.tools == ()


async def test_a_custom_agent_adds_a_tool_its_base_removed(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write(
        repo / ".xum/agents/asker.md",
        "---\nname: Asker\nbase: exec\ntools:\n  add: [ask_user_question]\n  remove: [bash]\n---\n",
    )
    asker = await live(workspace_context(repo), "asker")
    assert "ask_user_question" in asker.policy.tools and "bash" not in asker.policy.tools
    assert asker.mode == "exec"  # not plan-like: propose_plan stays removed


def test_a_later_layer_that_removes_the_required_tool_drops_the_requirement() -> None:
    base = ToolLayer(add=(".*",), require=("propose_plan",))
    assert policy(base)[0].required == "propose_plan"
    result, _ = policy(base, ToolLayer(remove=("propose_plan",)))
    assert result.required is None and "propose_plan" not in result.tools
    assert not result.plan_like
    # Requiring it again in a still later layer turns it back on.
    again, _ = policy(base, ToolLayer(remove=("propose_plan",)), ToolLayer(require=("bash",)))
    assert again.required == "bash" and "propose_plan" not in again.tools


async def test_a_project_agent_removing_the_plan_tool_from_plan_is_not_forced_to_call_it(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    write(
        repo / ".xum/agents/sketch.md",
        "---\nname: Sketch\nbase: plan\ntools:\n  remove: [propose_plan]\n---\n",
    )
    sketch = await live(workspace_context(repo), "sketch")
    assert sketch.required_tool is None and "propose_plan" not in sketch.policy.tools
