"""Sub-agents end to end: a parent AgentSession with a real SubAgentManager, children in real
git worktrees, every agent (parent and children) answered by one fake LLM server over HTTP that
routes each request by the text of its user messages."""

from __future__ import annotations

import os
import re
import subprocess
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.engine import engine_session
from tests.support.subagents import Agents, Step, bash, call, tool_results, until, user_texts
from tests.support.tools import process_gone, running_with, wait_none_running
from xum.engine.agent import SessionSettings, WorkspaceInfo
from xum.engine.route import resolve_route
from xum.llm.client import open_client
from xum.llm.retry import RetryPolicy
from xum.runtime.local import LocalRuntime
from xum.store import registry
from xum.store.registry import WorkspaceRecord
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM, RecordedRequest
from xum.tools.tasking import TASK_TOOL_NAMES, SubAgentError, TaskSpec
from xum.workspaces.assembly import subagent_manager
from xum.workspaces.state import local_state
from xum.workspaces.subagents.host import DeferredHost
from xum.workspaces.subagents.manager import ScopedHost, TaskSettings

pytestmark = pytest.mark.repo(
    name="project", files={"README.md": "hello\n"}, message="initial", identity=True
)


PARENT_TOOLS = ["bash", "file_read", *TASK_TOOL_NAMES]


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *args], cwd=repo, check=True, capture_output=True, text=True
    ).stdout.strip()


def started_ids(req: RecordedRequest) -> list[str]:
    return re.findall(r"in the background: ([0-9a-f]{10})", tool_results(req))


class Tree:
    """A git repository, a parent session on it, and the manager hosting its children."""

    def __init__(self, server: FakeLLM, repo: Path, settings: TaskSettings) -> None:
        env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.url}
        self.route = resolve_route("anthropic:claude-sonnet-5-5", env=env, config={})
        self.client = open_client(self.route.endpoint, retry=RetryPolicy(max_retries=0))
        self.repo = repo
        self.events: list[tuple[str, dict[str, Any]]] = []
        self.parent_events: list[dict[str, Any]] = []
        self.manager = subagent_manager(
            settings=settings, listener=lambda ws, e: self.events.append((ws, e.to_dict()))
        )
        info = WorkspaceInfo("parentws01", "parent", str(repo), str(repo), "local")
        self.runtime = LocalRuntime(str(repo), str(repo.parent))
        self.host: ScopedHost = self.manager.host_for(
            info, runtime=self.runtime, route=self.route, client=self.client, thinking="medium"
        )
        self.session = engine_session(
            repo,
            self.route,
            self.client,
            ws_id=info.id,
            name=info.name,
            runtime=self.runtime,
            settings=SessionSettings(system_prompt="You are the parent.", tools=PARENT_TOOLS),
            scratch_dir=repo.parent / "scratch",
            events=self.parent_events,
            subagents=self.host,
        )

    def results(self, name: str) -> list[dict[str, Any]]:
        return [e for e in self.parent_events if e["type"] == "tool-result" and e["name"] == name]

    async def close(self) -> None:
        await self.session.aclose()
        await self.manager.aclose()
        await self.client.aclose()


@pytest.fixture
def agents(fake_llm: FakeLLM) -> Agents:
    routes = Agents()
    fake_llm.set_responder(routes)
    return routes


async def make_tree(fake_llm: FakeLLM, repo: Path, **settings: int) -> Tree:
    return Tree(fake_llm, repo, TaskSettings(**settings))


@pytest.fixture
async def tree(fake_llm: FakeLLM, repo: Path) -> AsyncIterator[Tree]:
    t = await make_tree(fake_llm, repo)
    yield t
    await t.close()


def held_until(release: Path) -> str:
    """A shell loop that ends once `release` exists: a step that runs until the test lets it
    end (or stops the child), instead of a sleep that is merely long enough."""
    return f"while [ ! -e {release} ]; do sleep 0.01; done"


def barrier(directory: Path, name: str, parties: int) -> str:
    """A shell snippet: check in as `name` under `directory`, then wait until `parties` have
    checked in; after 30 s (bash's $SECONDS) it says 'barrier: alone' and goes on."""
    return (
        f"mkdir -p {directory}; touch {directory}/{name}; "
        f"while [ $(ls {directory} | wc -l) -lt {parties} ]; do "
        f"[ $SECONDS -lt 30 ] || {{ echo 'barrier: alone'; break; }}; sleep 0.01; done"
    )


# The acceptance scenario -------------------------------------------------------------------


