"""`xum run -r devcontainer` end to end: the real CLI in a subprocess against the fake LLM
server, the real Dev Container CLI (`devcontainer up`) driving a real container engine (podman
here) with a config that names the local test image. Bash runs in the container in the
workspace folder `/workspaces/<worktree>`, an edit by the file tools is the worktree's on this
machine and is seen inside, git works inside (the project's git directory is mounted where
the worktree's `.git` says) and the review diff shows the edit, archiving stops the container and unarchiving starts it, deleting
removes the container and the worktree."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from tests.e2e.cli import env_for, events, run_xum
from tests.gitrepo import make_repo
from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from tests.support.devcontainer_cli import devcontainer_json, devcontainer_tool  # noqa: F401
from xum.store import registry
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.workspaces import lifecycle
from xum.workspaces.checkouts.protocol import DirtyWorkspaceError
from xum.workspaces.review import review

pytestmark = pytest.mark.slow


def test_run_in_a_dev_container_runs_bash_inside_and_delete_removes_it(
    fake_llm: FakeLLM,
    tmp_path: Path,
    container_engine: Engine,  # noqa: F811
    devcontainer_tool: str,  # noqa: F811
) -> None:
    project = make_repo(
        tmp_path / "proj",
        {
            "app.py": "print('hi')\n",
            ".devcontainer/devcontainer.json": devcontainer_json(container_engine.image),
        },
    )
    fake_llm.script(
        fakellm.tool_call(
            "bash",
            {
                "script": '. /etc/os-release; echo "os=$ID"; echo "rt=$XUM_RUNTIME"; pwd; '
                'echo "key=${ANTHROPIC_API_KEY:-none}"; ls; echo "branch=$(git branch --show-current)"',
                "display_name": "look around",
            },
        ),
        fakellm.tool_call(
            "file_edit_replace_string",
            {"path": "app.py", "old_string": "'hi'", "new_string": "'devcontainer'"},
        ),
        fakellm.tool_call("bash", {"script": "cat app.py", "display_name": "see the edit"}),
        fakellm.text("edited in the dev container"),
    )
    result = run_xum(
        "run", "--json", "-r", "devcontainer", "work in the dev container",
        cwd=project, env=env_for(fake_llm), timeout=300,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    results = [e for e in events(result.stdout) if e["type"] == "tool-result"]
    assert [r["is_error"] for r in results] == [False, False, False], results

    (record,) = registry.list_workspaces()
    worktree = Path(record.path)
    assert record.runtime == "devcontainer"
    assert worktree.is_dir() and worktree.name == record.name  # the worktree is on this machine
    folder = f"/workspaces/{worktree.name}"
    assert record.extra["devcontainer_folder"] == folder
    assert record.extra["devcontainer_config"] == ".devcontainer/devcontainer.json"
    lines = results[0]["output"].splitlines()
    assert "os=xum-test" in lines and "rt=devcontainer" in lines  # the image's, not this one's
    assert folder in lines  # the working directory is the container's path of the worktree
    assert "key=none" in lines  # xum's provider key stays out of the container
    assert "app.py" in lines
    assert f"branch={record.name}" in lines  # git works in the container, on the worktree
    # The file tool edited the worktree on this machine; the container sees the same file.
    assert (worktree / "app.py").read_text() == "print('devcontainer')\n"
    assert "print('devcontainer')" in results[2]["output"]
    assert (project / "app.py").read_text() == "print('hi')\n"  # the project is untouched

    # The review pane's git runs through the runtime too: the edit is the workspace's change.
    changes = asyncio.run(review(record))
    assert changes.branch == record.name
    assert [f.path for f in changes.files] == ["app.py"] and "'devcontainer'" in changes.diff

    container = str(record.extra["container"])
    assert container_engine.state(container) == "running"
    label = container_engine.run(
        "inspect", "--format", '{{index .Config.Labels "xum.workspace"}}', container
    )
    assert label.stdout.strip() == record.id

    asyncio.run(lifecycle.archive_workspace(record.id))
    assert container_engine.state(container) in ("exited", "stopped")
    asyncio.run(lifecycle.unarchive_workspace(record.id))
    assert container_engine.state(container) == "running"

    with pytest.raises(DirtyWorkspaceError):  # app.py was edited and not committed
        asyncio.run(lifecycle.delete_workspace(record.id))
    assert container_engine.state(container) == "running"
    asyncio.run(lifecycle.delete_workspace(record.id, force=True))
    assert container_engine.state(container) is None
    assert not worktree.exists()
    assert registry.list_workspaces() == []


def test_a_project_without_devcontainer_json_is_refused_before_anything_is_made(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    project = make_repo(tmp_path / "plain")
    result = run_xum(
        "run", "-r", "devcontainer", "hello", cwd=project, env=env_for(fake_llm)
    )  # fmt: skip
    assert result.returncode != 0
    assert "no devcontainer.json" in result.stderr
    assert registry.list_workspaces() == []
