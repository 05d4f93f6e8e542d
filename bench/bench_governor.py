"""Many workspaces on one rate-limited provider account, with and without the governor.

20 workspaces in one process (`Hosts`, as `xum server` hosts them), each given one message
whose turn is 10 tool steps (`bash true`) and a final reply, 11 model requests in all. The fake
provider answers at most 3 requests at once; one more gets HTTP 429 with `Retry-After: 1`, as
an account's concurrency limit does. Each reply waits `THINK_S` before its first byte, like a
model thinking.

Rounds:

- `governor`: `governor.providers.anthropic.maxConcurrent` = 3 in config.json (the account's
  known limit);
- `governor_default`: no governor section (the default cap of 8 requests per provider); the
  governor learns the limit from the 429s it gets;
- `no_governor`: every session on its own (the behaviour before the governor): a gate that
  never waits nor pauses.

Each round reports turns that failed (aim 0), the 429s the provider sent (aim: at most a fifth
of `no_governor`'s), the wall time and its ratio to the ideal (all requests, 3 at a time, each
taking `THINK_S`; aim within 1.3).
"""

from __future__ import annotations

import asyncio
import math
import time
from pathlib import Path
from typing import Any

from bench.util import git_repo, scratch_home

WORKSPACES = 20
TOOL_STEPS = 10
PROVIDER_CAP = 3
RETRY_AFTER_S = 1.0
THINK_S = 0.25
MODEL = "anthropic:claude-sonnet-5-5"


def run() -> dict[str, Any]:
    out: dict[str, Any] = {
        "workspaces": WORKSPACES,
        "tool_steps": TOOL_STEPS,
        "provider_cap": PROVIDER_CAP,
        "think_s": THINK_S,
    }
    requests = WORKSPACES * (TOOL_STEPS + 1)
    ideal = math.ceil(requests / PROVIDER_CAP) * THINK_S
    out["ideal_s"] = round(ideal, 2)
    for name, cap in (("governor", PROVIDER_CAP), ("governor_default", None), ("no_governor", 0)):
        with scratch_home(f"xum-bench-governor-{name}-") as root:
            figures = asyncio.run(_round(root, cap))
        figures["vs_ideal"] = round(figures["wall_s"] / ideal, 2)
        out[name] = figures
    base = out["no_governor"]["rate_limited"]
    for name in ("governor", "governor_default"):
        got = out[name]["rate_limited"]
        out[name]["rate_limited_share_of_no_governor"] = round(got / base, 3) if base else None
    return out


async def _round(root: Path, cap: int | None) -> dict[str, Any]:
    import os

    from xum.engine import events as E
    from xum.host.governor import Governor, Permit
    from xum.host.hosts import Hosts
    from xum.store.config import update_config
    from xum.testing import fakellm
    from xum.testing.fakellm import FakeLLM, RecordedRequest

    repo = git_repo(root)

    def answer(request: RecordedRequest) -> fakellm.Reply:
        steps = sum(1 for m in request.json["messages"] if m["role"] == "assistant")
        if steps < TOOL_STEPS:
            call = fakellm.ToolCall("bash", {"script": f"true # {steps}", "display_name": "s"})
            return fakellm.reply(call, first_byte_delay=THINK_S)
        return fakellm.reply("done", first_byte_delay=THINK_S)

    class Listener:
        def __init__(self) -> None:
            self.ended: dict[str, str] = {}
            self.failed: list[str] = []

        async def opening(self, workspace_id: str) -> None:
            return None

        def event(self, workspace_id: str, event: E.Event) -> None:
            if isinstance(event, E.TurnEnd):
                self.ended[workspace_id] = event.reason or ""

        def status_changed(self, workspace_id: str) -> None:
            return None

        def turn_failed(self, workspace_id: str, error: Exception) -> None:
            self.failed.append(workspace_id)

        def question_opened(self, pending: Any) -> None:
            return None

        def question_closed(self, pending: Any) -> None:
            return None

        def workspaces_changed(self) -> None:
            return None

    class NoGate:
        """What every session did before the governor: nothing shared."""

        async def acquire(self, provider: str, model: str) -> Permit:
            return Permit([])

        def report_rate_limited(self, provider: str, model: str, retry: float | None) -> None:
            return None

        async def acquire_subagent(self, child_id: str) -> Permit:
            return Permit([])

        async def hold_for_budget(self, project: str, *_: Any) -> bool:
            return True

    class NoGovernor(Governor):
        def gate_for(self, workspace_id: str, notify: Any) -> Any:
            return NoGate()

    server = FakeLLM(responder=answer).start()
    server.limit_concurrency(PROVIDER_CAP, retry_after=RETRY_AFTER_S)
    os.environ["ANTHROPIC_API_KEY"] = "bench"
    os.environ["ANTHROPIC_BASE_URL"] = server.url
    if cap:
        update_config(
            lambda c: c.__setitem__(
                "governor", {"providers": {"anthropic": {"maxConcurrent": cap}}}
            )
        )
    listener = Listener()
    governor = NoGovernor() if cap == 0 else Governor.from_config()
    hosts = Hosts(listener, governor=governor)
    try:
        records = [
            await hosts.create(repo, "local", name_hint=f"w{i}", model=MODEL)
            for i in range(WORKSPACES)
        ]
        began = time.monotonic()
        for record in records:
            await hosts.send(record, "work")
        for record in records:
            host = hosts.get(record.id)
            assert host is not None
            await host.wait_done()
        wall = time.monotonic() - began
    finally:
        await hosts.shutdown()
        server.stop()
    failed = sum(1 for r in records if listener.ended.get(r.id) != "completed")
    return {
        "turns_failed": failed,
        "rate_limited": server.capacity.rejected,
        "requests_served": len([r for r in server.requests if r.status == 200]),
        "peak_in_flight": server.capacity.peak,
        "wall_s": round(wall, 2),
    }
