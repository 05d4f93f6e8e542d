"""Project trust: repo-controlled automation runs only in projects the user trusted.

What trust gates: the project's `.xum/init`, `.xum/archive`, `.xum/delete`, `.xum/tool_pre`,
`.xum/tool_post` and `.xum/tool_env` (and, as they land, project MCP servers and workflows).
User-level hooks in `$XUM_ROOT` are the user's own and are not gated.

Trust is recorded per project in `$XUM_ROOT/config.json`:

    "projects": {"/home/me/src/app": {"name": "app", "addedAt": ..., "trusted": true,
                                       "trustedAt": 1767225600000}}

A linked git worktree (a xum worktree workspace, say) has no trust of its own: it inherits the
main repository's, found through `git rev-parse --git-common-dir`. Setting
`XUM_DISABLE_PROJECT_AUTOMATION=1` withholds project automation even in trusted projects.
"""

from __future__ import annotations

import os
from pathlib import Path

from xum.runtime import git
from xum.store import registry
from xum.store.registry import ProjectRecord

DISABLE_ENV = "XUM_DISABLE_PROJECT_AUTOMATION"


def trust_root(directory: str | Path) -> Path:
    """The path trust is recorded under for `directory`: the main repository's working tree for
    anything inside a git repository (linked worktrees included), else the directory itself."""
    directory = Path(directory).resolve()
    top = git.toplevel(directory)
    if top is None:
        return directory
    done = git.run_git(
        ["rev-parse", "--path-format=absolute", "--git-common-dir"], top, check=False
    )
    common = Path(done.stdout.strip()) if done.returncode == 0 and done.stdout.strip() else None
    if common is not None and common.name == ".git":
        return common.parent.resolve()
    return top.resolve()  # a bare or separate git dir, or a submodule: its own working tree


def automation_disabled() -> bool:
    return os.environ.get(DISABLE_ENV) == "1"


def is_trusted(project_path: str | Path) -> bool:
    """True when the project (or the main repository of the worktree) is trusted."""
    record = registry.get_project(str(trust_root(project_path)))
    return record is not None and record.trusted


def project_automation_allowed(project_path: str | Path) -> bool:
    return not automation_disabled() and is_trusted(project_path)


def set_trusted(directory: str | Path, trusted: bool = True) -> tuple[ProjectRecord, bool]:
    """Trust (or revoke) the project containing `directory`; registers it if new. Returns the
    project record and whether it was newly registered."""
    return registry.set_project_trust(str(trust_root(directory)), trusted)
