"""Context assembly: the work before each request, and what the frozen sections buy.

1. Per-turn request assembly at 1k, 10k and 100k history rows. A new user message is appended,
   then (medians over 200 turns each):
   - `per_turn_ms`: `AgentSession.next_request()`, everything a step does before it sends: the
     workspace check for changed agents, instructions, skills and plan file (a re-stat of the
     paths the last discovery saw), the frozen system prompt and tools, the change-row
     planning and the incremental history projection;
   - `assembly_only_ms`: the same without the file checks (frozen sections + change-row
     planning + projection), the part the reference engine's figures cover;
   - `with_change_row_ms`: a step right after AGENTS.md changed (rediscovery, the row built and
     durably appended: this one includes an fsync);
   - `cold_restart_ms`: a new engine over the log (the log is read and projected once).
   `ratio_to_1k` (same run) near 1 means the cost does not grow with the history; the reference
   engine's published figures are listed for comparison.
2. A scripted 40-turn session against the fake LLM server in which skills come and go,
   AGENTS.md and a `Tool:` section are edited, and the agent switches between two agents with
   the same tools: the share of input tokens served from the prompt cache, and prefix breaks.
"""

from __future__ import annotations

import asyncio
import itertools
import os
import shutil
import statistics
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.util import git_repo, scratch_home
from xum.context.plan import plan_file_path
from xum.context.workspace import AgentSelection, WorkspaceContext, WorkspaceFacts
from xum.engine.agent import AgentSession, SessionSettings, WorkspaceInfo
from xum.engine.route import resolve_route
from xum.llm.client import open_client
from xum.llm.retry import RetryPolicy
from xum.runtime.local import LocalRuntime
from xum.store import frame_types as ev
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm

SIZES = (1_000, 10_000, 100_000)
REPEAT = 200
REFERENCE_MS = {"1000": "0.11-0.14", "10000": "~0.56", "100000": "7.4-8.3"}


def _repo(root: Path) -> Path:
    repo = git_repo(root)
    (repo / "AGENTS.md").write_text("Run the tests before finishing.\n")
    (repo / ".xum").mkdir()
    (repo / ".xum/AGENTS.md").write_text("## Tool: bash\nPrefer rg over grep.\n")
    (repo / ".xum/agents").mkdir()
    (repo / ".xum/agents/reviewer.md").write_text(
        "---\nname: Reviewer\nbase: exec\n---\nReview the change; report findings.\n"
    )
    for name in ("alpha", "beta"):
        _skill(repo, name, f"the {name} skill")
    return repo


def _skill(repo: Path, name: str, description: str) -> None:
    path = repo / ".xum/skills" / name / "SKILL.md"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\nname: {name}\ndescription: {description}\n---\nSteps.\n")


def _bump(path: Path) -> None:
    st = path.stat()
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns + 1_000_000_000))


def _session(repo: Path, ws_id: str, route: Any, client: Any) -> AgentSession:
    runtime = LocalRuntime(str(repo), tempfile.gettempdir())
    context = WorkspaceContext(
        WorkspaceFacts(
            runtime=runtime,
            workspace_path=str(repo),
            checkout_root=str(repo),
            project_path=str(repo),
            workspace_name="bench-ws",
            is_git=True,
            xum_root=os.environ["XUM_ROOT"],
            home=os.environ["HOME"],
            plan_file=plan_file_path(str(repo), "bench-ws"),
        )
    )
    return AgentSession(
        workspace=WorkspaceInfo(ws_id, "bench-ws", str(repo), str(repo), "local"),
        log=SessionLog.open(ws_id),
        runtime=runtime,
        route=route,
        client=client,
        settings=SessionSettings(thinking="off"),
        scratch_dir=repo.parent / "scratch",
        context=context,
        agent=AgentSelection("exec"),
    )


def _user(i: int) -> tuple[str, dict[str, Any]]:
    text = f"please look at the failing test in module {i}"
    return ev.USER_MESSAGE, {
        "message": {"role": "user", "content": [{"type": "text", "text": text}]}
    }


def _rows(start: int, count: int) -> list[tuple[str, dict[str, Any]]]:
    """`count` history rows: user, assistant with a tool call, tool result, repeating."""
    out: list[tuple[str, dict[str, Any]]] = []
    for i in range(start, start + count):
        kind = i % 3
        if kind == 0:
            out.append(_user(i))
        elif kind == 1:
            call = {
                "type": "tool_call",
                "id": f"call_{i}",
                "name": "bash",
                "arguments": '{"script":"ls"}',
            }
            message = {
                "role": "assistant",
                "content": [{"type": "text", "text": "Checking."}, call],
            }
            out.append(
                (
                    ev.ASSISTANT_MESSAGE,
                    {"message": message, "usage": {}, "finish_reason": "tool_calls", "model": "m"},
                )
            )
        else:
            out.append(
                (
                    ev.TOOL_RESULT,
                    {
                        "message": ev.tool_result_message(
                            f"call_{i - 1}", "bash", "README\n", is_error=False
                        )
                    },
                )
            )
    return out


def _age(root: Path, seconds: int = 60) -> None:
    """Backdate everything under `root`: a workspace nobody edited in the last moments (fresh
    timestamps are re-checked on every request by design; see xum.context.files)."""
    past = time.time_ns() - seconds * 1_000_000_000
    for directory, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.utime(Path(directory) / name, ns=(past, past), follow_symlinks=False)


