"""`xum acp`: from an editor's `session/prompt` to its first `session/update`.

The editor is the ACP SDK's client side (`xum.testing.acpeditor`) in this process, the bridge a
real `xum acp` subprocess, the model the fake LLM answering at once with a short text reply.
Medians over PROMPTS prompts of one session (after WARM_UP), of:

- prompt to model request: the prompt leaving the editor to the model request arriving at the
  fake server (the bridge, the turn's durable frames, building the request);
- model request to first update: the request arriving to the first `agent_message_chunk` at
  the editor (the fake's reply, the stream parsed, the event translated, the pipe);
- prompt to first update: the two together, what an editor user waits for before the model.

Baseline, measured in the same run: the same turns on an in-process session opened through the
assembly, from `run_turn` to the first text-delta event. What ACP adds is the difference (aim:
under 20 ms).
"""

from __future__ import annotations

import asyncio
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.util import git_repo, median_ms

XUM = str(Path(sys.executable).with_name("xum"))
WARM_UP, PROMPTS = 3, 20


async def _acp(repo: Path, fake: Any) -> dict[str, list[float]]:
    from acp import text_block

    from xum.testing.acpeditor import TestEditor, connect

    editor = TestEditor()
    to_request, to_update = [], []
    async with connect(editor, [XUM, "acp"], env={}, cwd=repo) as (conn, _proc, _init):
        new = await conn.new_session(cwd=str(repo), mcp_servers=[])
        for i in range(WARM_UP + PROMPTS):
            seen, asked = len(editor.received), len(fake.requests)
            sent = time.monotonic()
            await conn.prompt(session_id=new.session_id, prompt=[text_block(f"prompt {i}")])
            first = next(r for r in editor.received[seen:] if r.kind == "agent_message_chunk")
            if i >= WARM_UP:
                to_request.append(fake.requests[asked].arrived - sent)
                to_update.append(first.at - sent)
    return {"to_request": to_request, "to_update": to_update}


async def _in_process(repo: Path, fake: Any) -> dict[str, list[float]]:
    from xum.engine import events as E
    from xum.workspaces.assembly import open_workspace_session, route_for
    from xum.workspaces.lifecycle import create_workspace

    created = await create_workspace(repo, "local", name_hint="bench")
    first: list[float] = []

    def emit(event: E.Event) -> None:
        if isinstance(event, E.TextDelta) and not first:
            first.append(time.monotonic())

    route, thinking = route_for(created.record)
    opened = await open_workspace_session(
        created.record, route=route, thinking=thinking, emit=emit, created=created
    )
    to_request, to_update = [], []
    try:
        for i in range(WARM_UP + PROMPTS):
            first.clear()
            asked = len(fake.requests)
            started = time.monotonic()
            await opened.agent.run_turn(f"prompt {i}")
            if i >= WARM_UP:
                to_request.append(fake.requests[asked].arrived - started)
                to_update.append(first[0] - started)
    finally:
        await opened.aclose()
    return {"to_request": to_request, "to_update": to_update}


async def _measure(root: Path) -> dict[str, object]:
    from xum.testing import fakellm

    repo = git_repo(root)
    async with fakellm.FakeLLM() as fake:
        fake.set_default(fakellm.text("ok", chunk_size=0))
        os.environ.update(
            XUM_ROOT=str(root / ".xum"),
            HOME=str(root),
            ANTHROPIC_API_KEY="bench",
            ANTHROPIC_BASE_URL=fake.url,
        )
        acp = await _acp(repo, fake)
        local = await _in_process(repo, fake)
    acp_total = median_ms(acp["to_update"])
    local_total = median_ms(local["to_update"])
    return {
        "prompts": PROMPTS,
        "acp_prompt_to_model_request_ms": median_ms(acp["to_request"]),
        "acp_model_request_to_first_update_ms": median_ms(
            [u - r for u, r in zip(acp["to_update"], acp["to_request"], strict=True)]
        ),
        "acp_prompt_to_first_update_ms": acp_total,
        "in_process_turn_to_model_request_ms": median_ms(local["to_request"]),
        "in_process_turn_to_first_delta_ms": local_total,
        "acp_added_ms": round(acp_total - local_total, 3),
    }


def run() -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="xum-bench-acp-") as tmp:
        return asyncio.run(_measure(Path(tmp)))
