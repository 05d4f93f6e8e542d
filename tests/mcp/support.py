"""Helpers for the MCP tests: config files naming the test server, and bounded waits."""

from __future__ import annotations

import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

SERVER = Path(__file__).with_name("server.py")
TIME_SERVER = str(Path(sys.executable).with_name("mcp-server-time"))


def server_command(*flags: str) -> str:
    """The shell command that starts the test server over stdio."""
    return " ".join([sys.executable, str(SERVER), *flags])


def server_entry(
    barrier_dir: Path | None = None, tools: str | None = None, **extra: Any
) -> dict[str, Any]:
    env: dict[str, str] = {}
    if barrier_dir is not None:
        env["MCP_TEST_DIR"] = str(barrier_dir)
    if tools is not None:
        env["MCP_TEST_TOOLS"] = tools
    return {"command": server_command(), "env": env, **extra}


def write_config(path: Path, servers: dict[str, Any], **top: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"servers": servers, **top}, indent=2))
    return path


def wait_for(check: Callable[[], bool], what: str, timeout: float = 30.0) -> None:
    """Poll `check` until it holds; fail naming `what` when the deadline passes."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting for {what}")
        time.sleep(0.02)
