"""Skills on an SSH workspace, against a real sshd on 127.0.0.1 (tests/sshd.py): project skills
are found on the host, and the skill tools write and delete them there, not in the local
checkout."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.sshd import Sshd, ssh_host, sshd  # noqa: F401 - fixtures
from tests.support.hooks import sh_git
from xum.context.workspace import WorkspaceContext
from xum.workspaces import lifecycle

pytestmark = pytest.mark.repo(
    name="proj",
    files={
        "app.py": "x = 1\n",
        ".xum/skills/shipped/SKILL.md": "---\nname: shipped\ndescription: in git\n---\nShip.\n",
    },
    message="first",
)

NEW = "---\nname: remote-one\ndescription: written on the host\n---\nOn the host.\n"


async def test_project_skills_are_read_and_written_on_the_host(
    repo: Path,
    ssh_host: Sshd,  # noqa: F811
) -> None:
    created = await lifecycle.create_workspace(
        repo, f"ssh {ssh_host.alias}", name_hint="skills", run_init=False
    )
    try:
        record = created.record
        remote = Path(record.path)
        assert remote.is_relative_to(ssh_host.remote_home)
        context = WorkspaceContext.for_workspace(
            created.runtime, project_path=str(repo), workspace_name=record.name, is_git=True
        )
        skills = context.skill_access()
        listed = {s.name: s for s in await skills.list_skills()}
        assert listed["shipped"].scope == "project" and listed["shipped"].writable

        change = await skills.write_skill("project", "remote-one", None, NEW)
        assert change.created and change.path == f"{record.path}/.xum/skills/remote-one/SKILL.md"
        assert (remote / ".xum/skills/remote-one/SKILL.md").read_text() == NEW
        assert not (repo / ".xum/skills/remote-one").exists()
        assert await skills.skill_body("remote-one") == "On the host."

        await skills.delete_skill("project", "remote-one", "skill", None)
        assert not (remote / ".xum/skills/remote-one").exists()
        assert "remote-one" not in await skills.skill_names()
    finally:
        await created.runtime.close()
    sh_git(repo, "status")  # the local checkout is untouched by any of it
    assert not (repo / ".xum/skills/remote-one").exists()
