"""External ACP agents in tests: the scripted fake agent (`xum.testing.fake_acp_agent`) as a
configured external agent, and `xum run` as a real subprocess."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from xum.core.paths import config_path
from xum.store.config import update_config
from xum.testing.fake_acp_agent import SCRIPT_ENV

NAME = "fake"


def write_script(path: Path, prompts: list[list[dict[str, Any]]], **options: Any) -> Path:
    """The fake agent's script (see its module docstring) at `path`."""
    path.write_text(json.dumps({"prompts": prompts, **options}), encoding="utf-8")
    return path


def configure(script: Path, *, name: str = NAME, **definition: Any) -> None:
    """config.json's `externalAgents` with the fake agent as `name`, running `script`."""
    entry: dict[str, Any] = {
        "command": sys.executable,
        "args": ["-m", "xum.testing.fake_acp_agent"],
        "env": {SCRIPT_ENV: str(script)},
        **definition,
    }

    def mutate(config: dict[str, Any]) -> None:
        config.setdefault("externalAgents", {})[name] = entry

    config_path().parent.mkdir(parents=True, exist_ok=True)
    update_config(mutate)


def calls(log: Path) -> list[dict[str, Any]]:
    """What the fake agent logged (`callLog`), one object per request."""
    if not log.exists():
        return []
    return [json.loads(line) for line in log.read_text().splitlines() if line.strip()]


def run_xum(
    project: Path, *args: str, env: dict[str, str] | None = None, timeout: float = 120
) -> tuple[int, list[dict[str, Any]], str]:
    """`xum run --json ARGS` in `project`: (exit code, its events, stderr)."""
    done = subprocess.run(
        [sys.executable, "-m", "xum", "run", "--json", *args],
        cwd=project,
        env={**os.environ, **(env or {})},
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    return done.returncode, events, done.stderr


def replay(project: Path, workspace: str) -> list[dict[str, Any]]:
    """`xum session --json WORKSPACE`: the committed events of its log."""
    done = subprocess.run(
        [sys.executable, "-m", "xum", "session", "--json", workspace],
        cwd=project,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def committed(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in events if "seq" in e]


def final(events: list[dict[str, Any]]) -> dict[str, Any]:
    return next(e for e in events if e["type"] == "final")


def texts(events: list[dict[str, Any]]) -> list[str]:
    return [e["text"] for e in events if e["type"] == "assistant-message" and e["text"]]
