"""Real third-party agents (opencode, Claude Code, Codex) as xum workspaces' agents in tests: how each
is configured in config.json, how the fake model calls its shell tool, how a test skips without
the installed agents, and how a test finds (or misses) the process of a command an agent ran.

`xum.testing.external_agents` writes each agent's definition; this module is what several test
tiers (tests/external, browser, terminal UI) share on top of it."""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from xum.store.config import update_config
from xum.testing import external_agents as agents
from xum.testing import fakellm

Definition = Callable[[str, Path], agents.AgentDefinition]

DEFINITIONS: dict[str, Definition] = {
    "opencode": agents.opencode_definition,
    "claude-code": agents.claude_code_definition,
    "codex": agents.codex_definition,
}
# The agents that ask before they act, as their definitions here set them (Codex runs its
# commands in its own sandbox without asking).
ASKING = ("claude-code", "opencode")


def skip_without_agents() -> None:
    """Skip the calling test when the real agents are not installed (`make external-agents`),
    or fail it when CI is set (CI installs them): tests/external's conftest does this for every
    test there, other tiers call it themselves."""
    reason = agents.missing_reason()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{reason}, but CI is set: `make test` installs them")
    pytest.skip(reason)


def shell_call(name: str, command: str) -> fakellm.Reply:
    """The model's reply that calls agent `name`'s own shell tool with `command`."""
    if name == "opencode":
        return fakellm.tool_call("bash", {"command": command, "description": "Run the command"})
    if name == "codex":
        return fakellm.tool_call("exec_command", {"cmd": command})
    # claude-code-acp 0.16.2 rejects a call without `timeout`, though its schema says optional.
    return fakellm.tool_call(
        "mcp__acp__Bash", {"command": command, "description": "Run the command", "timeout": 120000}
    )


def definition_for(name: str, llm: fakellm.FakeLLM, workdir: Path) -> agents.AgentDefinition:
    """The definition of the real agent `name` (a key of DEFINITIONS) pointed at `llm`, its
    files under `workdir`. Whatever it asks of a host other than loopback goes to the fake
    through the proxy variables, which records it as an error."""
    definition = DEFINITIONS[name](llm.base_url(), workdir)
    definition["env"].update(
        HTTPS_PROXY=llm.url, HTTP_PROXY=llm.url, NO_PROXY="127.0.0.1,localhost"
    )
    return definition


def configure(name: str, llm: fakellm.FakeLLM, workdir: Path) -> agents.AgentDefinition:
    """config.json's `externalAgents` (of this process's XUM_ROOT) with `definition_for`."""
    definition = definition_for(name, llm, workdir)

    def mutate(config: dict[str, object]) -> None:
        # The helpers' definitions are config.json entries as they are.
        config["externalAgents"] = {name: definition}

    update_config(mutate)
    return definition


def request_text(request: fakellm.RecordedRequest) -> str:
    return request.body.decode("utf-8", "replace")


def processes_with(marker: str) -> list[int]:
    """The processes whose command line holds `marker` (this one's excepted)."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:  # it ended between the listing and the read
            continue
        if marker.encode() in cmdline:
            found.append(int(entry.name))
    return found


def wait_until(check: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll `check` until it holds, or fail saying `what` did not happen within `timeout`."""
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"{what} did not happen within {timeout:.0f} s")
        time.sleep(0.1)