async def _assembly(root: Path, route: Any, client: Any, size: int) -> dict[str, Any]:
    repo = _repo(root / f"n{size}")
    ws_id = f"bench-ctx-{size}"
    session = _session(repo, ws_id, route, client)
    await session.next_request()  # the segment starts: its context_frozen frame is written
    log = session.log
    with log.writing("bench"):
        for start in range(0, size, 2_000):
            log.append_many(_rows(start, min(2_000, size - start)))
    _age(root)
    await session.next_request()  # consume the history once, as a running session has
    tracker = session.context.tracker

    full, planning, changed = [], [], []
    with log.writing("bench"):  # as during a turn: the writer lock is held
        for i in range(REPEAT):
            log.append_many([_user(size + i)])
            began = time.perf_counter()
            await session.next_request()
            full.append(time.perf_counter() - began)
        live = session.context.live
        assert live is not None
        for i in range(REPEAT):
            log.append_many([_user(size + REPEAT + i)])
            began = time.perf_counter()
            tracker.update(log)  # the frozen sections and the rows since
            tracker.compare(live)  # what changed (nothing)
            session._build_request()  # projection + frozen system and tools
            planning.append(time.perf_counter() - began)
        for i in range(20):
            (repo / "AGENTS.md").write_text(f"Run the tests before finishing. (revision {i})\n")
            _bump(repo / "AGENTS.md")
            log.append_many([_user(size + 2 * REPEAT + i)])
            began = time.perf_counter()
            await session.next_request()
            changed.append(time.perf_counter() - began)
    cold = []
    for _ in range(3):
        began = time.perf_counter()
        fresh = _session(repo, ws_id, route, client)
        request = await fresh.next_request()
        cold.append(time.perf_counter() - began)
    assert len(request.messages) > size // 2
    return {
        "per_turn_ms": round(statistics.median(full) * 1000, 4),
        "per_turn_p90_ms": round(sorted(full)[int(len(full) * 0.9)] * 1000, 4),
        "assembly_only_ms": round(statistics.median(planning) * 1000, 4),
        "with_change_row_ms": round(statistics.median(changed) * 1000, 3),
        "cold_restart_ms": round(statistics.median(cold) * 1000, 2),
    }


def _mutations(repo: Path, session_ref: list[AgentSession]) -> dict[int, Any]:
    agents_md = repo / "AGENTS.md"
    xum_md = repo / ".xum/AGENTS.md"

    def edit(path: Path, text: str) -> None:
        path.write_text(text)
        _bump(path)

    return {
        3: lambda: _skill(repo, "gamma", "the gamma skill"),
        6: lambda: edit(agents_md, "Run the tests and the linter before finishing.\n"),
        9: lambda: edit(xum_md, "## Tool: bash\nPrefer rg; never use find -exec.\n"),
        12: lambda: shutil.rmtree(repo / ".xum/skills/alpha"),
        15: lambda: session_ref[0].set_agent("reviewer"),
        18: lambda: session_ref[0].set_agent("exec"),
        24: lambda: edit(xum_md, "## Tool: bash\nNever run git push.\n"),
        30: lambda: _skill(repo, "delta", "the delta skill"),
        36: lambda: edit(agents_md, "Run `make check` before finishing.\n"),
    }


async def _forty_turns(root: Path) -> dict[str, Any]:
    repo = _repo(root / "forty")
    async with fakellm.FakeLLM() as server:
        env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.url}
        route = resolve_route("anthropic:claude-sonnet-5-5", env=env, config={})
        client = open_client(route.endpoint, retry=RetryPolicy(max_retries=0))
        try:
            session = _session(repo, "bench-forty", route, client)
            ref = [session]
            mutations = _mutations(repo, ref)
            for turn in range(1, 41):
                if turn in mutations:
                    mutations[turn]()
                if turn % 2:
                    server.script(
                        fakellm.tool_call("bash", {"script": "true", "display_name": "check"}),
                        fakellm.text(f"answer {turn}"),
                    )
                else:
                    server.script(fakellm.text(f"answer {turn}"))
                await session.run_turn(f"question {turn}")
        finally:
            await client.aclose()
        requests = [r for r in server.requests if r.cache is not None]
    breaks = sum(
        1
        for a, b in itertools.pairwise(requests)
        if b.cache.matched_prefix_tokens < a.cache.prompt_tokens  # type: ignore[union-attr]
    )
    read = sum(r.cache.read_tokens for r in requests)  # type: ignore[union-attr]
    prompt = sum(r.cache.prompt_tokens for r in requests)  # type: ignore[union-attr]
    frames = SessionLog.open("bench-forty").frames
    return {
        "turns": 40,
        "requests": len(requests),
        "changes": len(mutations),
        "change_rows": sum(1 for f in frames if f.type == ev.SYNTHETIC_MESSAGE),
        "prefix_breaks": breaks,
        "segments": sum(1 for f in frames if f.type == ev.CONTEXT_FROZEN),
        "input_tokens": prompt,
        "cache_read_tokens": read,
        "cache_hit_share": round(read / prompt, 4) if prompt else 0.0,
    }


async def _main() -> dict[str, Any]:
    with scratch_home("xum-bench-context-") as root:
        async with fakellm.FakeLLM() as server:
            route = resolve_route(
                "anthropic:claude-sonnet-5-5",
                env={"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.url},
                config={},
            )
            client = open_client(route.endpoint)
            try:
                sizes = {str(n): await _assembly(root, route, client, n) for n in SIZES}
            finally:
                await client.aclose()
        base = sizes[str(SIZES[0])]["per_turn_ms"]
        for figures in sizes.values():
            figures["ratio_to_1k"] = round(figures["per_turn_ms"] / base, 2) if base else None
        return {
            "assembly_by_history_rows": sizes,
            "reference_engine_ms": REFERENCE_MS,
            "forty_turn_session": await _forty_turns(root),
        }


def run() -> dict[str, Any]:
    return asyncio.run(_main())


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
