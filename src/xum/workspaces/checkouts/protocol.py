"""The Checkout protocol: a workspace's files, and everything that differs between kinds of them.

A workspace runs in one of five kinds of checkout:

* local (`checkouts.local`): the project directory itself, shared with every other local
  workspace of the project. xum never makes, moves or removes it.
* worktree (`checkouts.worktree`): a git worktree of its own under
  `$XUM_ROOT/src/<project>/<name>`, on a branch named after the workspace.
* ssh (`checkouts.ssh`): a snapshot of the project's committed HEAD on a remote host (a git
  repository there when the host has git).
* docker (`checkouts.container`): a git repository at `/src` in a container of its own, made
  from a bundle of the project's committed HEAD.
* devcontainer (`checkouts.devcontainer`): a worktree on this machine, bind-mounted into the
  container the project's devcontainer.json describes (`devcontainer up`).

A sub-agent that works in its parent's checkout (`isolation: "none"`) has a record of the
parent's kind pointing at the parent's directory; `checkout_for` wraps it in a `SharedCheckout` (`checkouts.shared`),
which opens that checkout but never renames or removes it (it is the parent's).

Each implementation is the only code that knows its kind: the lifecycle, sub-agents, session
wiring and the server ask the `Checkout` (its facts, or one of its operations) instead of
comparing `record.runtime`. Get one with `checkouts.factory.checkout_for(record)`, make a new
workspace with `create_checkout(kind, origin, new)` (the factory is the one module that knows
every kind; this one knows none). The implementations import what only their kind needs
(git worktrees, ssh) when an operation needs it: looking a checkout up stays cheap, and `xum run`
on a local workspace never imports the other kinds' machinery.

Operations are synchronous (git and ssh subprocesses): async callers run them in a thread.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, NamedTuple, Protocol, runtime_checkable

from xum.core.errors import XumError
from xum.store.registry import RuntimeName, WorkspaceRecord

if TYPE_CHECKING:
    from xum.runtime.base import Runtime

# What deleting a workspace does to its workspace branch (worktrees): `merged` deletes it only
# when git considers it merged into the project's checked-out branch, `always` deletes it,
# `never` keeps it.
BranchPolicy = Literal["merged", "always", "never"]

# The things deleting a workspace removes: its checkout's (worktree, remote-checkout, container,
# branch),
# xum's local state (see `state.StateKind`), and its registry record.
RemovalKind = Literal[
    "session-log",
    "scratch-dir",
    "worktree",
    "remote-checkout",
    "container",
    "branch",
    "plan-file",
    "init-log",
    "record",
    "chat-folder",  # a scratch chat's own folder (`checkouts.scratch`)
]


class InvalidNameError(XumError):
    code = "invalid_name"


class DirtyWorkspaceError(XumError):
    """Delete refused: the checkout has uncommitted changes. `files` names them."""

    code = "workspace_dirty"

    def __init__(self, name: str, files: list[str]) -> None:
        shown = ", ".join(files[:20]) + (f" and {len(files) - 20} more" if len(files) > 20 else "")
        super().__init__(
            f"workspace '{name}' has uncommitted changes: {shown}",
            hint="commit or discard them first, or delete with force to lose them",
        )
        self.files = files


@dataclass(frozen=True)
class Origin:
    """Where a new workspace's checkout comes from."""

    directory: Path  # the directory the user pointed at (a local workspace runs in it)
    project: Path  # its project: the git toplevel, or the directory itself
    host: str | None = None  # the SSH host (ssh)
    image: str | None = None  # the container image (docker)
    # The named devcontainer config (devcontainer; None: the unnamed or only one).
    devcontainer_config: str | None = None
    base: str | None = None  # the commit a worktree branches from (default: the project's HEAD)
    # An existing branch a worktree checks out instead of making its own; the workspace leaves
    # it in place when it is deleted.
    branch: str | None = None


@dataclass(frozen=True)
class NewWorkspace:
    """The registry side of a workspace about to be made: its name and its other fields."""

    name_hint: str  # a `<slug>-<suffix>` name is made from it ...
    title: str = ""
    name: str | None = None  # ... unless an exact name is given (refused when it is taken)
    # Any other record fields (model, thinking, agent, parent_id, extra, ...).
    fields: Mapping[str, Any] = field(default_factory=dict)


class HookRoots(NamedTuple):
    """Where a workspace's project hooks (`.xum/<name>`) are looked for."""

    checkout: str  # first here: the directory holding the checkout's `.xum/`
    fallback: str | None  # then here (a local copy of a hook the checkout lacks), if anywhere


