"""An SSH workspace's port block reaches the host: its init hook and a bash command of a session
run there see `XUM_PORT` and `XUM_PORTS`, against a real sshd on 127.0.0.1 (tests/sshd.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sshd import Sshd, ssh_host, sshd  # noqa: F401 - fixtures
from tests.support.hooks import hook, sh_git
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.opening import open_session
from xum.workspaces import lifecycle
from xum.workspaces.safety.trust import set_trusted

pytestmark = pytest.mark.repo(name="proj", files={"app.py": "x = 1\n"}, message="first")


async def test_the_host_sees_the_block(
    repo: Path,
    fake_llm: FakeLLM,
    ssh_host: Sshd,  # noqa: F811
) -> None:
    hook(repo, "init", '#!/bin/sh\necho "$XUM_PORT $XUM_PORTS" > init-ports\n')
    sh_git(repo, "add", ".")
    sh_git(repo, "commit", "-qm", "hooks")
    set_trusted(repo)
    created = await lifecycle.create_workspace(repo, f"ssh {ssh_host.alias}", name_hint="first")
    assert created.init is not None and await created.init.wait() == "succeeded"
    await created.runtime.close()
    assert created.record.ports is not None
    first = created.record.ports
    # Written by the hook in the remote checkout (the "host" is this machine).
    assert (
        Path(created.record.path) / "init-ports"
    ).read_text() == f"{first.first} {first.label}\n"

    fake_llm.script(
        fakellm.tool_call("bash", {"script": "echo ports=$XUM_PORTS", "display_name": "p"}),
        fakellm.text("done"),
    )
    async with open_session(
        repo, fake_llm, name_hint="second", runtime=f"ssh {ssh_host.alias}"
    ) as (session, events):
        await session.agent.run_turn("which ports?")
        second = session.record.ports
    assert second is not None and not second.overlaps(first)
    (result,) = [e for e in events if e["type"] == "tool-result"]
    assert result["output"].startswith(f"ports={second.label}\n")
