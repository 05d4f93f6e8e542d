"""What the checkouts on this machine share, and the checkout of a workspace that works in
another one's (`SharedCheckout`, a sub-agent with `isolation: "none"`)."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from xum.core.paths import ensure_private_dir
from xum.runtime import git
from xum.store import registry
from xum.store.registry import RuntimeName, WorkspaceRecord
from xum.workspaces.checkouts.protocol import (
    BranchPolicy,
    Checkout,
    HookRoots,
    NewWorkspace,
    Removal,
)
from xum.workspaces.state import scratch_dir

if TYPE_CHECKING:
    from xum.runtime.base import Runtime


def project_root(directory: Path) -> Path:
    """The project a directory belongs to: its git toplevel, or the directory itself."""
    directory = directory.resolve()
    return git.toplevel(directory) or directory


def local_is_git(path: str, known: bool | None) -> bool:
    return known if known is not None else git.toplevel(Path(path)) is not None


def local_fork_point(path: str) -> str | None:
    return git.head_commit(path)


def share_record(
    checkout: Checkout,
    new: NewWorkspace,
    of_kind: Callable[[WorkspaceRecord], Checkout],
    *,
    host: str | None = None,
    extra: Mapping[str, Any] | None = None,
) -> SharedCheckout:
    """A record of `checkout`'s kind in its very directory, for a workspace that shares it;
    `of_kind`: that kind's implementation (the class of `checkout`); `host` and `extra` (merged
    into the new record's `extra`): what it takes to open it again."""
    fields = dict(new.fields)
    # One checkout, one set of servers: the child uses its parent's ports rather than a block
    # of its own.
    fields["ports"] = checkout.record.ports
    if host is not None:
        fields["host"] = host
    if extra:
        fields["extra"] = {**fields.get("extra", {}), **extra}
    path = checkout.record.path
    record = registry.create_workspace(
        project_path=checkout.record.project_path,
        runtime=checkout.kind,
        name_hint=new.name_hint,
        path_for=lambda _name: path,
        title=new.title,
        exact_name=new.name,
        **fields,
    )
    ensure_private_dir(scratch_dir(record.id))
    return SharedCheckout(of_kind(record))


class SharedCheckout:
    """The checkout of a workspace that works in another one's (a sub-agent with `isolation:
    "none"`): opened, looked in and forked like that one, but never renamed or removed through
    this workspace: the checkout belongs to the workspace that made it."""

    def __init__(self, inner: Checkout) -> None:
        self.inner = inner

    @property
    def record(self) -> WorkspaceRecord:
        return self.inner.record

    @property
    def kind(self) -> RuntimeName:
        return self.inner.kind

    @property
    def on_this_machine(self) -> bool:
        return self.inner.on_this_machine

    @property
    def shares_project_dir(self) -> bool:
        return self.inner.shares_project_dir

    @property
    def forks_children(self) -> bool:
        return self.inner.forks_children

    def hook_roots(self) -> HookRoots:
        return self.inner.hook_roots()

    def is_git(self, known: bool | None = None) -> bool:
        return self.inner.is_git(known)

    def fork_point(self) -> str | None:
        return self.inner.fork_point()

    def open_runtime(self) -> Runtime:
        return self.inner.open_runtime()

    def fork(self, new: NewWorkspace) -> Checkout:
        return self.inner.fork(new)

    def share(self, new: NewWorkspace, runtime: Runtime) -> Checkout:
        return self.inner.share(new, runtime)

    def rename(self, new_name: str) -> WorkspaceRecord:
        return registry.rename_workspace(self.record.id, new_name)

    def dirty_files(self) -> list[str] | None:
        return []  # removing this workspace loses none of the checkout's files

    def removal(self, policy: BranchPolicy) -> Removal:
        return Removal(keeps=[f"the checkout {self.record.path} (shared with its parent)"])

    def remove(self, *, force: bool, policy: BranchPolicy) -> Removal:
        return self.removal(policy)

    def discard(self) -> None:
        return None
