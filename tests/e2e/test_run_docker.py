"""`xum run -r "docker <image>"` end to end: the real CLI in a subprocess against the fake LLM
server, a real container engine (podman here) and a test image built from this machine's
binaries. Bash runs in the container, the file tools edit its checkout, the review diff reads
it, and deleting the workspace removes the container."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.e2e.cli import env_for, events, run_xum
from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from tests.support.ports import free_block
from xum.store import registry
from xum.store.config import update_config
from xum.store.secrets import set_project_secret
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.workspaces import lifecycle
from xum.workspaces.checkouts.protocol import DirtyWorkspaceError
from xum.workspaces.review import review

pytestmark = [pytest.mark.slow, pytest.mark.repo(untracked={"uncommitted.txt": "stays here\n"})]


def test_run_in_a_container_runs_bash_and_edits_there_and_delete_removes_it(
    fake_llm: FakeLLM,
    repo: Path,
    container_engine: Engine,  # noqa: F811
) -> None:
    set_project_secret(str(repo), "API_TOKEN", "tok-in-the-container-123")
    base = free_block()
    update_config(lambda config: config.__setitem__("ports", {"base": base, "size": 10}))
    fake_llm.script(
        fakellm.tool_call(
            "bash",
            {
                "script": '. /etc/os-release; echo "os=$ID"; echo "rt=$XUM_RUNTIME"; pwd; '
                'git branch --show-current; ls; echo "key=${ANTHROPIC_API_KEY:-none}"; '
                'echo "token=$API_TOKEN"; echo made > made.txt; '
                'touch "$XUM_SCRATCH_DIR/note" && echo "scratch=$XUM_SCRATCH_DIR"; '
                'echo "port=$XUM_PORT"',
                "display_name": "look around",
            },
        ),
        fakellm.tool_call(
            "file_edit_replace_string",
            {"path": "app.py", "old_string": "'hi'", "new_string": "'container'"},
        ),
        fakellm.tool_call("file_read", {"path": "app.py"}),
        fakellm.text("edited in the container"),
    )
    result = run_xum(
        "run", "--json", "-r", f"docker {container_engine.image}", "work in a container",
        cwd=repo, env=env_for(fake_llm),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    results = [e for e in events(result.stdout) if e["type"] == "tool-result"]
    assert [r["is_error"] for r in results] == [False, False, False], results
    bash_out = results[0]["output"]
    assert "os=xum-test" in bash_out and "rt=docker" in bash_out
    (record,) = registry.list_workspaces()
    assert record.runtime == "docker" and record.path == "/src"
    lines = bash_out.splitlines()
    assert lines[2:4] == ["/src", record.name]  # the checkout, on the workspace's branch
    assert "app.py" in lines and "uncommitted.txt" not in lines  # the committed HEAD only
    assert "key=none" in bash_out  # xum's provider key stays out of the container
    assert "token=[secret:API_TOKEN]" in bash_out  # the project's secrets go in
    assert f"scratch=/tmp/xum-scratch/{record.id}" in bash_out
    assert "'container'" in results[2]["output"]
    assert (repo / "app.py").read_text().endswith("'hi'\n")  # the project is untouched

    name = record.extra["container"]
    assert container_engine.state(name) == "running"
    # The workspace's port block is the container's, published on this machine's loopback.
    assert record.ports is not None and f"port={record.ports.first}" in bash_out
    assert record.extra["container_ports_published"] is True
    published = container_engine.run("port", name, f"{record.ports.first}/tcp")
    assert published.stdout.strip() == f"127.0.0.1:{record.ports.first}"
    done = container_engine.run(
        "inspect", "--format", '{{index .Config.Labels "xum.workspace"}}', name
    )
    assert done.stdout.strip() == record.id

    changes = asyncio.run(review(record))
    assert changes.branch == record.name
    assert changes.base is not None and changes.base.ref == "origin/main"  # where it started
    assert {f.path for f in changes.files} == {"app.py", "made.txt"}
    assert "+" in changes.diff and "'container'" in changes.diff

    with pytest.raises(DirtyWorkspaceError):
        asyncio.run(lifecycle.delete_workspace(record.id))
    asyncio.run(lifecycle.delete_workspace(record.id, force=True))
    assert container_engine.state(name) is None
