"""Helpers for the hook tests: a repository's hooks, and tool calls run through a
workspace's hook wiring."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.support.tools import Streams
from xum.engine.events import Event
from xum.engine.extensions import ToolCall
from xum.engine.toolrun import run_one
from xum.runtime.base import Runtime
from xum.store.registry import WorkspaceRecord
from xum.tools.base import ToolContext, ToolResult
from xum.workspaces import lifecycle
from xum.workspaces.state import scratch_dir
from xum.workspaces.wiring import SessionWiring, wire_session

GIT_ID = ["-c", "user.name=Test", "-c", "user.email=test@example.com"]

TOOLS = ["bash", "file_read", "file_edit_replace_string"]


def sh_git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", *GIT_ID, *args], cwd=repo, capture_output=True, text=True, check=True
    ).stdout


def make_project(tmp_path: Path) -> Path:
    """A git repository with one commit."""
    path = tmp_path / "proj"
    path.mkdir()
    sh_git(path, "init", "-q", "-b", "main")
    (path / "app.py").write_text("x = 1\n")
    sh_git(path, "add", ".")
    sh_git(path, "commit", "-qm", "first")
    return path


def hook(repo: Path, name: str, body: str, *, executable: bool = True) -> Path:
    path = repo / ".xum" / name
    path.parent.mkdir(exist_ok=True)
    path.write_text(body)
    if executable:
        path.chmod(0o755)
    return path


class Harness:
    def __init__(self, record: WorkspaceRecord, runtime: Runtime, wiring: SessionWiring) -> None:
        self.record = record
        self.runtime = runtime
        self.wiring = wiring
        self.streams = Streams()
        self.ctx = ToolContext(
            call_id="call_hooks",
            runtime=runtime,
            workspace_id=record.id,
            workspace_name=record.name,
            project_path=record.project_path,
            scratch_dir=str(scratch_dir(record.id)),
            env={
                **wiring.base_env,
                "XUM_WORKSPACE_ID": record.id,
                "XUM_RUNTIME": record.runtime,
            },
            open_output=self.streams,
        )

    @property
    def streamed(self) -> bytes:
        """Everything every live stream of every call received (after masking)."""
        return self.streams.everything()

    async def call(self, name: str, **arguments: Any) -> ToolResult:
        call = ToolCall(f"call_{os.urandom(3).hex()}", name, json.dumps(arguments))
        ctx = dataclasses.replace(self.ctx, call_id=call.id)
        return await run_one(call, ctx, TOOLS, self.wiring.middleware)


async def harness(
    repo: Path, runtime: str = "local", events: list[dict[str, Any]] | None = None, **kw: Any
) -> Harness:
    created = await lifecycle.create_workspace(repo, runtime, name_hint="hooks", run_init=False)

    def sink(event: Event) -> None:
        if events is not None:
            events.append(event.to_dict())

    wiring = await wire_session(
        created.record,
        created.runtime,
        scratch_dir=scratch_dir(created.record.id),
        emit=sink,
        **kw,
    )
    return Harness(created.record, created.runtime, wiring)


def bash(script: str) -> dict[str, Any]:
    return {"script": script, "display_name": "t"}
