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


# The wires `xum run` is tested on: (model, key variable, base-URL variable).
WIRES = {
    "anthropic": ("anthropic:claude-sonnet-5-5", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"),
    "openai-responses": ("openai:gpt-6.1-sol", "OPENAI_API_KEY", "OPENAI_BASE_URL"),
}


def env_for(server: FakeLLM, wire: str = "anthropic") -> dict[str, str]:
    """The environment that makes the fake LLM server the provider of `wire`."""
    _, key_var, url_var = WIRES[wire]
    return {key_var: "test-key", url_var: server.url}


def write_providers(root: Path, text: str) -> None:
    """Write `$XUM_ROOT/providers.jsonc` (private, as xum writes it)."""
    root.mkdir(mode=0o700, exist_ok=True)
    path = root / "providers.jsonc"
    path.write_text(text)
    os.chmod(path, 0o600)


def events(stdout: str) -> list[dict[str, Any]]:
    """The JSON events `xum run --json` printed, one a line."""
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]
