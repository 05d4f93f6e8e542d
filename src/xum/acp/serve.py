"""Serving ACP over stdio, with stdout kept for protocol messages only.

`protect_stdout` runs first: it moves the real stdout to a private descriptor (not inherited by
child processes) for the protocol, and points descriptor 1 and `sys.stdout` at the log (the
`--log-file`, else stderr). A stray `print`, a library's warning or a child process that
inherits descriptor 1 can then never corrupt the JSON-RPC stream the editor reads.

`serve` runs the connection until the editor closes stdin or the process is told to stop
(SIGTERM, SIGINT); then every session's running turn is interrupted and ends durably.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import signal
import sys
from typing import TYPE_CHECKING, BinaryIO, cast

if TYPE_CHECKING:
    from acp.interfaces import Agent

    from xum.acp.agent import XumAgent
    from xum.acp.remote_agent import RemoteXumAgent

log = logging.getLogger("xum.acp")

# A whole file's buffer travels in one line (fs/read_text_file): the SDK's default limit.
LINE_LIMIT_BYTES = 50 * 1024 * 1024


def protect_stdout(log_fd: int) -> BinaryIO:
    """The protocol's output stream; descriptor 1 and `sys.stdout` now write to `log_fd`."""
    protocol_fd = os.dup(1)  # non-inheritable (PEP 446): tools' processes cannot reach it
    os.dup2(log_fd, 1)
    sys.stdout = sys.stderr if log_fd == 2 else os.fdopen(os.dup(log_fd), "w", buffering=1)
    return os.fdopen(protocol_fd, "wb", buffering=0)


def setup_logging(log_file: str | None) -> int:
    """Logs go to `log_file` (appended) or stderr; returns the descriptor they use."""
    handler: logging.Handler
    if log_file:
        stream = open(log_file, "a", encoding="utf-8", buffering=1)  # noqa: SIM115 (process-long)
        handler = logging.StreamHandler(stream)
        fd = stream.fileno()
    else:
        handler = logging.StreamHandler(sys.stderr)
        fd = 2
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(logging.WARNING)
    logging.getLogger("xum").setLevel(logging.INFO)
    return fd


async def serve(agent: XumAgent | RemoteXumAgent, output: BinaryIO) -> None:
    from acp.core import AgentSideConnection

    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT_BYTES)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, output)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)
    # The SDK routes each method to the attribute of that name and answers "method not found"
    # for one the agent lacks: XumAgent has exactly the methods it advertises, not the whole
    # protocol (forks, resumes, extensions), hence the cast.
    conn = AgentSideConnection(cast("Agent", agent), writer, reader, listening=False)

    stop = asyncio.Event()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    listening = asyncio.create_task(conn.listen(), name="acp listen")
    stopping = asyncio.create_task(stop.wait(), name="acp stop")
    try:
        await asyncio.wait({listening, stopping}, return_when=asyncio.FIRST_COMPLETED)
        log.info("stopping: %s", "signal" if stop.is_set() else "the editor closed the connection")
    finally:
        for task in (listening, stopping):
            task.cancel()
        await agent.close_all()
        with contextlib.suppress(Exception):
            await conn.close()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.remove_signal_handler(sig)
