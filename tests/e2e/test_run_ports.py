"""A real `xum run` gives its commands and its init hook the workspace's port block, keeps the
block when the workspace is reopened, gives a parallel workspace another, and tells the model
about the variables (not the numbers) in the prompt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import env_for, events, run_xum
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.repo(
    files={"app.py": "print('hi')\n", ".xum/init": '#!/bin/sh\necho "$XUM_PORTS" > .init-ports\n'}
)

PRINT_PORTS = "echo port=$XUM_PORT; echo ports=$XUM_PORTS; echo plain=${PORT-unset}"


def run_showing_ports(
    fake_llm: FakeLLM, repo: Path, *args: str
) -> tuple[dict[str, Any], dict[str, str]]:
    fake_llm.script(
        fakellm.tool_call("bash", {"script": PRINT_PORTS, "display_name": "ports"}),
        fakellm.text("Done."),
    )
    result = run_xum("run", "--json", *args, "which ports?", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 0, result.stderr
    evts = events(result.stdout)
    (shown,) = [e for e in evts if e["type"] == "tool-result"]
    lines = dict(line.split("=", 1) for line in shown["output"].splitlines() if "=" in line)
    return evts[-1], lines


def test_commands_get_the_block_and_keep_it_across_runs(fake_llm: FakeLLM, repo: Path) -> None:
    (repo / ".xum" / "init").chmod(0o755)
    assert run_xum("trust", cwd=repo).returncode == 0
    first, seen = run_showing_ports(fake_llm, repo)
    assert seen == {"port": "20000", "ports": "20000-20009", "plain": "unset"}
    # The init hook of the same workspace saw the same block.
    assert (repo / ".init-ports").read_text().strip() == "20000-20009"
    system = json.dumps(fake_llm.requests[0].json["system"])
    assert "$XUM_PORT" in system and "20000" not in system

    fake_llm.reset()
    again, seen_again = run_showing_ports(fake_llm, repo, "-w", first["workspace_id"])
    assert again["workspace_id"] == first["workspace_id"]
    assert seen_again["ports"] == "20000-20009"

    fake_llm.reset()
    other, seen_other = run_showing_ports(fake_llm, repo, "-r", "worktree")
    assert other["workspace_id"] != first["workspace_id"]
    assert seen_other["ports"] == "20010-20019"
