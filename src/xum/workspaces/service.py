"""Where a directory's project is; creating a workspace and opening its runtime.

Every front-end (the CLI, the server) goes through here or through `lifecycle`, so a workspace
is made the same way wherever it is asked for: by its kind's Checkout (`checkouts/`), a
registry record first (which mints the id and name), then its checkout; if the checkout cannot
be made, the record is removed again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NamedTuple

from xum.runtime import git
from xum.runtime.base import Runtime
from xum.store.registry import RuntimeName, WorkspaceRecord
from xum.workspaces.checkouts.factory import checkout_for, create_checkout
from xum.workspaces.checkouts.protocol import NewWorkspace, Origin
from xum.workspaces.checkouts.shared import project_root
from xum.workspaces.safety.trust import trust_root_of


class ProjectPaths(NamedTuple):
    """Where a directory's project is, from one git call."""

    root: Path  # the project: its git toplevel, or the directory itself
    trust_root: Path  # where its trust and secrets are recorded (see `xum.workspaces.safety.trust`)
    is_git: bool


def project_paths(directory: Path, query: git.WorkTreeQuery | None = None) -> ProjectPaths:
    """`project_root`, `trust_root` and whether it is a git work tree. `query`: the git call,
    started earlier for `directory` (see `git.WorkTreeQuery`)."""
    directory = directory.resolve()
    tree = git.work_tree(directory) if query is None else query.result()
    if tree is None:
        return ProjectPaths(directory, directory, False)
    return ProjectPaths(tree[0], trust_root_of(*tree), True)


def create_workspace(
    directory: Path,
    runtime: RuntimeName,
    *,
    name_hint: str,
    title: str = "",
    name: str | None = None,
    base: str | None = None,
    project: Path | None = None,
    host: str | None = None,
    **fields: Any,
) -> tuple[WorkspaceRecord, Runtime]:
    """Create a workspace of `directory`'s project and open its runtime.

    `name`: an exact name (refused when the project already has it) instead of a generated
    `<slug>-<suffix>`. `base`: the commit a worktree branches from (default: the project's HEAD).
    `host`: an SSH workspace's. A worktree gets the project's `.xumignore` files copied in.
    Hooks are not run here: see `xum.workspaces.lifecycle.create_workspace`, which also starts
    the init hook. `project`: `project_root(directory)`, when the caller knows it already.
    """
    project = project or project_root(directory)
    checkout = create_checkout(
        runtime,
        Origin(directory, project, host=host, base=base),
        NewWorkspace(name_hint, title, name, fields),
    )
    return checkout.record, checkout.open_runtime()


def open_runtime(record: WorkspaceRecord) -> Runtime:
    """The runtime of a workspace (its checkout's, see `Checkout.open_runtime`)."""
    return checkout_for(record).open_runtime()
