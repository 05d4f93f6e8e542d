"""`python -m xum.testing.fakellm --script FILE [--port N] [--host 127.0.0.1]`

Serves the script until SIGINT or SIGTERM. The first line of stdout is the URL it listens on
(`http://127.0.0.1:PORT`), flushed, so a parent process can read it and connect.
"""

from __future__ import annotations

import argparse
import asyncio
import signal
import sys

from xum.testing.fakellm.script import ScriptError, load_script
from xum.testing.fakellm.server import FakeLLM


def _parse(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="python -m xum.testing.fakellm",
        description="Scripted fake LLM server (Anthropic Messages, OpenAI Responses and Chat).",
    )
    parser.add_argument("--script", help="JSON script file (see docs/testing.md)")
    parser.add_argument("--port", type=int, default=0, help="port (default: a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address (default: 127.0.0.1)")
    parser.add_argument(
        "--no-validate",
        action="store_true",
        help="answer requests the real provider would reject with 400",
    )
    return parser.parse_args(argv)


async def _serve(server: FakeLLM) -> None:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    async with server:
        print(server.url, flush=True)
        await stop.wait()


def main(argv: list[str] | None = None) -> int:
    args = _parse(argv)
    try:
        server = (
            FakeLLM.from_script(load_script(args.script), host=args.host, port=args.port)
            if args.script
            else FakeLLM(host=args.host, port=args.port)
        )
    except (OSError, ScriptError) as exc:
        print(f"fakellm: {exc}", file=sys.stderr)
        return 2
    server.validate = not args.no_validate
    try:
        asyncio.run(_serve(server))
    except OSError as exc:
        print(f"fakellm: cannot listen on {args.host}:{args.port}: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
