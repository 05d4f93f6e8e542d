"""The fake LLM server in its own process, for benchmarks whose client must not share a CPU
budget with it (`python -m bench.fake_server --steps 5`).

Every session (told apart by its first user message) gets `--steps` replies that each call
`bash true # <step>` (distinct, so the doom-loop guard stays quiet), then a text reply;
`--think S` delays each reply's first byte by 0.5-1.5 x S seconds, like a model thinking. The
first line of stdout is the URL. Commands on stdin, one per line:

    dump <path>   write every recorded request as JSON (first user text, arrived, finished),
                  then print "ok"
    (EOF)         exit
"""

from __future__ import annotations

import argparse
import random
import sys
from typing import Any

import orjson

from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM, RecordedRequest


def first_user_text(req: RecordedRequest) -> str:
    for message in req.json.get("messages", []):
        if message.get("role") != "user":
            continue
        content = message["content"]
        if isinstance(content, str):
            return content
        for block in content:
            if block.get("type") == "text":
                return str(block["text"])
    return ""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.fake_server")
    parser.add_argument("--steps", type=int, default=5)
    parser.add_argument(
        "--think", type=float, default=0.0, help="seconds each reply waits before its first byte"
    )
    args = parser.parse_args(argv)
    steps = args.steps
    rng = random.Random(7)

    def think() -> float:
        # A model's time to first token varies; spread it over [0.5x, 1.5x] so sessions that
        # started together drift apart the way real ones do.
        return args.think * (0.5 + rng.random()) if args.think else 0.0

    def responder(req: RecordedRequest) -> fakellm.Reply:
        done = sum(1 for m in req.json["messages"] if m["role"] == "assistant")
        if done < steps:
            return fakellm.tool_call(
                "bash",
                {"script": f"true # {done}", "display_name": "noop"},
                chunk_size=0,
                first_byte_delay=think(),
            )
        return fakellm.text("done", chunk_size=0, first_byte_delay=think())

    server = FakeLLM(responder=responder).start()
    try:
        print(server.url, flush=True)
        for line in sys.stdin:
            command, _, arg = line.strip().partition(" ")
            if command == "dump":
                rows: list[dict[str, Any]] = [
                    {"key": first_user_text(r), "arrived": r.arrived, "finished": r.finished}
                    for r in server.requests
                    if isinstance(r.json, dict)
                ]
                with open(arg, "wb") as out:
                    out.write(orjson.dumps(rows))
                print("ok", flush=True)
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
