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
    tree = git.work_tree(directory)
    return directory if tree is None else trust_root_of(*tree)


def trust_root_of(toplevel: Path, common_dir: Path) -> Path:
    """`trust_root` from what `git.work_tree` said (a caller that already asked git)."""
    if common_dir.name == ".git":
        return common_dir.parent.resolve()
    return toplevel.resolve()  # a bare or separate git dir, or a submodule: its own working tree


def automation_disabled() -> bool:
    return os.environ.get(DISABLE_ENV) == "1"


def is_trusted(project_path: str | Path, *, root: Path | None = None) -> bool:
    """True when the project (or the main repository of the worktree) is trusted. `root`: its
    `trust_root`, when the caller knows it already (saves a git call)."""
    record = registry.get_project(str(root or trust_root(project_path)))
    return record is not None and record.trusted


def project_automation_allowed(project_path: str | Path, *, root: Path | None = None) -> bool:
    return not automation_disabled() and is_trusted(project_path, root=root)


def set_trusted(directory: str | Path, trusted: bool = True) -> tuple[ProjectRecord, bool]:
    """Trust (or revoke) the project containing `directory`; registers it if new. Returns the
    project record and whether it was newly registered."""
    return registry.set_project_trust(str(trust_root(directory)), trusted)
