"""Helpers for the ACP bridge tests (`xum acp` driven by a scripted editor)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.cli import XUM
from xum.testing import fakellm
from xum.testing.acpeditor import EditorCapabilities, TestEditor, connect
from xum.testing.fakellm import FakeLLM


def env_for(fake: FakeLLM) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": fake.url}


def bridge(
    editor: TestEditor,
    repo: Path,
    env: dict[str, str],
    *args: str,
    capabilities: EditorCapabilities | None = None,
) -> Any:
    return connect(
        editor,
        [XUM, "acp", *args],
        env=env,
        cwd=repo,
        capabilities=capabilities,
        stderr=repo.parent / "acp-stderr.log",
    )


def tool_results(request: fakellm.RecordedRequest) -> list[str]:
    """The tool_result texts of an Anthropic request's last message."""
    out = []
    for block in request.json["messages"][-1]["content"]:
        if block.get("type") == "tool_result":
            content = block["content"]
            out.append(content if isinstance(content, str) else content[0]["text"])
    return out
