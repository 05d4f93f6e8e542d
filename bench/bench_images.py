"""Images: what an attached image costs the session log, per request.

Two sessions run the same TURNS turns against the fake LLM; in one, the first message carries a
1 MB PNG. An image is stored once (the session's blobs) and the log keeps a reference, so:

- `first_frame_added_bytes`: how much larger the log is after the turn that attached the image
  (the reference in its user frame; aim: well under a kilobyte, never the image);
- `followup_turn_added_log_bytes`: the median difference in log growth per later turn, while
  the image is in every request's history (aim: a few bytes, the usage counts' extra digits:
  the log never repeats the image);
- `stored_bytes`: the blob on disk, written once;
- `request_added_bytes`: the median difference in request body size (the wire does carry the
  image, base64, in every request: that is the provider's format, not the log's).
"""

from __future__ import annotations

import asyncio
import itertools
import os
import struct
import tempfile
import zlib
from pathlib import Path
from typing import Any

from bench.util import git_repo

TURNS = 6
IMAGE_BYTES = 1024 * 1024


def _png(size: int) -> bytes:
    """A valid 1x1 PNG padded with an ancillary chunk to about `size` bytes."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    head = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 1, 1, 8, 2, 0, 0, 0))
    tail = chunk(b"IDAT", zlib.compress(b"\x00\xff\x00\x00")) + chunk(b"IEND", b"")
    pad = max(0, size - len(head) - len(tail) - 16)
    return head + chunk(b"teXt", b"pad\x00" + os.urandom(pad // 2).hex().encode()[:pad]) + tail


async def _session(repo: Path, fake: Any, image: bytes | None) -> dict[str, Any]:
    from xum.core.paths import session_dir
    from xum.store.blobs import SessionBlobs
    from xum.store.sessionlog import LOG_NAME
    from xum.workspaces.assembly import open_workspace_session, route_for
    from xum.workspaces.lifecycle import create_workspace

    created = await create_workspace(repo, "local", name_hint="bench")
    route, thinking = route_for(created.record)
    opened = await open_workspace_session(
        created.record, route=route, thinking=thinking, emit=lambda _e: None, created=created
    )
    log = session_dir(created.record.id) / LOG_NAME
    sizes: list[int] = []
    bodies: list[int] = []
    try:
        for i in range(TURNS):
            images = []
            if i == 0 and image is not None:
                images = [SessionBlobs(created.record.id).put(image, "shot.png")]
            asked = len(fake.requests)
            await opened.agent.run_turn(f"turn {i}", images)
            sizes.append(log.stat().st_size)
            bodies.append(len(fake.requests[asked].body))
    finally:
        await opened.aclose()
    blobs = session_dir(created.record.id) / "blobs"
    stored = sum(p.stat().st_size for p in blobs.iterdir()) if blobs.exists() else 0
    return {"sizes": sizes, "bodies": bodies, "stored": stored}


async def _measure(root: Path) -> dict[str, object]:
    import statistics

    from xum.testing import fakellm

    repo = git_repo(root)
    image = _png(IMAGE_BYTES)
    async with fakellm.FakeLLM() as fake:
        fake.set_default(fakellm.text("ok", chunk_size=0))
        os.environ.update(
            XUM_ROOT=str(root / ".xum"),
            HOME=str(root),
            ANTHROPIC_API_KEY="bench",
            ANTHROPIC_BASE_URL=fake.url,
        )
        with_image = await _session(repo, fake, image)
        without = await _session(repo, fake, None)

    def growth(sizes: list[int]) -> list[int]:
        return [b - a for a, b in itertools.pairwise(sizes)]

    added = [
        a - b for a, b in zip(growth(with_image["sizes"]), growth(without["sizes"]), strict=True)
    ]
    bodies = [a - b for a, b in zip(with_image["bodies"], without["bodies"], strict=True)]
    return {
        "turns": TURNS,
        "image_bytes": len(image),
        "stored_bytes": with_image["stored"],
        "first_frame_added_bytes": with_image["sizes"][0] - without["sizes"][0],
        "followup_turn_added_log_bytes": statistics.median(added),
        "request_added_bytes": statistics.median(bodies),
    }


def run() -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="xum-bench-images-") as tmp:
        return asyncio.run(_measure(Path(tmp)))
