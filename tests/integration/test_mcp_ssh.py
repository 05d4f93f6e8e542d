"""stdio MCP servers of an SSH workspace run on the host, against the real loopback sshd
(tests/sshd.py). The server script is copied into the remote home first, and the test proves it
ran there: its working directory is the remote checkout, it got the project's secret, and no
process on this machine (the "host" is this machine too) ever had the secret in its argv."""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

import pytest

from tests.mcp.support import SERVER, write_config
from tests.sshd import Sshd, ssh_host, sshd  # noqa: F401 - fixtures
from xum.store.secrets import set_project_secret
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.opening import open_session

pytestmark = pytest.mark.repo(name="proj", files={"app.py": "x = 1\n"}, message="first")

SECRET = "sk-mcp-remote-5f3a9c1d7e"


def argv_holding(text: str) -> list[int]:
    """The pids of this machine's processes whose command line contains `text`."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as handle:
                if text.encode() in handle.read():
                    found.append(int(entry))
        except OSError:  # the process ended meanwhile
            continue
    return found


async def test_a_stdio_server_runs_on_the_host_with_the_project_secrets(
    repo: Path,
    xum_root: Path,
    fake_llm: FakeLLM,
    ssh_host: Sshd,  # noqa: F811
) -> None:
    remote_script = ssh_host.remote_home / "mcp-test-server.py"
    shutil.copy(SERVER, remote_script)
    set_project_secret(str(repo), "TEST_SECRET", SECRET)
    # The command names the copy on the host, relative to the remote HOME.
    write_config(
        xum_root / "mcp.jsonc",
        {"t": f'{sys.executable} "$HOME/mcp-test-server.py"'},
        toolSearch=False,
    )
    fake_llm.script(fakellm.tool_call("mcp__t__whoami", {}), fakellm.text("done"))
    async with open_session(
        repo, fake_llm, name_hint="mcpssh", runtime=f"ssh {ssh_host.alias}"
    ) as (session, events):
        assert session.record.runtime == "ssh"
        await session.agent.run_turn("who are you")
        (result,) = [e for e in events if e["type"] == "tool-result"]
        assert not result["is_error"], result["output"]
        # The secret reached the server, masked on its way back.
        assert f"cwd={session.record.path} " in result["output"]
        assert result["output"].endswith("secret=[secret:TEST_SECRET]")
        assert not [e for e in events if e.get("kind") == "mcp-unsupported-runtime"]
        assert argv_holding(SECRET) == []
        assert session.mcp is not None
        assert {s.name: s.status for s in session.mcp.states()} == {"t": "ready"}
    assert Path(session.record.path).is_relative_to(ssh_host.remote_home)