async def test_parent_runs_three_children_in_parallel_and_applies_one_patch(
    fake_llm: FakeLLM, agents: Agents, tree: Tree, repo: Path, tmp_path: Path
) -> None:
    def spawn(key: str, title: str) -> fakellm.ToolCall:
        return call("task", title=title, prompt=f"{key}: do your part", run_in_background=True)

    def apply(**extra: Any) -> Step:
        return lambda req: fakellm.reply(
            call("task_apply_git_patch", task_id=started_ids(req)[0], **extra)
        )

    agents.add(
        "ROLE:parent",
        fakellm.reply(
            spawn("ROLE:child-a", "Writer"),
            spawn("ROLE:child-b", "Reader"),
            spawn("ROLE:child-c", "Checker"),
        ),
        fakellm.reply(call("task_await", min_completed=3, timeout_secs=60)),
        apply(dry_run=True),
        apply(expected_head_sha="0" * 40),
        apply(),
        fakellm.text("Merged the writer's work."),
    )
    # Each child's first step waits at a barrier until all three are in theirs: so all three
    # first requests come before any second one, if (and only if) they run at the same time.
    gate = tmp_path / "barrier"
    agents.add(
        "ROLE:child-a",
        fakellm.reply(
            bash(
                barrier(gate, "a", 3) + "; echo a > a.txt && git add a.txt && "
                "git commit -qm 'child a: a.txt'"
            )
        ),
        fakellm.text("A: committed a.txt"),
    )
    agents.add(
        "ROLE:child-b", fakellm.reply(bash(barrier(gate, "b", 3))), fakellm.text("B: all good")
    )
    agents.add(
        "ROLE:child-c", fakellm.reply(bash(barrier(gate, "c", 3))), fakellm.text("C: all good")
    )
    head_before = git(repo, "rev-parse", "HEAD")

    result = await tree.session.run_turn("ROLE:parent: split the work three ways")

    assert result.reason == "completed", result
    assert result.text == "Merged the writer's work."
    # The three children ran at the same time: each one's first request came before any
    # child's second request.
    firsts, seconds = [], []
    for key in ("ROLE:child-a", "ROLE:child-b", "ROLE:child-c"):
        requests = agents.requests_of(fake_llm, key)
        assert len(requests) == 2
        assert "barrier: alone" not in tool_results(requests[1]), f"{key} waited alone"
        firsts.append(requests[0].arrived)
        seconds.append(requests[1].arrived)
    assert max(firsts) < min(seconds)

    awaited = tree.results("task_await")[0]
    assert [t["status"] for t in awaited["meta"]["tasks"]] == ["reported"] * 3
    assert all(t["header"]["status"] == "completed" for t in awaited["meta"]["tasks"])
    assert "A: committed a.txt" in awaited["output"] and "header: {" in awaited["output"]

    dry, mismatch, real = tree.results("task_apply_git_patch")
    assert not dry["is_error"] and "dry run" in dry["output"]
    assert dry["meta"]["head_after"] == head_before
    assert mismatch["is_error"] and "refused" in mismatch["output"]
    assert not real["is_error"], real["output"]
    # The parent's checkout has the child's commit on top of where it was.
    assert git(repo, "log", "-1", "--format=%s") == "child a: a.txt"
    assert git(repo, "rev-parse", "HEAD~1") == head_before
    assert (repo / "a.txt").read_text() == "a\n"
    # Every child is a workspace: a registry record with the parent's id and its own branch.
    children = [r for r in registry.list_workspaces() if r.parent_id == "parentws01"]
    assert len(children) == 3 and all(r.runtime == "worktree" and r.branch for r in children)
    assert not fake_llm.errors


async def test_patch_guards_when_called_directly(
    fake_llm: FakeLLM, agents: Agents, tree: Tree, repo: Path
) -> None:
    agents.add(
        "ROLE:writer",
        fakellm.reply(bash("echo x > x.txt && git add x.txt && git commit -qm 'x'")),
        fakellm.text("done"),
    )
    (task_id,) = await tree.host.spawn(TaskSpec("exec", "Writer", "ROLE:writer"))
    await until(lambda: not tree.host.view(task_id).active)
    before = git(repo, "rev-parse", "HEAD")
    dry = await tree.host.apply_patch(
        task_id, dry_run=True, expected_head_sha=None, three_way=False, force=False
    )
    assert dry.ok and git(repo, "rev-parse", "HEAD") == before
    assert not (repo / "x.txt").exists() and git(repo, "status", "--porcelain") == ""
    wrong = await tree.host.apply_patch(
        task_id, dry_run=False, expected_head_sha="deadbeef", three_way=False, force=False
    )
    assert not wrong.ok and git(repo, "rev-parse", "HEAD") == before
    short = before[:10]
    applied = await tree.host.apply_patch(
        task_id, dry_run=False, expected_head_sha=short, three_way=True, force=False
    )
    assert applied.ok, applied.message
    again = await tree.host.apply_patch(
        task_id, dry_run=False, expected_head_sha=None, three_way=False, force=False
    )
    assert not again.ok and "already" in again.message


# Caps ----------------------------------------------------------------------------------------


async def test_depth_cap_refuses_nesting_beyond_the_limit(
    fake_llm: FakeLLM, agents: Agents, repo: Path
) -> None:
    tree = await make_tree(fake_llm, repo, max_depth=1)
    try:
        agents.add("ROLE:leaf", fakellm.text("leaf done"))
        (task_id,) = await tree.host.spawn(TaskSpec("exec", "Leaf", "ROLE:leaf"))
        await until(lambda: not tree.host.view(task_id).active)
        # The child sits at the maximum depth: it was offered no task tools ...
        (request,) = agents.requests_of(fake_llm, "ROLE:leaf")
        offered = {t["name"] for t in request.json["tools"]}
        assert "bash" in offered and "agent_report" in offered
        assert not offered & set(TASK_TOOL_NAMES)
        # ... and its host refuses to spawn even when asked directly.
        child_host = tree.manager._hosts[task_id]
        with pytest.raises(SubAgentError, match="depth limit"):
            await child_host.spawn(TaskSpec("exec", "Grandchild", "ROLE:leaf"))
    finally:
        await tree.close()


