"""`xum run`'s start-up path: what it has imported when it connects to the model.

Start-up time is mostly import time (`python -X importtime`), so the first request goes out
before the code that only later steps, other runtimes or other features need is imported. This
pins that down without timing anything: in the real CLI process, an import hook notes every module
imported (except by the prewarm threads, which load what the reply will need on purpose), and an
audit hook takes the list at the first `socket.connect`: the connection to the model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.e2e.cli import env_for
from tests.gitrepo import APP_AND_BINARY_FILES, make_repo
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

PROBE = """
import json, sys, threading

PREWARM = ("xum-prewarm", "xum-tool-prewarm")
imported = set()
at_connect = []


class Watch:
    def find_spec(self, name, path=None, target=None):
        if not threading.current_thread().name.startswith(PREWARM):
            imported.add(name)
        return None


def hook(event, args):
    if event == "socket.connect" and not at_connect:
        import gc

        # The collector held off since the entry point runs again by the first request.
        imported.add(f"gc enabled: {gc.isenabled()}")
        at_connect.append(sorted(imported))
        # Written now: `xum run` ends with os._exit, which runs no `finally` of ours.
        with open(out, "w") as f:
            json.dump(at_connect[0], f)


sys.meta_path.insert(0, Watch())
sys.addaudithook(hook)
out = sys.argv.pop(1)
from xum.cli.entry import main

main()
"""

# Each of these is imported where it is used: after the first request, on another runtime, or
# with a feature the run has not used yet.
NOT_BEFORE_THE_FIRST_REQUEST = [
    "xum.workspaces.subagents.manager",  # the first task tool call (DeferredHost)
    "xum.workspaces.subagents.agents",
    "xum.workspaces.subagents.records",
    "xum.workspaces.subagents.spawn",
    "xum.workspaces.subagents.workspaces",
    "xum.workspaces.subagents.patches",
    "xum.tools.taskrecords",
    "xum.tools.base",  # the tool machinery: the first tool call
    "xum.tools.background",
    "xum.engine.toolrun",
    "xum.runtime.process",
    "xum.workspaces.flatten",
    "xum.engine.userinput",  # slash commands
    "xum.store.partial",  # while a reply streams
    "xum.runtime.ssh",  # other runtimes
    "xum.workspaces.checkouts.ssh",
    "xum.workspaces.checkouts.ssh_remote",
    "xum.runtime.worktree",
    "xum.workspaces.checkouts.worktree",
    "xum.workspaces.checkouts.xumignore",
    "pydantic",  # tool input validation (the tool prewarm thread loads it)
    "xum.tools.plain_args",  # plain tool arguments: the first tool call
    "xum.tools.bash",
    "xum.tools.command_risk",  # a command's risk and its parser: the first bash call
    "tree_sitter",
    "xum.runtime.sandbox",  # bubblewrap's machinery: the first sandboxed command
    "xum.context.skill_store",  # skill writes and deletes: the first of them
    "xum.tools.skill_records",
    "secrets",  # approval and question ids are os.urandom's (secrets brings random and hmac)
    "bs4",  # web_fetch's HTML reader
    "markdownify",
    "acp",  # the ACP SDK and bridge: `xum acp` only
    "xum.acp",
    "mcp",  # the MCP SDK: only once a workspace has MCP servers to start
    "mcp_types",
    "xum.tools.mcp_host",  # MCP's records and the manager: only once an MCP config file exists
    "xum.workspaces.mcp.manager",
    "xum.workspaces.mcp.config",
    "xum.workspaces.mcp.client",
    "xum.workspaces.mcp.content",
    "xum.context.mcp_context",  # MCP tool specs and the <mcp> section: with servers only
    "xum.tools.mcp_call",
    "xum.tools.tool_catalog_search",
    "xum.tools.mcp_prompt_get",
    "xum.tools.mcp_resource_read",
    "textual",  # the terminal UI: `xum tui` only
    "xum.tui",
]


def test_the_first_request_goes_out_before_what_it_does_not_need(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo", APP_AND_BINARY_FILES)
    probe, out = tmp_path / "probe.py", tmp_path / "loaded.json"
    probe.write_text(PROBE)
    fake_llm.script(fakellm.text("done"))
    done = subprocess.run(
        [sys.executable, str(probe), str(out), "run", "-q", "-m", "sonnet", "hi"],
        cwd=repo,
        env={**os.environ, **env_for(fake_llm)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert out.exists(), "no connection to the model was seen"
    loaded = json.loads(out.read_text())
    assert "xum.engine.agent" in loaded and "xum.llm.lean_http" in loaded  # the probe works
    assert "gc enabled: True" in loaded
    assert [m for m in NOT_BEFORE_THE_FIRST_REQUEST if m in loaded] == []
