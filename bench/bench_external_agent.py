"""Real third-party ACP agents driven directly by a minimal client: the baseline that xum's own
ACP client (an external-agent workspace) is compared with.

The client is the ACP SDK's connection with `xum.testing.external_agents.AgentClient` in this
process; the agents are the pinned opencode and Claude Code (claude-code-acp) of
tools/external-agents (`make external-agents`), each pointed at the fake LLM, which answers a
turn at once with a short text. Per agent, medians over PROMPTS prompts of one session (after
WARM_UP):

- prompt to model request: the prompt leaving the client to the agent's model request arriving
  at the fake (the agent's own work before the model);
- prompt to first update: to the first `session/update` of the turn at the client (what a user
  waits for before anything shows);
- prompt to first text: to the first agent message chunk with text in it;
- memory: the resident memory of the agent's process tree after the prompts (MiB).

The through-xum side (the same agents inside a workspace) is measured against these figures.
Without the agents installed the result says so instead of failing.
"""

from __future__ import annotations

import asyncio
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from bench.util import git_repo, median_ms

if TYPE_CHECKING:
    from xum.testing.external_agents import AgentDefinition

WARM_UP, PROMPTS = 2, 10
STEP_S = 60.0


async def _measure_agent(
    name: str,
    definition_for: Callable[[str, Path], AgentDefinition],
    root: Path,
) -> dict[str, object]:
    from acp import text_block

    from xum.testing import external_agents as agents
    from xum.testing import fakellm

    repo = git_repo(root / name)
    model = agents.AgentModel()
    to_request: list[float] = []
    to_update: list[float] = []
    to_text: list[float] = []
    with fakellm.FakeLLM(responder=model, default=fakellm.text("ok", chunk_size=0)) as llm:
        definition = definition_for(llm.base_url(), root / f"{name}-agent")
        client = agents.AgentClient()
        stderr = root / f"{name}.stderr"
        async with agents.spawn(definition, client, repo, stderr=stderr) as (conn, proc, _):
            session = await asyncio.wait_for(
                conn.new_session(cwd=str(repo), mcp_servers=[]), STEP_S
            )
            for i in range(WARM_UP + PROMPTS):
                seen, asked = len(client.received), len(model.turn_requests)
                sent = time.monotonic()
                done = await asyncio.wait_for(
                    conn.prompt(session_id=session.session_id, prompt=[text_block(f"prompt {i}")]),
                    STEP_S,
                )
                if done.stop_reason != "end_turn":
                    raise RuntimeError(f"{name}: turn {i} ended with {done.stop_reason}")
                if i < WARM_UP:
                    continue
                turn = client.received[seen:]
                text = next(
                    r for r in turn if r.kind == "agent_message_chunk" and _text_of(r.update)
                )
                to_request.append(model.turn_requests[asked].arrived - sent)
                to_update.append(turn[0].at - sent)
                to_text.append(text.at - sent)
            rss = agents.process_tree_rss(proc.pid)
    return {
        "prompt_to_model_request_ms": median_ms(to_request),
        "prompt_to_first_update_ms": median_ms(to_update),
        "prompt_to_first_text_ms": median_ms(to_text),
        "agent_rss_mib": round(rss / (1024 * 1024), 1),
    }


def _text_of(update: object) -> str:
    text = getattr(getattr(update, "content", None), "text", None)
    return text if isinstance(text, str) else ""


async def _measure(root: Path) -> dict[str, object]:
    from xum.testing import external_agents as agents

    result: dict[str, object] = {"prompts": PROMPTS}
    for name, definition_for in (
        ("opencode", agents.opencode_definition),
        ("claude_code", agents.claude_code_definition),
    ):
        result[name] = await _measure_agent(name, definition_for, root)
    return result


def run() -> dict[str, object]:
    from xum.testing import external_agents as agents

    reason = agents.missing_reason()
    if reason is not None:
        return {"skipped": reason}
    with tempfile.TemporaryDirectory(prefix="xum-bench-external-") as tmp:
        return asyncio.run(_measure(Path(tmp)))
