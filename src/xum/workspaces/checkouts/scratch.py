"""Scratch chats: a workspace with no project, working in a private folder xum manages
(docs/workspaces.md, "Scratch chats").

The folder is `$XUM_ROOT/chats/<workspace-id>` (the docs' `~/.xum/scratch/<id>`: in xum,
`$XUM_ROOT/scratch/<id>` is already every workspace's `$XUM_SCRATCH_DIR`, so chats have their own
directory). The record is a `local` one whose project is `$XUM_ROOT/chats`, which is never
registered as a project, and whose `scratch` flag (config.json `scratch: true`) makes
`checkout_for` return this class. Nothing is a git repository: no branch, no git status, no
review; a sub-agent works in the same folder (`isolation: "none"`), never in a worktree; a chat
cannot be forked. Deleting the chat removes its folder, unless another workspace (a sub-agent
that outlived it) still works there.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from xum.core.errors import XumError
from xum.core.paths import ensure_private_dir, xum_root
from xum.store import registry
from xum.store.registry import WorkspaceRecord
from xum.workspaces.checkouts.local import LocalCheckout
from xum.workspaces.checkouts.protocol import (
    BranchPolicy,
    Checkout,
    HookRoots,
    NewWorkspace,
    Origin,
    Removal,
    RemovalItem,
)
from xum.workspaces.state import scratch_dir

SCRATCH_KEY = "scratch"  # the record's flag (`extra`), `scratch: true` in config.json
NAME_HINT = "chat"


class ScratchChatError(XumError):
    code = "invalid_request"


def chats_root() -> Path:
    """Where every scratch chat's folder lives; also the chats' stand-in project path."""
    return xum_root() / "chats"


def is_scratch(record: WorkspaceRecord) -> bool:
    """A scratch chat's own record (its sub-agents' records are ordinary local ones)."""
    return record.extra.get(SCRATCH_KEY) is True and record.parent_id is None


def create_scratch_record(new: NewWorkspace) -> WorkspaceRecord:
    """Record a new chat and make its folder (and its scratch dir)."""
    root = chats_root()
    ensure_private_dir(root)
    fields = dict(new.fields)
    extra = dict(fields.pop("extra", None) or {})
    extra[SCRATCH_KEY] = True
    record = registry.create_workspace(
        project_path=str(root),
        runtime="local",
        name_hint=new.name_hint or NAME_HINT,
        title=new.title,
        exact_name=new.name,
        extra=extra,
        **fields,
    )
    # The id is minted by the registry, and the folder is named after it: a second write.
    folder = root / record.id
    ensure_private_dir(folder)
    ensure_private_dir(scratch_dir(record.id))
    return registry.update_workspace(record.id, path=str(folder))


class ScratchCheckout(LocalCheckout):
    """A chat's private folder (see the module docstring)."""

    shares_project_dir = False  # each chat has a folder of its own
    forks_children = False  # no git: sub-agents work in the same folder

    @classmethod
    def create(cls, origin: Origin, new: NewWorkspace) -> ScratchCheckout:
        return cls(create_scratch_record(new))

    def hook_roots(self) -> HookRoots:
        # The agent writes this folder: its `.xum/` is never a source of hooks.
        return HookRoots(str(chats_root()), None)

    def is_git(self, known: bool | None = None) -> bool:
        return False

    def fork_point(self) -> str | None:
        return None

    def fork(self, new: NewWorkspace) -> Checkout:
        raise ScratchChatError(
            "a scratch chat cannot be forked in this version",
            hint="start a new scratch chat instead",
        )

    def removal(self, policy: BranchPolicy) -> Removal:
        path = self.record.path
        if not _managed(path):
            # A record edited by hand: xum removes only folders it made.
            return Removal(keeps=[f"{path} (not a chat folder under {chats_root()})"])
        users = _other_users(self.record)
        if users:
            return Removal(keeps=[f"the chat folder {path} (used by {', '.join(users)})"])
        return Removal(removes=[RemovalItem(kind="chat-folder", path=path)])

    def remove(self, *, force: bool, policy: BranchPolicy) -> Removal:
        plan = self.removal(policy)
        if plan.removes:
            shutil.rmtree(self.record.path, ignore_errors=True)
        return plan

    def discard(self) -> None:
        if _managed(self.record.path) and not _other_users(self.record):
            shutil.rmtree(self.record.path, ignore_errors=True)


def _managed(path: str) -> bool:
    """Whether `path` is a folder directly under the chats root (what xum made)."""
    folder = Path(path)
    return folder.is_absolute() and folder.resolve().parent == chats_root().resolve()


def _other_users(record: WorkspaceRecord) -> list[str]:
    """The names of the other workspaces that work in this chat's folder."""
    return [
        other.name
        for other in registry.list_workspaces()
        if other.id != record.id and other.path == record.path
    ]