async def test_concurrency_cap_queues_the_rest(
    fake_llm: FakeLLM, agents: Agents, repo: Path, tmp_path: Path
) -> None:
    tree = await make_tree(fake_llm, repo, max_running=1)
    release = tmp_path / "release"
    try:
        for key in ("ROLE:one", "ROLE:two"):
            agents.add(key, fakellm.reply(bash(held_until(release))), fakellm.text(f"{key} done"))
        (first,) = await tree.host.spawn(TaskSpec("exec", "One", "ROLE:one"))
        (second,) = await tree.host.spawn(TaskSpec("exec", "Two", "ROLE:two"))
        # The first is held in its step until released: the second waits in the queue.
        await until(lambda: tree.host.view(first).status == "running")
        assert tree.host.view(second).status == "queued"
        release.touch()
        await until(lambda: not tree.host.view(second).active)
        one = agents.requests_of(fake_llm, "ROLE:one")
        two = agents.requests_of(fake_llm, "ROLE:two")
        assert two[0].arrived > one[-1].arrived  # the second started after the first ended
        statuses = [e["status"] for ws, e in tree.events if e.get("task_id") == second]
        assert statuses[:2] == ["queued", "running"]
    finally:
        await tree.close()


# Steering and stopping -----------------------------------------------------------------------


async def test_message_to_a_running_child_arrives_after_its_current_step(
    fake_llm: FakeLLM, agents: Agents, tree: Tree, tmp_path: Path
) -> None:
    marker, release = tmp_path / "step-running", tmp_path / "release"
    agents.add(
        "ROLE:steered",
        fakellm.reply(bash(f"touch {marker}; {held_until(release)}")),
        lambda req: fakellm.text("heard: " + user_texts(req).splitlines()[-1]),
    )
    (task_id,) = await tree.host.spawn(TaskSpec("exec", "Steered", "ROLE:steered"))
    await until(marker.exists)  # the step runs, and goes on until released
    outcome = await tree.host.send_message(task_id, "also check the docs", dispatch="tool-end")
    assert "after its current step" in outcome
    release.touch()
    await until(lambda: not tree.host.view(task_id).active)
    second = agents.requests_of(fake_llm, "ROLE:steered")[1]
    last = second.json["messages"][-1]
    assert [b["type"] for b in last["content"]] == ["tool_result", "text"]
    assert last["content"][1]["text"].endswith("also check the docs")
    assert tree.host.view(task_id).result == "heard: also check the docs"


async def test_message_wakes_a_finished_child_with_a_new_turn(
    fake_llm: FakeLLM, agents: Agents, tree: Tree
) -> None:
    agents.add("ROLE:sleeper", fakellm.text("first answer"), fakellm.text("second answer"))
    (task_id,) = await tree.host.spawn(TaskSpec("exec", "Sleeper", "ROLE:sleeper"))
    await until(lambda: tree.host.view(task_id).status == "reported")
    await tree.host.send_message(task_id, "one more thing", dispatch="tool-end")
    await until(lambda: tree.host.view(task_id).turns == 2 and not tree.host.view(task_id).active)
    view = tree.host.view(task_id)
    assert view.result == "second answer" and view.header is not None
    assert view.header["turns"] == 2


async def test_stop_interrupts_the_child_and_kills_its_processes(
    fake_llm: FakeLLM, agents: Agents, tree: Tree, tmp_path: Path
) -> None:
    # Found by what they run: in the sandbox `$$` and `$!` are PIDs of the command's namespace.
    started = tmp_path / "child-started"
    tag = f"300.{os.getpid()}1"
    agents.add(
        "ROLE:busy",
        fakellm.reply(
            fakellm.Text("Working on it."),
            bash(f"sleep {tag} & echo started > {started}; wait"),
        ),
        fakellm.text("never reached"),
    )
    (task_id,) = await tree.host.spawn(TaskSpec("exec", "Busy", "ROLE:busy"))
    await until(lambda: started.exists() and running_with(tag) != [])
    (view,) = await tree.host.stop([task_id])
    assert view.status == "interrupted"
    assert await wait_none_running(tag) == []
    assert view.header is not None and view.header["end_reason"] == "interrupted"
    # It said something before it was stopped: the result is partial, not completed.
    assert view.header["status"] == "partial" and view.result == "Working on it."


async def test_abnormal_end_after_a_claimed_success_is_partial(
    fake_llm: FakeLLM, agents: Agents, tree: Tree
) -> None:
    agents.add(
        "ROLE:claims",
        fakellm.reply(fakellm.Text("All tests pass, the task is complete."), bash("true")),
        fakellm.error(
            401, {"type": "error", "error": {"type": "authentication_error", "message": "bad"}}
        ),
    )
    (task_id,) = await tree.host.spawn(TaskSpec("exec", "Claims", "ROLE:claims"))
    await until(lambda: not tree.host.view(task_id).active)
    view = tree.host.view(task_id)
    assert view.status == "failed"
    assert view.header is not None
    assert view.header["status"] == "partial" and view.header["end_reason"] == "error"
    assert view.result == "All tests pass, the task is complete."


# Reports, best of n, removal, costs -----------------------------------------------------------


