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

Then the same agents through xum (`through_xum`): each as an external-agent workspace driven by
the workspace host in this process (as the server and the terminal UI drive it), one agent
process and ACP session for all the prompts:

- send to first event: `Hosts.send` to the first engine event of the turn reaching the host's
  listener (what a front-end gets first);
- send to first text: to the first text delta;
- added: the median through xum less the median direct, same run (the aim is under 20 ms).

Without the agents installed the result says so instead of failing.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from bench.util import git_repo, median_ms, scratch_home
from xum.engine import events as E
from xum.host.listener import NullListener

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


class _FirstEvents(NullListener):
    """Times, per turn, the first event and the first text delta the host hands a front-end."""

    def __init__(self) -> None:
        self.sent = 0.0
        self.first_event: float | None = None
        self.first_text: float | None = None

    def start(self) -> None:
        self.sent, self.first_event, self.first_text = time.monotonic(), None, None

    def event(self, workspace_id: str, event: E.Event) -> None:
        now = time.monotonic()
        if self.first_event is None:
            self.first_event = now
        if self.first_text is None and isinstance(event, E.TextDelta) and event.text:
            self.first_text = now


async def _measure_through_xum(
    name: str,
    definition_for: Callable[[str, Path], AgentDefinition],
    root: Path,
) -> dict[str, float]:
    from xum.host.hosts import Hosts
    from xum.host.workspace_host import HostOptions
    from xum.store.config import update_config
    from xum.testing import external_agents as agents
    from xum.testing import fakellm
    from xum.workspaces.safety.choice import SafetyChoice

    repo = git_repo(root / f"{name}-xum")
    model = agents.AgentModel()
    to_event: list[float] = []
    to_text: list[float] = []
    with fakellm.FakeLLM(responder=model, default=fakellm.text("ok", chunk_size=0)) as llm:
        definition = definition_for(llm.base_url(), root / f"{name}-xum-agent")
        # The helpers' definitions are config.json entries as they are.
        update_config(lambda config: config.__setitem__("externalAgents", {name: definition}))
        listener = _FirstEvents()
        hosts = Hosts(listener, options=HostOptions(safety=SafetyChoice(permissions="auto")))
        try:
            record = await hosts.create(repo, "local", name_hint=name, external_agent=name)
            for i in range(WARM_UP + PROMPTS):
                listener.start()
                await hosts.send(record, f"prompt {i}")
                host = hosts.get(record.id)
                assert host is not None
                await asyncio.wait_for(host.wait_done(), STEP_S)
                if i < WARM_UP:
                    continue
                if listener.first_event is None or listener.first_text is None:
                    raise RuntimeError(f"{name} through xum: turn {i} showed no text")
                to_event.append(listener.first_event - listener.sent)
                to_text.append(listener.first_text - listener.sent)
        finally:
            await hosts.shutdown()
    return {
        "send_to_first_event_ms": median_ms(to_event),
        "send_to_first_text_ms": median_ms(to_text),
    }


async def _measure(root: Path) -> dict[str, object]:
    from xum.testing import external_agents as agents

    result: dict[str, object] = {"prompts": PROMPTS}
    for name, definition_for in (
        ("opencode", agents.opencode_definition),
        ("claude_code", agents.claude_code_definition),
    ):
        direct = await _measure_agent(name, definition_for, root)
        xum_side = await _measure_through_xum(name.replace("_", "-"), definition_for, root)
        direct_text = direct["prompt_to_first_text_ms"]
        assert isinstance(direct_text, float)
        result[name] = {
            **direct,
            "through_xum": xum_side,
            "added_first_text_ms": round(xum_side["send_to_first_text_ms"] - direct_text, 2),
        }
    return result


def run() -> dict[str, object]:
    from xum.testing import external_agents as agents

    reason = agents.missing_reason()
    if reason is not None:
        return {"skipped": reason}
    with scratch_home("xum-bench-external-") as tmp:
        return asyncio.run(_measure(tmp))
