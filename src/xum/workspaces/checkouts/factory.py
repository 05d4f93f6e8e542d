"""Which Checkout a workspace has: the one module that knows every kind of checkout.

`checkout_for(record)` looks a workspace's checkout up, `create_checkout(kind, origin, new)` makes
a new workspace of a kind, `session_checkout(workspace)` is the checkout a session runs in. Each
kind's implementation is imported only when a record of that kind is looked at, so `xum run` on
a local workspace never imports the worktree or SSH machinery.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, get_args

from xum.store import registry
from xum.store.registry import RuntimeName, WorkspaceRecord
from xum.workspaces.checkouts.protocol import Checkout, NewWorkspace, Origin
from xum.workspaces.checkouts.shared import SharedCheckout

if TYPE_CHECKING:
    from xum.engine.agent import WorkspaceInfo


def checkout_for(record: WorkspaceRecord) -> Checkout:
    """The checkout of a workspace."""
    if record.extra.get("scratch") is True and record.parent_id is None:
        from xum.workspaces.checkouts.scratch import ScratchCheckout

        return ScratchCheckout(record)
    checkout = _kind(record.runtime)(record)
    if shares_parent_checkout(record):
        return SharedCheckout(checkout)
    return checkout


def shares_parent_checkout(record: WorkspaceRecord) -> bool:
    """Whether a sub-agent works in its parent's checkout (`isolation: "none"`). The field is
    written with the rest of a child's task fields by `subagents.records.ChildRecord`."""
    return record.parent_id is not None and record.extra.get("task_isolation") == "none"


def create_checkout(kind: RuntimeName, origin: Origin, new: NewWorkspace) -> Checkout:
    """Make a new workspace: its registry record first (which mints the id and the name), then
    its checkout; when the checkout cannot be made, the record is removed again."""
    if kind not in get_args(RuntimeName):
        raise ValueError(f"runtime {kind!r} is not available")
    return _kind(kind).create(origin, new)


def session_checkout(workspace: WorkspaceInfo) -> Checkout:
    """The checkout a session runs in. A session on a workspace the registry does not know (an
    embedded use, a test) gets one made from what the session knows about it."""
    record = registry.get_workspace(workspace.id) or WorkspaceRecord(
        id=workspace.id,
        name=workspace.name,
        project_path=workspace.project_path,
        runtime=workspace.runtime,
        path=workspace.path,
    )
    return checkout_for(record)


class _CheckoutKind(Protocol):
    """A Checkout implementation class: looks a checkout up, or makes a new one."""

    def __call__(self, record: WorkspaceRecord) -> Checkout: ...

    def create(self, origin: Origin, new: NewWorkspace) -> Checkout: ...


def _kind(kind: str) -> _CheckoutKind:
    # Imported here, so that only the kinds in use are ever imported.
    if kind == "worktree":
        from xum.workspaces.checkouts.worktree import WorktreeCheckout

        return WorktreeCheckout
    if kind == "ssh":
        from xum.workspaces.checkouts.ssh import SshCheckout

        return SshCheckout
    if kind == "docker":
        from xum.workspaces.checkouts.container import ContainerCheckout

        return ContainerCheckout
    if kind == "devcontainer":
        from xum.workspaces.checkouts.devcontainer import DevcontainerCheckout

        return DevcontainerCheckout
    # A kind this version does not know (a newer xum wrote the record) is opened the way it
    # always was: as a directory on this machine that xum neither moves nor removes.
    from xum.workspaces.checkouts.local import LocalCheckout

    return LocalCheckout