async def test_agent_report_wakes_an_awaiting_parent_before_the_child_ends(
    fake_llm: FakeLLM, agents: Agents, tree: Tree, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    agents.add(
        "ROLE:reporter",
        fakellm.reply(call("agent_report", reportMarkdown="Found it in src/x.py", title="Lead")),
        fakellm.reply(bash(f"while [ ! -e {release} ]; do sleep 0.05; done")),
        fakellm.text("final answer"),
    )
    from xum.tools.task_await import TaskAwaitInput, TaskAwaitTool

    (task_id,) = await tree.host.spawn(TaskSpec("exec", "Reporter", "ROLE:reporter"))
    ctx = tree.session.tool_context()
    woke = await TaskAwaitTool().run(
        TaskAwaitInput(task_ids=[task_id], min_completed=None, timeout_secs=20), ctx
    )
    assert "Found it in src/x.py" in woke.output and 'title="Lead"' in woke.output
    assert woke.meta["tasks"][0]["status"] == "running"
    release.touch()
    done = await TaskAwaitTool().run(
        TaskAwaitInput(task_ids=[task_id], min_completed=None, timeout_secs=20), ctx
    )
    assert done.meta["tasks"][0]["status"] == "reported" and "final answer" in done.output
    assert "Found it" not in done.output  # reports are read once


async def test_best_of_n_runs_siblings_and_the_foreground_task_waits_for_all(
    fake_llm: FakeLLM, agents: Agents, tree: Tree
) -> None:
    agents.add(
        "ROLE:parent",
        fakellm.reply(call("task", agentId="explore", title="Idea", prompt="ROLE:idea", n=3)),
        fakellm.text("picked one"),
    )
    agents.add("ROLE:idea", lambda req: fakellm.text("candidate " + _candidate(req)))
    result = await tree.session.run_turn("ROLE:parent: best of 3")
    assert result.text == "picked one"
    (task_result,) = tree.results("task")
    metas = task_result["meta"]["tasks"]
    assert [m["status"] for m in metas] == ["reported"] * 3
    assert len({m["group"] for m in metas}) == 1 and metas[0]["group"]
    assert [m["title"] for m in metas] == ["Idea (1/3)", "Idea (2/3)", "Idea (3/3)"]
    for i in (1, 2, 3):
        assert f"candidate {i} of 3" in task_result["output"]


def _candidate(req: RecordedRequest) -> str:
    found = re.search(r"candidate (\d) of (\d)", req.json["system"][0]["text"])
    return f"{found.group(1)} of {found.group(2)}" if found else "?"


async def test_remove_deletes_the_child_workspace(
    fake_llm: FakeLLM, agents: Agents, tree: Tree, repo: Path, tmp_path: Path
) -> None:
    release = tmp_path / "release"
    agents.add("ROLE:temp", fakellm.reply(bash(held_until(release))), fakellm.text("done"))
    (task_id,) = await tree.host.spawn(TaskSpec("exec", "Temp", "ROLE:temp"))
    record = registry.get_workspace(task_id)
    assert record is not None and record.branch and Path(record.path).is_dir()
    with pytest.raises(SubAgentError, match="still active"):  # held in its step
        await tree.host.remove([task_id])
    release.touch()
    await until(lambda: not tree.host.view(task_id).active)
    assert await tree.host.remove([task_id]) == [task_id]
    assert registry.get_workspace(task_id) is None
    assert not Path(record.path).exists()
    assert record.branch not in git(repo, "branch", "--list")
    assert task_id not in tree.host.children()
    with pytest.raises(SubAgentError):
        tree.host.view(task_id)


async def test_children_costs_roll_up_into_the_parent(
    fake_llm: FakeLLM, agents: Agents, tree: Tree
) -> None:
    usage = fakellm.Usage(input_tokens=100_000, output_tokens=10_000)
    agents.add("ROLE:spender", fakellm.text("spent", usage=usage))
    ids = await tree.host.spawn(TaskSpec("exec", "Spender", "ROLE:spender", n=2))
    await until(lambda: all(not tree.host.view(i).active for i in ids))
    costs = [tree.host.view(i).header["cost_usd"] for i in ids]  # type: ignore[index]
    assert all(c and c > 0 for c in costs)
    # The headers round to six decimals; the tree's total does not.
    assert tree.host.external_cost_usd() == pytest.approx(sum(costs), abs=1e-5)
    env = tree.session.tool_context().env
    assert env["XUM_COSTS_USD"] == f"{sum(costs):.2f}"


async def test_isolation_none_shares_the_checkout(
    fake_llm: FakeLLM, agents: Agents, tree: Tree, repo: Path
) -> None:
    agents.add("ROLE:peek", fakellm.reply(bash("pwd > where.txt")), fakellm.text("looked"))
    (task_id,) = await tree.host.spawn(TaskSpec("explore", "Peek", "ROLE:peek", isolation="none"))
    await until(lambda: not tree.host.view(task_id).active)
    assert (repo / "where.txt").read_text().strip() == str(repo)
    with pytest.raises(SubAgentError, match="already there"):
        await tree.host.apply_patch(
            task_id, dry_run=True, expected_head_sha=None, three_way=False, force=False
        )


async def test_removing_a_child_deletes_all_its_local_state(
    fake_llm: FakeLLM, agents: Agents, tree: Tree, repo: Path
) -> None:
    # A child that shares the parent's checkout is removed without the workspace lifecycle (its
    # checkout is the parent's), and must still lose what a deleted workspace loses.
    agents.add("ROLE:note", fakellm.text("noted"))
    (task_id,) = await tree.host.spawn(TaskSpec("explore", "Note", "ROLE:note", isolation="none"))
    await until(lambda: not tree.host.view(task_id).active)
    record = registry.get_workspace(task_id)
    assert record is not None
    kept = dict(local_state(record))
    for kind in ("plan-file", "init-log"):
        kept[kind].parent.mkdir(parents=True, exist_ok=True)
        kept[kind].write_text("left behind?\n")
    assert kept["session-log"].is_dir() and kept["scratch-dir"].is_dir()
    assert await tree.host.remove([task_id]) == [task_id]
    assert [kind for kind, path in kept.items() if path.exists()] == []
    assert (repo / "README.md").exists()  # the shared checkout is the parent's: untouched


async def test_unknown_agent_and_fork_without_git_are_refused(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    tree = Tree(fake_llm, plain, TaskSettings())
    try:
        with pytest.raises(SubAgentError, match="no agent named"):
            await tree.host.spawn(TaskSpec("nonesuch", "X", "ROLE:x"))
        with pytest.raises(SubAgentError, match="needs a git repository"):
            await tree.host.spawn(TaskSpec("exec", "X", "ROLE:x"))
    finally:
        await tree.close()


async def test_background_bash_dies_with_the_session(
    fake_llm: FakeLLM, agents: Agents, tree: Tree, tmp_path: Path
) -> None:
    pid_file = tmp_path / "server-pid"
    agents.add(
        "ROLE:parent",
        fakellm.reply(
            call(
                "bash",
                script=f"echo $$ > {pid_file}; echo listening; exec sleep 300",
                display_name="server",
                run_in_background=True,
            )
        ),
        lambda req: fakellm.reply(
            call(
                "task_await",
                task_ids=re.findall(r"taskId (bash:\w+)", tool_results(req)),
                timeout_secs=10,
            )
        ),
        fakellm.text("server is up"),
    )
    result = await tree.session.run_turn("ROLE:parent: start the server")
    assert result.text == "server is up"
    (awaited,) = tree.results("task_await")
    assert "listening" in awaited["output"]
    pid = int(pid_file.read_text())
    assert not process_gone(pid)  # it outlives the turn ...
    await tree.session.aclose()
    assert process_gone(pid)  # ... but not the session


async def test_the_projects_tool_hooks_apply_to_children(
    fake_llm: FakeLLM, agents: Agents, tree: Tree, repo: Path
) -> None:
    hook = repo / ".xum" / "tool_pre"
    hook.parent.mkdir()
    hook.write_text(
        '#!/bin/bash\ncase "$XUM_TOOL_INPUT_SCRIPT" in *forbidden*) '
        'echo "no forbidden things" >&2; exit 1;; esac\n'
    )
    hook.chmod(0o755)
    git(repo, "add", ".")
    git(repo, "commit", "-qm", "hook")
    registry.set_project_trust(str(repo), True)
    agents.add(
        "ROLE:rule-breaker",
        fakellm.reply(bash("echo forbidden > out.txt")),
        lambda req: fakellm.text(tool_results(req)),
    )
    (task_id,) = await tree.host.spawn(TaskSpec("exec", "Breaker", "ROLE:rule-breaker"))
    await until(lambda: not tree.host.view(task_id).active)
    result = tree.host.view(task_id).result or ""
    assert "blocked by .xum/tool_pre" in result and "no forbidden things" in result
    record = registry.get_workspace(task_id)
    assert record is not None and not (Path(record.path) / "out.txt").exists()


async def test_a_later_process_adopts_and_wakes_earlier_children(
    fake_llm: FakeLLM, agents: Agents, repo: Path
) -> None:
    agents.add("ROLE:keeper", fakellm.text("first life"), fakellm.text("second life"))
    first = await make_tree(fake_llm, repo)
    try:
        (task_id,) = await first.host.spawn(TaskSpec("exec", "Keeper", "ROLE:keeper"))
        await until(lambda: not first.host.view(task_id).active)
    finally:
        await first.close()
    again = await make_tree(fake_llm, repo)  # a new manager, as after a restart
    try:
        assert again.host.children() == [task_id]
        view = again.host.view(task_id)
        assert view.status == "reported" and view.result == "first life"
        await again.host.send_message(task_id, "wake up", dispatch="tool-end")
        await until(lambda: again.host.view(task_id).turns == 2)
        await until(lambda: not again.host.view(task_id).active)
        assert again.host.view(task_id).result == "second life"
        assert again.manager.children_of("parentws01")[0].task_id == task_id
    finally:
        await again.close()


async def test_a_deferred_host_answers_like_the_real_one_and_makes_it_on_first_use(
    fake_llm: FakeLLM, agents: Agents, repo: Path
) -> None:
    agents.add("ROLE:late", fakellm.text("made late"))
    tree = await make_tree(fake_llm, repo, max_depth=2)
    made: list[ScopedHost] = []

    def make() -> ScopedHost:
        made.append(tree.host)
        return tree.host

    deferred = DeferredHost("parentws01", make, settings=TaskSettings(max_depth=2))
    try:
        for name in [*TASK_TOOL_NAMES, "agent_report", "bash", "file_read"]:
            assert deferred.offers(name) == tree.host.offers(name), name
        assert DeferredHost("x", make, settings=TaskSettings(max_depth=0)).offers("task") is False
        deferred.note_cost(0.25)
        assert deferred.external_cost_usd() == 0.0 and made == []  # nothing made yet
        (task_id,) = await deferred.spawn(TaskSpec("exec", "Late", "ROLE:late"))
        assert made == [tree.host] and tree.host.own_cost == 0.25  # the cost was handed on
        await until(lambda: not deferred.view(task_id).active)
        assert deferred.children() == [task_id] and deferred.view(task_id).result == "made late"
        assert made == [tree.host]  # made once
    finally:
        await tree.close()


# Agents, instructions and skills of the project reach children ----------------------------------

REVIEWER = """---
name: Reviewer
description: Reviews the change on the branch
subagent:
  runnable: true
tools:
  add: [bash, file_read, agent_skill_read]
---
You are the REVIEWER-BODY agent: read the diff and list the risks you see.
"""

PRIVATE = """---
name: Private
base: exec
subagent:
  runnable: false
---
Only for the workspace itself.
"""


def commit_all(repo: Path, message: str) -> None:
    git(repo, "add", "-A")
    git(repo, "commit", "-qm", message)


def system_text(req: RecordedRequest) -> str:
    return "".join(block["text"] for block in req.json["system"])


async def test_a_runnable_project_agent_runs_with_the_projects_instructions_and_skills(
    fake_llm: FakeLLM, agents: Agents, tree: Tree, repo: Path
) -> None:
    (repo / ".xum" / "agents").mkdir(parents=True)
    (repo / ".xum" / "agents" / "reviewer.md").write_text(REVIEWER)
    (repo / "AGENTS.md").write_text("Project rule: PROJECT-RULE-42 applies to every change.\n")
    skill = repo / ".xum" / "skills" / "triage" / "SKILL.md"
    skill.parent.mkdir(parents=True)
    skill.write_text("---\nname: triage\ndescription: Sort failures by cause\n---\nSteps.\n")
    commit_all(repo, "agents, rules and a skill")
    agents.add("ROLE:review", fakellm.text("two risks found"))

    (task_id,) = await tree.host.spawn(TaskSpec("reviewer", "Reviewer", "ROLE:review: look"))
    await until(lambda: not tree.host.view(task_id).active)

    assert tree.host.view(task_id).result == "two risks found"
    (request,) = agents.requests_of(fake_llm, "ROLE:review")
    system = system_text(request)
    assert '<agent id="reviewer" name="Reviewer">' in system and "REVIEWER-BODY" in system
    assert "PROJECT-RULE-42" in system  # the fork's AGENTS.md
    assert "- triage: Sort failures by cause" in system  # the skills index
    names = [t["name"] for t in request.json["tools"]]
    # Its own policy, then the sub-agent rules: agent_report on, nothing to ask the user.
    assert sorted(names) == ["agent_report", "agent_skill_read", "bash", "file_read"]
    assert registry.get_workspace(task_id).agent == "reviewer"  # type: ignore[union-attr]


async def test_agents_without_subagent_runnable_are_refused_with_the_runnable_list(
    fake_llm: FakeLLM, tree: Tree, repo: Path
) -> None:
    (repo / ".xum" / "agents").mkdir(parents=True)
    (repo / ".xum" / "agents" / "private.md").write_text(PRIVATE)
    (repo / ".xum" / "agents" / "reviewer.md").write_text(REVIEWER)
    commit_all(repo, "agents")
    for agent_id in ("private", "plan"):
        with pytest.raises(SubAgentError, match="cannot run as a sub-agent") as refused:
            await tree.host.spawn(TaskSpec(agent_id, "X", "ROLE:x"))
        assert "use one of: exec, explore, reviewer" in str(refused.value)
    with pytest.raises(SubAgentError, match=r"no agent named 'nonesuch'.*exec, explore, reviewer"):
        await tree.host.spawn(TaskSpec("nonesuch", "X", "ROLE:x"))
    assert [r for r in registry.list_workspaces() if r.parent_id == "parentws01"] == []


async def test_an_uncommitted_agent_file_is_not_part_of_the_fork(
    fake_llm: FakeLLM, tree: Tree, repo: Path
) -> None:
    (repo / ".xum" / "agents").mkdir(parents=True)
    (repo / ".xum" / "agents" / "reviewer.md").write_text(REVIEWER)  # not committed
    with pytest.raises(SubAgentError, match="not part of the fork"):
        await tree.host.spawn(TaskSpec("reviewer", "Reviewer", "ROLE:x"))
    assert [r for r in registry.list_workspaces() if r.parent_id == "parentws01"] == []


async def test_a_fork_child_gets_the_xumignore_copies(
    fake_llm: FakeLLM, agents: Agents, tree: Tree, repo: Path
) -> None:
    (repo / ".gitignore").write_text(".env\n")
    (repo / ".xumignore").write_text("!.env\n")
    commit_all(repo, "ignore rules")
    (repo / ".env").write_text("TOKEN=local\n")
    agents.add(
        "ROLE:env", fakellm.reply(bash("cat .env")), lambda req: fakellm.text(tool_results(req))
    )
    (task_id,) = await tree.host.spawn(TaskSpec("exec", "Env", "ROLE:env"))
    await until(lambda: not tree.host.view(task_id).active)
    record = registry.get_workspace(task_id)
    assert record is not None and (Path(record.path) / ".env").read_text() == "TOKEN=local\n"
    assert "TOKEN=local" in (tree.host.view(task_id).result or "")


async def test_a_fork_child_runs_the_init_hook_unless_its_agent_skips_it(
    fake_llm: FakeLLM, agents: Agents, tree: Tree, repo: Path
) -> None:
    hook = repo / ".xum" / "init"
    hook.parent.mkdir()
    hook.write_text('#!/bin/sh\necho "set up by init" > .init-ran\n')
    hook.chmod(0o755)
    (repo / ".gitignore").write_text(".init-ran\n")
    commit_all(repo, "init hook")
    registry.set_project_trust(str(repo), True)
    agents.add(
        "ROLE:setup",
        fakellm.reply(bash("cat .init-ran")),
        lambda req: fakellm.text(tool_results(req)),
    )
    agents.add(
        "ROLE:look",
        fakellm.reply(bash("ls -a")),
        lambda req: fakellm.text(tool_results(req)),
    )
    (exec_id,) = await tree.host.spawn(TaskSpec("exec", "Setup", "ROLE:setup"))
    (explore_id,) = await tree.host.spawn(TaskSpec("explore", "Look", "ROLE:look"))
    await until(
        lambda: not tree.host.view(exec_id).active and not tree.host.view(explore_id).active
    )
    # The first tool call waited for the hook, so its file was there.
    assert "set up by init" in (tree.host.view(exec_id).result or "")
    record = registry.get_workspace(exec_id)
    assert record is not None and record.init_status == "succeeded"
    # Explore sets subagent.skip_init_hook: no hook, no file.
    assert ".init-ran" not in (tree.host.view(explore_id).result or "")
    skipped = registry.get_workspace(explore_id)
    assert skipped is not None and skipped.init_status is None
    assert not (repo / ".init-ran").exists()  # it ran in the fork, not in the parent


async def test_the_task_model_and_thinking_reach_the_childs_requests(
    fake_llm: FakeLLM, agents: Agents, tree: Tree, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    agents.add("ROLE:plain", fakellm.text("plain"))
    agents.add("ROLE:haiku", fakellm.text("haiku"))
    (plain,) = await tree.host.spawn(TaskSpec("exec", "Plain", "ROLE:plain"))
    (haiku,) = await tree.host.spawn(
        TaskSpec("exec", "Haiku", "ROLE:haiku", model="anthropic:claude-haiku-5-5", thinking="off")
    )
    await until(lambda: not tree.host.view(plain).active and not tree.host.view(haiku).active)
    (inherited,) = agents.requests_of(fake_llm, "ROLE:plain")
    (overridden,) = agents.requests_of(fake_llm, "ROLE:haiku")
    assert inherited.json["model"] == "claude-sonnet-5-5"  # the parent's model and thinking
    assert inherited.json.get("thinking", {}).get("type") not in (None, "disabled")
    assert overridden.json["model"] == "claude-haiku-5-5"
    assert overridden.json.get("thinking") in (None, {"type": "disabled"})
    record = registry.get_workspace(haiku)
    assert record is not None
    assert (record.model, record.thinking) == ("anthropic:claude-haiku-5-5", "off")


FAST_REVIEWER = """---
name: Fast reviewer
base: reviewer
ai:
  model: anthropic:claude-haiku-5-5
  thinkingLevel: "off"
---
"""


async def test_an_agents_ai_defaults_apply_unless_the_task_call_names_its_own(
    fake_llm: FakeLLM, agents: Agents, tree: Tree, repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("ANTHROPIC_API_KEY", "k")
    monkeypatch.setenv("ANTHROPIC_BASE_URL", fake_llm.url)
    (repo / ".xum" / "agents").mkdir(parents=True)
    (repo / ".xum" / "agents" / "reviewer.md").write_text(REVIEWER)
    (repo / ".xum" / "agents" / "fast.md").write_text(FAST_REVIEWER)
    commit_all(repo, "agents")
    agents.add("ROLE:fast", fakellm.text("quick look"))
    agents.add("ROLE:deep", fakellm.text("long look"))
    (fast,) = await tree.host.spawn(TaskSpec("fast", "Fast", "ROLE:fast"))
    (deep,) = await tree.host.spawn(
        TaskSpec("fast", "Deep", "ROLE:deep", model="anthropic:claude-sonnet-5-5", thinking="high")
    )
    await until(lambda: not tree.host.view(fast).active and not tree.host.view(deep).active)
    (by_agent,) = agents.requests_of(fake_llm, "ROLE:fast")
    (by_call,) = agents.requests_of(fake_llm, "ROLE:deep")
    assert by_agent.json["model"] == "claude-haiku-5-5"  # the agent's ai block
    assert by_agent.json.get("thinking") in (None, {"type": "disabled"})
    assert by_call.json["model"] == "claude-sonnet-5-5"  # the task call wins
    assert by_call.json["thinking"]["type"] != "disabled"

    (repo / ".xum" / "agents" / "fast.md").write_text(
        FAST_REVIEWER.replace("anthropic:", "nosuch:")
    )
    commit_all(repo, "a bad model")
    with pytest.raises(SubAgentError, match=r"ai\.model of the 'fast' agent"):
        await tree.host.spawn(TaskSpec("fast", "Broken", "ROLE:fast"))


async def test_task_retitle_renames_a_child_and_refuses_strangers(
    fake_llm: FakeLLM, agents: Agents, tree: Tree
) -> None:
    agents.add(
        "ROLE:parent",
        fakellm.reply(
            call("task", title="Helper", prompt="ROLE:helper: go", run_in_background=True)
        ),
        lambda req: fakellm.reply(
            call("task_retitle", task_id=started_ids(req)[0], title="  Test   fixer ")
        ),
        fakellm.reply(call("task_retitle", task_id="0123456789", title="Other")),
        fakellm.reply(call("task_retitle", task_id="whatever", title="   ")),
        fakellm.reply(call("task_list", statuses=["queued", "running", "reported"])),
        fakellm.text("renamed"),
    )
    agents.add("ROLE:helper", fakellm.text("helped"))
    result = await tree.session.run_turn("ROLE:parent: start a helper")
    assert result.text == "renamed"
    renamed, stranger, empty = tree.results("task_retitle")
    assert not renamed["is_error"] and "'Test fixer'" in renamed["output"]
    assert stranger["is_error"] and "not one of this workspace's sub-agents" in stranger["output"]
    assert empty["is_error"] and "empty" in empty["output"]
    task_id = renamed["meta"]["task_id"]
    assert tree.host.view(task_id).title == "Test fixer"
    assert registry.get_workspace(task_id).title == "Test fixer"  # type: ignore[union-attr]
    assert "Test fixer" in tree.results("task_list")[0]["output"]


async def test_three_way_applies_a_patch_whose_context_moved(
    fake_llm: FakeLLM, agents: Agents, tree: Tree, repo: Path
) -> None:
    lines = [f"line {i}\n" for i in range(1, 11)]
    (repo / "notes.txt").write_text("".join(lines))
    commit_all(repo, "notes")
    agents.add(
        "ROLE:editor",
        fakellm.reply(
            bash("sed -i 's/^line 6$/line six/' notes.txt && git commit -qam 'child: six'")
        ),
        fakellm.text("edited"),
    )
    (task_id,) = await tree.host.spawn(TaskSpec("exec", "Editor", "ROLE:editor"))
    await until(lambda: not tree.host.view(task_id).active)
    # Meanwhile the parent changed line 4, inside the child's patch context but not its hunk.
    lines[3] = "line four\n"
    (repo / "notes.txt").write_text("".join(lines))
    commit_all(repo, "parent: four")
    head = git(repo, "rev-parse", "HEAD")

    plain = await tree.host.apply_patch(
        task_id, dry_run=False, expected_head_sha=None, three_way=False, force=False
    )
    assert not plain.ok and git(repo, "rev-parse", "HEAD") == head  # aborted, nothing applied
    assert git(repo, "status", "--porcelain") == ""
    merged = await tree.host.apply_patch(
        task_id, dry_run=False, expected_head_sha=None, three_way=True, force=False
    )
    assert merged.ok, merged.text
    text = (repo / "notes.txt").read_text()
    assert "line four\n" in text and "line six\n" in text
    assert git(repo, "log", "-1", "--format=%s") == "child: six"


def worktree_paths(repo: Path) -> list[str]:
    listed = git(repo, "worktree", "list", "--porcelain").splitlines()
    return [line.removeprefix("worktree ") for line in listed if line.startswith("worktree ")]


async def finished_fork(agents: Agents, tree: Tree) -> tuple[str, WorkspaceRecord]:
    """A fork child (it says "done") spawned and run to its end: (its id, its record)."""
    agents.add("ROLE:fork", fakellm.text("done"))
    (task_id,) = await tree.host.spawn(TaskSpec("exec", "Fork", "ROLE:fork"))
    await until(lambda: not tree.host.view(task_id).active)
    record = registry.get_workspace(task_id)
    assert record is not None
    return task_id, record


def assert_fork_gone(repo: Path, task_id: str, record: WorkspaceRecord) -> None:
    """The fork child's directory, git's worktree entry, its branch and its record are gone."""
    assert not Path(record.path).exists() and record.path not in worktree_paths(repo)
    assert record.branch not in git(repo, "branch", "--list")
    assert registry.get_workspace(task_id) is None


async def test_a_fork_childs_worktree_is_made_and_removed_by_the_worktree_checkout(
    fake_llm: FakeLLM, agents: Agents, tree: Tree, repo: Path
) -> None:
    from xum.runtime.worktree import worktree_path
    from xum.workspaces.checkouts.factory import checkout_for
    from xum.workspaces.checkouts.worktree import WorktreeCheckout
    from xum.workspaces.subagents.records import ChildRecord

    task_id, record = await finished_fork(agents, tree)
    # Made as a user's worktree workspace is: where, on which branch, from the parent's HEAD.
    checkout = checkout_for(record)
    assert isinstance(checkout, WorktreeCheckout)
    assert Path(record.path) == worktree_path(repo, record.name) and record.branch == record.name
    assert record.path in worktree_paths(repo)
    head = git(repo, "rev-parse", "HEAD")
    assert ChildRecord.from_workspace(record).fork_base == head
    assert git(repo, "rev-parse", record.branch) == head
    # And removed by it: the directory, git's worktree entry, the branch, the record.
    assert await tree.host.remove([task_id]) == [task_id]
    assert_fork_gone(repo, task_id, record)


async def test_a_fork_child_whose_delete_is_refused_is_still_discarded_whole(
    fake_llm: FakeLLM, agents: Agents, tree: Tree, repo: Path
) -> None:
    from tests.support.workspaces import turn_in_other_process

    task_id, record = await finished_fork(agents, tree)
    assert record.branch
    (Path(record.path) / "left.txt").write_text("uncommitted\n")
    # The lifecycle refuses (another process holds the child's writer lock): what the parent
    # removes is discarded anyway, by the same checkout code, branch included.
    with turn_in_other_process(task_id):
        assert await tree.host.remove([task_id]) == [task_id]
    assert_fork_gone(repo, task_id, record)
