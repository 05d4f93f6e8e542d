"""Long sessions: what compaction costs xum itself, and request assembly after many boundaries.

1. `latency_excluding_model_ms`: a `/compact` turn against the fake LLM server, minus the time
   the server spent on the request (from its last byte in to the reply's last byte out; it runs
   on its own thread), at 1k and 10k history rows since the last boundary. What remains is
   xum's part: the writer lock, the compact agent's prompt, building and encoding the request
   (most of it at 10k rows, as for any request that size), reading the stream, the durable
   appends of the start frames and of the boundary with the turn's end. Medians of 5.
2. `assembly_after_boundaries`: the per-step work before a request (the workspace check, the
   frozen sections, the projection, the context meter's checks) on a log of 100k history rows
   with 10 compaction boundaries in it, next to the same log without boundaries, measured in
   the same run (`ratio`). The aim is under 1 ms per turn.
"""

from __future__ import annotations

import asyncio
import statistics
import time
from pathlib import Path
from typing import Any

from bench.bench_context import _age, _repo, _rows, _session, _user
from bench.util import scratch_home
from xum.engine.route import resolve_route
from xum.llm.client import open_client
from xum.store import compaction_config as cc
from xum.store import frame_types as ev
from xum.store.config import update_config
from xum.testing import fakellm
from xum.testing.fakellm.record import RecordedRequest

MODEL = "anthropic:claude-sonnet-5-5"
ROWS = 100_000
BOUNDARIES = 10
REPEAT = 200
LATENCY_SIZES = (1_000, 10_000)
LATENCY_REPEAT = 5


def _respond(request: RecordedRequest) -> fakellm.Reply:
    return fakellm.text("SUMMARY: " + "the work so far. " * 40)


async def _assembly(root: Path, route: Any, client: Any, boundaries: int) -> float:
    repo = _repo(root / f"assembly-{boundaries}")
    ws_id = f"bench-boundaries-{boundaries}"
    session = _session(repo, ws_id, route, client)
    await session.next_request()
    log = session.log
    every = ROWS // (boundaries + 1) if boundaries else ROWS + 1
    with log.writing("bench"):
        written = 0
        while written < ROWS:
            chunk = min(2_000, ROWS - written, every - written % every)
            log.append_many(_rows(written, chunk))
            written += chunk
            if boundaries and written % every == 0 and written // every <= boundaries:
                log.append_many([(ev.COMPACTION, {"summary": f"summary at {written}"})])
    _age(root)
    await session.next_request()  # consume the history once, as a running session has
    compactor = session.compactor
    samples = []
    with log.writing("bench"):
        for i in range(REPEAT):
            log.append_many([_user(ROWS + i)])
            began = time.perf_counter()
            compactor.due_mid_turn()
            compactor.check_fits()
            await session.next_request()
            samples.append(time.perf_counter() - began)
    assert sum(1 for f in log.frames if f.type == ev.COMPACTION) == boundaries
    return statistics.median(samples) * 1000


async def _latency(root: Path, server: fakellm.FakeLLM, route: Any, client: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for size in LATENCY_SIZES:
        repo = _repo(root / f"latency-{size}")
        session = _session(repo, f"bench-compact-{size}", route, client)
        await session.next_request()
        overheads, totals = [], []
        for round_no in range(LATENCY_REPEAT):
            with session.log.writing("bench"):
                session.log.append_many(_rows(round_no * size, size))
            began = time.perf_counter()
            result = await session.compactor.compaction_turn("manual")
            total = time.perf_counter() - began
            assert result.reason == "completed", result.error
            request = server.requests[-1]
            assert request.finished is not None
            overheads.append(total - (request.finished - request.arrived))
            totals.append(total)
        out[str(size)] = {
            "latency_excluding_model_ms": round(statistics.median(overheads) * 1000, 2),
            "total_ms": round(statistics.median(totals) * 1000, 2),
        }
    return out


async def _main() -> dict[str, Any]:
    with scratch_home("xum-bench-compaction-") as root:
        # 100k rows are ~4M tokens: a window that large keeps the meter's checks running in full
        # (a real session would have compacted long before; the figure is about bookkeeping).
        update_config(lambda c: c.update({cc.CONTEXT_WINDOWS_KEY: {MODEL: 100_000_000}}))
        # The server on its own thread: its work on a 1 MB request must not run on the loop
        # whose time is being measured.
        with fakellm.FakeLLM() as server:
            server.set_responder(_respond)
            route = resolve_route(
                MODEL,
                env={"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": server.url},
                config={},
            )
            client = open_client(route.endpoint)
            try:
                plain = await _assembly(root, route, client, 0)
                bounded = await _assembly(root, route, client, BOUNDARIES)
                latency = await _latency(root, server, route, client)
            finally:
                await client.aclose()
        return {
            "assembly_after_boundaries": {
                "history_rows": ROWS,
                "boundaries": BOUNDARIES,
                "per_turn_ms": round(bounded, 4),
                "without_boundaries_per_turn_ms": round(plain, 4),
                "ratio": round(bounded / plain, 2) if plain else None,
                "aim_ms": 1.0,
            },
            "compaction_by_history_rows": latency,
        }


def run() -> dict[str, Any]:
    return asyncio.run(_main())


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
