"""Run the real `xum` executable in a subprocess, with the test's private XUM_ROOT and HOME."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from xum.testing.fakellm import FakeLLM

XUM = str(Path(sys.executable).with_name("xum"))


def run_xum(
    *args: str,
    env: dict[str, str] | None = None,
    cwd: Path | None = None,
    input: str | None = None,
    timeout: float = 60,
) -> subprocess.CompletedProcess[str]:
    full_env = dict(os.environ)
    if env:
        full_env.update(env)
    return subprocess.run(
        [XUM, *args],
        env=full_env,
        cwd=cwd,
        input=input,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def env_for(server: FakeLLM) -> dict[str, str]:
    """The environment that makes the fake LLM server the Anthropic provider."""
    return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}


def events(stdout: str) -> list[dict[str, Any]]:
    """The JSON events `xum run --json` printed, one a line."""
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]