@dataclass(frozen=True, slots=True)
class RemovalItem:
    """One thing deleting a workspace removes."""

    kind: RemovalKind
    path: str | None = None
    name: str | None = None
    detail: str | None = None


@dataclass
class Removal:
    """What removing (a workspace's checkout, or the whole workspace) removes and keeps.

    The same type says what will happen (the deletion preview, `Checkout.removal`) and what did
    (`Checkout.remove`, the lifecycle's DeleteReport), built by the same code of each kind."""

    removes: list[RemovalItem] = field(default_factory=list)
    keeps: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)  # said before deleting (the preview)
    dirty: list[str] = field(default_factory=list)  # uncommitted files found, that would be lost
    branch: str | None = None  # the workspace branch considered (worktrees)
    branch_deleted: bool = False
    notes: list[str] = field(default_factory=list)  # what went otherwise than planned


class Checkout(Protocol):
    """A workspace's checkout. Implementations: `LocalCheckout`, `WorktreeCheckout`,
    `SshCheckout`, `ContainerCheckout`, and `SharedCheckout` around any of them."""

    @property
    def record(self) -> WorkspaceRecord:
        """The workspace it belongs to (as it was when the checkout was looked up)."""
        ...

    # Facts other code decides on --------------------------------------------------------------

    @property
    def kind(self) -> RuntimeName: ...

    @property
    def on_this_machine(self) -> bool:
        """Whether its files are a directory on this machine (local, worktree), which xum can
        read and run git in directly; otherwise they are on a remote host (ssh)."""
        ...

    @property
    def shares_project_dir(self) -> bool:
        """Whether it is the project directory itself (local): every other such workspace of the
        project edits the very same files."""
        ...

    @property
    def forks_children(self) -> bool:
        """Whether a sub-agent with `isolation: "fork"` can get a worktree branched off it."""
        ...

    def hook_roots(self) -> HookRoots:
        """Where its project hooks are found."""
        ...

    def is_git(self, known: bool | None = None) -> bool:
        """Whether the checkout is a git repository. `known`: what the caller found already for
        a checkout on this machine (saves a git call); a remote checkout's record says."""
        ...

    def fork_point(self) -> str | None:
        """The commit an isolated sub-agent fork branches from: HEAD of a git checkout on this
        machine; None without commits, or for a remote checkout."""
        ...

    # Operations --------------------------------------------------------------------------------

    def open_runtime(self) -> Runtime:
        """The runtime that runs tools in it (the caller closes it)."""
        ...

    def fork(self, new: NewWorkspace) -> Checkout:
        """A new workspace of the same kind from this one (`/fork`): committed work only."""
        ...

    def share(self, new: NewWorkspace, runtime: Runtime) -> Checkout:
        """A new workspace that works in this very checkout (a sub-agent with `isolation:
        "none"`), recorded so that it can be opened again later. `runtime`: the one the sharing
        session has open (it knows the host of a checkout the registry does not)."""
        ...

    def rename(self, new_name: str) -> WorkspaceRecord:
        """Rename the workspace: its record and whatever of the checkout carries the name (a
        worktree's directory and branch, a remote directory)."""
        ...

    def dirty_files(self) -> list[str] | None:
        """Uncommitted files (untracked ones included) that removing it would lose; [] when
        none; None when it cannot be told."""
        ...

    def removal(self, policy: BranchPolicy) -> Removal:
        """What `remove` would remove and keep, with warnings: the deletion preview. Changes
        nothing, and does not reach remote hosts."""
        ...

    def remove(self, *, force: bool, policy: BranchPolicy) -> Removal:
        """Remove the checkout (a local one is never touched). Uncommitted changes refuse it
        with DirtyWorkspaceError unless `force`; `policy` decides the workspace branch. Returns
        what was removed and kept."""
        ...

    def discard(self) -> None:
        """Remove a checkout nobody needs any more (a sub-agent's that never started, or whose
        removal failed halfway), as far as it goes: never raises, keeps no branch."""
        ...


@runtime_checkable
class ForksOwnKind(Protocol):
    """A checkout whose sub-agents with `isolation: "fork"` get a workspace of its own kind (a
    container of their own: Docker, Dev Container) rather than a plain worktree of the project,
    whose commands would run on this machine."""

    def fork_child(self, new: NewWorkspace, base: str) -> Checkout:
        """The child's workspace, its checkout starting at `base` (the parent's HEAD)."""
        ...


@runtime_checkable
class Suspendable(Protocol):
    """A checkout with something running that archiving stops and unarchiving starts again (a
    Docker workspace's container). Other kinds have nothing to stop and do not implement it."""

    def suspend(self) -> None: ...

    def resume(self) -> None: ...
