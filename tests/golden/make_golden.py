"""Write a set of golden session logs with today's `xum run` against the fake LLM.

    PYTHONPATH=src python -m tests.golden.make_golden tests/golden/vN

Each scenario runs the real `xum` command in a subprocess, with a private $XUM_ROOT and HOME, a
fresh git repository and a fake LLM answering from a queue, then copies every session log it
left (`chat.jsonl`, `chat.manifest.json`) to `<out>/<scenario>/<session-id>/`, beside what
today's reader makes of it: `events.json` (the committed events a replay shows) and
`history.json` (the provider history the next request would start from).

Never regenerate a version that is committed: the point of a golden log is that it was written
by an older xum. When the log format changes, write the new logs to the next version directory
(tests/golden/v2, ...) and keep every older one: tests/unit/test_golden_logs.py opens them all.

Scenarios, together covering every frame kind of `xum.store.frame_types.FRAME_KINDS`:
  basics    a tool call, a `/compact`, a `/clear` and a turn after it
  goal      `xum run --goal` until the agent completes it
  plan      plan mode: reads, a refused edit, a plan file written and proposed
  subagents a parent delegating to a sub-agent (two logs)
  damaged   the basics log with one frame edited by hand (quarantined when opened)
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

from tests.gitrepo import make_repo

from xum.engine.derive import replay_events
from xum.store.projection import rebuild_history
from xum.store.sessionlog import SessionLog
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM, RecordedRequest

MODEL = "anthropic:claude-sonnet-5-5"
LOG_FILES = ("chat.jsonl", "chat.manifest.json")


def expected(session_dir: Path) -> None:
    """Write what today's reader makes of the log in `session_dir` beside it."""
    frames = SessionLog(session_dir).frames
    events = [event.to_dict() for event in replay_events(frames)]
    write_json(session_dir / "events.json", events)
    write_json(session_dir / "history.json", rebuild_history(frames))


def write_json(path: Path, value: Any) -> None:
    path.write_text(json.dumps(value, indent=1, sort_keys=True, ensure_ascii=False) + "\n")


class Scenario:
    """One private $XUM_ROOT, repository and fake LLM for a few `xum run`s."""

    def __init__(self, base: Path, name: str) -> None:
        self.name = name
        self.home = base / name / "home"
        self.root = self.home / ".xum"
        self.repo = make_repo(base / name / "repo")
        self.fake = FakeLLM().start()

    def run(self, *args: str) -> dict[str, Any]:
        """`xum run --json ARGS` in the repository; its final event."""
        env = {
            **os.environ,
            "HOME": str(self.home),
            "XUM_ROOT": str(self.root),
            "ANTHROPIC_API_KEY": "golden-key",
            "ANTHROPIC_BASE_URL": self.fake.url,
        }
        done = subprocess.run(
            [sys.executable, "-m", "xum", "run", "--json", "-m", MODEL, *args],
            cwd=self.repo,
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
        )
        if done.returncode not in (0, 3):
            raise SystemExit(f"{self.name}: xum run {args} failed:\n{done.stderr}{done.stdout}")
        final: dict[str, Any] = json.loads(done.stdout.splitlines()[-1])
        return final

    def save(self, out: Path) -> list[Path]:
        """Copy every session log of this scenario to `out/<name>/<id>/`."""
        saved = []
        for session in sorted((self.root / "sessions").iterdir()):
            if not (session / "chat.jsonl").exists():
                continue
            target = out / self.name / session.name
            target.mkdir(parents=True)
            for name in LOG_FILES:
                shutil.copy2(session / name, target / name)
            saved.append(target)
        self.fake.stop()
        return saved


def basics(s: Scenario) -> None:
    s.fake.script(
        fakellm.tool_call("bash", {"script": "ls", "display_name": "list"}),
        fakellm.tool_call("file_read", {"path": "app.py"}),
        fakellm.text("The project has app.py."),
        fakellm.text("Summary: the project has one file, app.py, with greet()."),
        fakellm.text("Starting over: hello."),
    )
    ws = s.run("look around")["workspace_id"]
    s.run("-w", ws, "/compact")
    s.run("-w", ws, "/clear")
    s.run("-w", ws, "say hello")


def goal(s: Scenario) -> None:
    s.fake.script(
        fakellm.text("Started: greet() returns 'hi'."),
        fakellm.tool_call("complete_goal", {"summary": "greet() was checked."}),
        fakellm.text("Done."),
    )
    s.run("--goal", "check greet()", "--goal-turns", "3")


def plan(s: Scenario) -> None:
    def planner(request: RecordedRequest) -> fakellm.Reply:
        found = re.search(r"Plan file: (\S+)", request.json["system"][0]["text"])
        done = sum(
            1
            for message in request.json["messages"]
            for block in message["content"]
            if isinstance(block, dict) and block.get("type") == "tool_result"
        )
        if done == 0:
            return fakellm.tool_call("file_read", {"path": "app.py"})
        if done == 1 and found:
            content = "# Plan\n\n1. Return 'hello' from greet().\n"
            return fakellm.tool_call("file_edit_insert", {"path": found[1], "content": content})
        if done == 2:
            return fakellm.tool_call("propose_plan", {})
        return fakellm.text("The plan is ready for review.")

    s.fake.set_responder(planner)
    s.run("--mode", "plan", "plan a greeting change")


def subagents(s: Scenario) -> None:
    def responder(request: RecordedRequest) -> fakellm.Reply:
        text = json.dumps(request.json["messages"])
        steps = sum(1 for m in request.json["messages"] if m["role"] == "assistant")
        if "CHILD-TASK" in json.dumps(request.json["messages"][0]):
            return fakellm.text("The child looked: app.py has greet().")
        if steps == 0:
            return fakellm.tool_call("task", {"title": "Look", "prompt": "CHILD-TASK: read app.py"})
        assert "<task" in text
        return fakellm.text("Delegated.")

    s.fake.set_responder(responder)
    s.run("delegate a look at app.py")


def damage(saved: list[Path], out: Path) -> None:
    """The basics log with its first tool result edited by hand (a changed length)."""
    source = saved[0]
    target = out / "damaged" / source.name
    target.mkdir(parents=True)
    for name in LOG_FILES:
        shutil.copy2(source / name, target / name)
    log = target / "chat.jsonl"
    lines = log.read_bytes().splitlines(keepends=True)
    victim = next(i for i, line in enumerate(lines) if b'"type":"tool_result"' in line)
    lines[victim] = lines[victim].replace(b"app.py", b"edited by hand!!")
    log.write_bytes(b"".join(lines))


SCENARIOS: dict[str, Callable[[Scenario], None]] = {
    "basics": basics,
    "goal": goal,
    "plan": plan,
    "subagents": subagents,
}


def main(argv: list[str]) -> int:
    if len(argv) != 1:
        print(__doc__, file=sys.stderr)
        return 2
    out = Path(argv[0])
    if out.exists():
        print(
            f"{out} exists: golden logs are never regenerated; write a new version", file=sys.stderr
        )
        return 1
    out.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="xum-golden-") as tmp:
        saved: dict[str, list[Path]] = {}
        for name, scenario in SCENARIOS.items():
            s = Scenario(Path(tmp), name)
            try:
                scenario(s)
            finally:
                saved[name] = s.save(out)
        damage(saved["basics"], out)
    for log in sorted(out.glob("*/*/chat.jsonl")):
        expected(log.parent)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
