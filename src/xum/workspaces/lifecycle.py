"""The workspace lifecycle: create, list, rename, fork, archive, unarchive, delete.

This is the API every front-end calls (the CLI, the server's REST routes). Callers never build
ids or names: each operation that makes or changes a workspace returns its record. Operations
that would pull a checkout from under a running turn (rename, archive, delete) take the
workspace's writer lock for their duration and are refused at once while a turn runs, in this
process or in any other sharing `$XUM_ROOT` (see `busy.py`). Registry writes are locked and
atomic (`xum.store.config`), so concurrent processes never lose each other's records.

Hooks: creation starts `.xum/init` in the background (see `init_hook.py`); archive and delete
run `.xum/archive` / `.xum/delete` first (60 s, failures logged, never blocking), in trusted
projects only.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from xum.core.clock import now_ms
from xum.core.errors import XumError
from xum.core.paths import ensure_private_dir
from xum.runtime import git
from xum.runtime.base import Runtime
from xum.store import frame_types as ev
from xum.store import registry
from xum.store.registry import WorkspaceRecord
from xum.store.secrets import load_project_secrets
from xum.store.sessionlog import SessionLog
from xum.workspaces import hooks, service
from xum.workspaces.busy import hold_workspace
from xum.workspaces.checkouts.factory import checkout_for, create_checkout
from xum.workspaces.checkouts.protocol import (
    BranchPolicy,
    Checkout,
    DirtyWorkspaceError,
    InvalidNameError,
    NewWorkspace,
    Origin,
    Removal,
    RemovalItem,
    Suspendable,
)
from xum.workspaces.env import lifecycle_env
from xum.workspaces.init_hook import INIT_TIMEOUT_S, InitHookRun, LineSink, start_init_hook
from xum.workspaces.runtime_spec import origin_target, parse_runtime
from xum.workspaces.safety.trust import project_automation_allowed
from xum.workspaces.state import local_state, plan_path, remove_local_state
from xum.workspaces.wiring import project_secrets

# What differs between local, worktree and SSH workspaces is their Checkout's (`checkouts/`); a
# worktree's or an SSH host's machinery is imported by the checkout that needs it.

LIFECYCLE_HOOK_TIMEOUT_S = 60.0
# Compiled (by `re`'s cache) when a name is checked or a workspace forked, not at start-up.
_NAME_RE = r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}"
_SUFFIX_RE = r"-[a-z2-9]{4}$"


class WorkspaceNotFoundError(XumError):
    code = "workspace_not_found"


@dataclass(eq=False)
class CreatedWorkspace:
    """A new workspace, its open runtime, and its init hook run."""

    record: WorkspaceRecord
    runtime: Runtime
    init: InitHookRun | None = None  # the init hook running in the background, if any
    # What creating it learnt, for the caller's `wire_session` (it saves git calls and reads).
    project: service.ProjectPaths | None = None
    secrets: dict[str, str] | None = None  # the project's secrets


@dataclass
class DeleteReport:
    """What deleting a workspace did."""

    record: WorkspaceRecord
    branch: str | None = None  # the workspace branch considered (worktree workspaces)
    branch_deleted: bool = False
    notes: list[str] = field(default_factory=list)
    removed: list[RemovalItem] = field(default_factory=list)  # as `deletion_preview` lists them
    kept: list[str] = field(default_factory=list)


# Lookups ---------------------------------------------------------------------------------------


def get_workspace(workspace_id: str) -> WorkspaceRecord:
    record = registry.get_workspace(workspace_id)
    if record is None:
        raise WorkspaceNotFoundError(
            f"no workspace with id '{workspace_id}'", hint="`xum sessions --all` lists them"
        )
    return record


def list_workspaces(
    project_path: str | None = None, *, archived: bool | None = False, chats: bool = False
) -> list[WorkspaceRecord]:
    """Newest first. `archived`: False (default) hides archived ones, True lists only those,
    None lists all. `chats`: the scratch chats too (their own stand-in project)."""
    records = registry.list_workspaces(project_path)
    if chats and project_path is not None:
        from xum.workspaces.checkouts.scratch import chats_root

        records += registry.list_workspaces(str(chats_root()))
        records.sort(key=lambda r: r.created_at, reverse=True)
    if archived is None:
        return records
    return [r for r in records if (r.archived_at is not None) == archived]


def check_name(name: str) -> str:
    """A name the user chose: usable as a directory and a git branch."""
    if (
        not re.fullmatch(_NAME_RE, name)
        or ".." in name
        or name.endswith((".lock", "."))
        or name.startswith(".")
    ):
        raise InvalidNameError(
            f"{name!r} cannot name a workspace",
            hint="use up to 80 letters, digits, '.', '_' and '-', starting with a letter or digit",
        )
    return name


# Create ----------------------------------------------------------------------------------------


async def create_workspace(
    directory: Path,
    runtime: str = "local",
    *,
    name_hint: str,
    title: str = "",
    name: str | None = None,
    run_init: bool = True,
    on_init_line: LineSink | None = None,
    init_timeout_s: float = INIT_TIMEOUT_S,
    project_query: git.WorkTreeQuery | None = None,
    branch: str | None = None,
    **fields: Any,
) -> CreatedWorkspace:
    """Create a workspace of `directory`'s project. `runtime`: `local`, `worktree`,
    `ssh <host>`, `docker <image>` or `devcontainer [<config>]`. The init hook (trusted projects) starts in the background; `on_init_line`
    receives its output lines. `project_query`: the git call for `directory`'s project, started
    earlier by the caller (`xum run` starts it before its imports). `branch`: an existing branch
    a worktree checks out (kept when the workspace is deleted) instead of a new one."""
    kind, host = parse_runtime(runtime)
    if name is not None:
        check_name(name)

    def create() -> tuple[service.ProjectPaths, WorkspaceRecord, Runtime, dict[str, str] | None]:
        if fields.get("external_agent"):  # checked before anything is made, for every caller
            from xum.workspaces.external.definitions import check_creation

            check_creation(str(fields["external_agent"]))
        paths = service.project_paths(directory, project_query)
        checkout = create_checkout(
            kind,
            Origin(directory, paths.root, branch=branch, **origin_target(kind, host)),
            NewWorkspace(name_hint, title, name, fields),
        )
        opened = checkout.open_runtime()
        secrets = load_project_secrets(str(paths.trust_root)) if run_init else None
        return paths, checkout.record, opened, secrets

    paths, record, opened, secrets = await asyncio.to_thread(create)
    init = None
    if secrets is not None:
        init = await start_init_hook(
            record,
            opened,
            secrets=secrets,
            on_line=on_init_line,
            timeout_s=init_timeout_s,
            trust_root=paths.trust_root,
        )
    return CreatedWorkspace(record, opened, init, project=paths, secrets=secrets)


async def create_scratch_chat(
    *, title: str = "", name: str | None = None, **fields: Any
) -> CreatedWorkspace:
    """Create a scratch chat: a workspace with no project, in a private folder under
    `$XUM_ROOT/chats` (`checkouts.scratch`). No init hook: there is no project to trust."""
    from xum.workspaces.checkouts.scratch import NAME_HINT, ScratchCheckout

    if name is not None:
        check_name(name)

    def create() -> tuple[WorkspaceRecord, Runtime]:
        checkout = ScratchCheckout.create(
            Origin(Path(), Path()), NewWorkspace(NAME_HINT, title, name, fields)
        )
        return checkout.record, checkout.open_runtime()

    record, opened = await asyncio.to_thread(create)
    return CreatedWorkspace(record, opened)


async def _start_init(
    record: WorkspaceRecord, runtime: Runtime, on_line: LineSink | None, timeout_s: float
) -> InitHookRun | None:
    secrets = await asyncio.to_thread(project_secrets, record.project_path)
    return await start_init_hook(
        record, runtime, secrets=secrets, on_line=on_line, timeout_s=timeout_s
    )


# Rename ----------------------------------------------------------------------------------------


async def rename_workspace(workspace_id: str, new_name: str) -> WorkspaceRecord:
    """Rename a workspace: its record, its checkout directory (`git worktree move`, or a move on
    the SSH host), its branch when the branch still carries the old name, and its plan file.
    Refused while a turn runs."""
    check_name(new_name)
    return await asyncio.to_thread(_rename, workspace_id, new_name)


def _rename(workspace_id: str, new_name: str) -> WorkspaceRecord:
    record = get_workspace(workspace_id)
    if new_name == record.name:
        return record
    old_plan = plan_path(record)
    with hold_workspace(record, "rename"):
        renamed = checkout_for(record).rename(new_name)
        new_plan = plan_path(renamed)
        if old_plan.exists() and not new_plan.exists():
            ensure_private_dir(new_plan.parent)
            old_plan.rename(new_plan)
        return renamed


# Fork ------------------------------------------------------------------------------------------


async def fork_workspace(
    workspace_id: str,
    name: str | None = None,
    *,
    title: str | None = None,
    run_init: bool = True,
    on_init_line: LineSink | None = None,
    init_timeout_s: float = INIT_TIMEOUT_S,
) -> CreatedWorkspace:
    """`/fork`: a new workspace on the same runtime, on a new branch from the source's HEAD
    (uncommitted changes are not carried), with the source's conversation, model, thinking level
    and agent (mode). The conversation is copied frame by frame into the new session log."""
    source = get_workspace(workspace_id)
    if name is not None:
        check_name(name)
    hint = re.sub(_SUFFIX_RE, "", source.name) or "fork"
    settings: dict[str, Any] = {
        "model": source.model,
        "thinking": source.thinking,
        "agent": source.agent,
        # An external agent stays the fork's agent, in a session of its own (not the source's).
        "external_agent": source.external_agent,
    }
    new_title = source.title if title is None else title
    new = NewWorkspace(hint, new_title, name, settings)
    checkout = await asyncio.to_thread(checkout_for(source).fork, new)
    record, runtime = checkout.record, checkout.open_runtime()
    try:
        await asyncio.to_thread(copy_conversation, source.id, record.id)
        record = registry.update_workspace(
            record.id, extra=dict(record.extra, forked_from=source.id)
        )
    except BaseException:
        with contextlib.suppress(Exception):
            await delete_workspace(record.id, force=True, branch="always", run_hooks=False)
        raise
    init = await _start_init(record, runtime, on_init_line, init_timeout_s) if run_init else None
    return CreatedWorkspace(record, runtime, init)


def copy_conversation(source_id: str, target_id: str) -> int:
    """Append the source log's intact frames to the (new, empty) target log, through the store
    API: the copy gets fresh ids, timestamps and sequence numbers, and compaction boundaries are
    renumbered to match. A turn the source had open is closed in the copy. Returns the number of
    frames copied."""
    import bisect

    from xum.store.blobs import copy_blobs

    source = SessionLog.open(source_id, purpose="fork (read)")
    frames = [f for f in source.frames if not f.damaged and f.seq is not None]
    old_seqs = [f.seq or 0 for f in frames]

    def renumber(seq: int) -> int:
        # The new seq of the last copied frame at or before `seq` (frames are numbered 1..n).
        return max(bisect.bisect_right(old_seqs, seq), 1)

    batch = []
    for frame in frames:
        data = dict(frame.data)
        if isinstance(data.get("through_seq"), int):
            data["through_seq"] = renumber(data["through_seq"])
        batch.append(ev.unchecked(frame.type, data))  # a copy: typed when it was written
    target = SessionLog.open(target_id, purpose="fork")
    try:
        if target.frames:
            raise XumError(f"the session log of {target_id} is not empty; refusing to fork into it")
        copy_blobs(source_id, target_id)  # the images the copied frames name, first
        if batch:
            target.append_many(batch)
            target.recover()
    finally:
        target.close()
    return len(batch)


# Archive ---------------------------------------------------------------------------------------


async def archive_workspace(
    workspace_id: str, *, hook_timeout_s: float = LIFECYCLE_HOOK_TIMEOUT_S
) -> WorkspaceRecord:
    """Mark the workspace archived, after running its `.xum/archive` hook. The checkout is kept
    (xum does not snapshot it). Archiving an archived workspace changes nothing and runs no
    hook. Refused while a turn runs."""
    record = get_workspace(workspace_id)
    if record.archived_at is not None:
        return record
    with hold_workspace(record, "archive"):
        await run_lifecycle_hook(record, "archive", timeout_s=hook_timeout_s)
        checkout = checkout_for(record)
        if isinstance(checkout, Suspendable):  # a container is stopped
            await asyncio.to_thread(checkout.suspend)
        return await asyncio.to_thread(registry.update_workspace, record.id, archived_at=now_ms())


async def unarchive_workspace(workspace_id: str) -> WorkspaceRecord:
    record = get_workspace(workspace_id)
    if record.archived_at is None:
        return record
    checkout = checkout_for(record)
    if isinstance(checkout, Suspendable):  # a container is started again
        await asyncio.to_thread(checkout.resume)
    return await asyncio.to_thread(registry.update_workspace, record.id, archived_at=None)


# Delete ----------------------------------------------------------------------------------------


async def delete_workspace(
    workspace_id: str,
    *,
    force: bool = False,
    branch: BranchPolicy = "merged",
    hook_timeout_s: float = LIFECYCLE_HOOK_TIMEOUT_S,
    run_hooks: bool = True,
) -> DeleteReport:
    """Delete a workspace: run `.xum/delete`, then remove its checkout (a worktree, or the SSH
    host's directory; a local workspace's project directory is never touched), its session log,
    scratch directory, plan file and init log, and finally its record. Its sub-agents'
    workspaces are deleted first (each the same way, without a dirty check of theirs).

    A checkout with uncommitted changes (untracked files included) is refused with
    DirtyWorkspaceError naming them, unless `force`. The workspace branch (worktrees): `merged`
    (default) deletes it only when git considers it merged into the project's checked-out branch
    (`git branch -d`), else keeps it and says so; `always` deletes it; `never` keeps it.
    Refused while a turn runs."""
    record = get_workspace(workspace_id)
    checkout = checkout_for(record)
    # What of xum's local state there is, as the preview saw it (taking the writer lock below
    # makes the session directory of a workspace that never ran; it goes too).
    state = await asyncio.to_thread(_state_items, record)
    with hold_workspace(record, "delete"):
        if run_hooks:
            await run_lifecycle_hook(record, "delete", timeout_s=hook_timeout_s)
        children = await _delete_children(record, checkout, force=force)
        done = await asyncio.to_thread(checkout.remove, force=force, policy=branch)
        await asyncio.to_thread(remove_local_state, record)
        await asyncio.to_thread(registry.remove_workspace, record.id)
    done.notes.extend(f"deleted the sub-agent workspace {name}" for name in children)
    done = _whole_workspace(record, done, state)
    return DeleteReport(
        record,
        branch=done.branch,
        branch_deleted=done.branch_deleted,
        notes=done.notes,
        removed=done.removes,
        kept=done.keeps,
    )


async def _delete_children(
    record: WorkspaceRecord, checkout: Checkout, *, force: bool
) -> list[str]:
    """Delete the workspace's sub-agents' workspaces (a fork child's worktree or container goes
    with its parent), before its own checkout: a scratch chat's folder is kept while another
    workspace works in it. The parent's dirty check comes first, so a refused delete loses
    nothing. Returns the names deleted."""
    from xum.workspaces.subagents.records import records_with_parent
    from xum.workspaces.subagents.workspaces import delete_descendants

    if not await asyncio.to_thread(records_with_parent, record.id):
        return []
    if not force:
        dirty = await asyncio.to_thread(checkout.dirty_files)
        if dirty:
            raise DirtyWorkspaceError(record.name, dirty)
    return await delete_descendants(record.id)


def deletion_preview(record: WorkspaceRecord, branch: BranchPolicy = "merged") -> Removal:
    """What `delete_workspace(record.id, branch=branch)` would remove and keep, the uncommitted
    files it would lose (worktrees) and what to know first. Changes nothing; local git calls
    only (an SSH checkout is checked when it is deleted)."""
    from xum.workspaces.subagents.records import records_with_parent

    removal = _whole_workspace(record, checkout_for(record).removal(branch), _state_items(record))
    children = [child.name for child in records_with_parent(record.id)]
    if children:
        removal.warnings.append(
            "its sub-agents' workspaces are deleted with it (with their sessions and any "
            f"uncommitted work): {', '.join(children)}"
        )
    return removal


def _state_items(record: WorkspaceRecord) -> list[RemovalItem]:
    """The local state of the workspace that exists (see `state.py`)."""
    return [
        RemovalItem(kind=kind, path=str(path))
        for kind, path in local_state(record)
        if path.exists()
    ]


def _whole_workspace(
    record: WorkspaceRecord, checkout_part: Removal, state: list[RemovalItem]
) -> Removal:
    """The whole workspace's removal: its checkout's part, then its local state, then its
    record. The preview and the delete report both come from here."""
    checkout_part.removes.extend(state)
    checkout_part.removes.append(
        RemovalItem(kind="record", name=record.name, detail="the registry entry")
    )
    return checkout_part


# Lifecycle hooks -------------------------------------------------------------------------------


async def run_lifecycle_hook(
    record: WorkspaceRecord, name: Literal["archive", "delete"], *, timeout_s: float
) -> hooks.HookResult | None:
    """Run `.xum/archive` or `.xum/delete` in the workspace checkout, through its runtime. Skipped
    for untrusted projects, XUM_DISABLE_PROJECT_AUTOMATION=1, sub-agents that share their parent's
    checkout, and missing checkouts. Never raises: a failure is logged to
    `$XUM_ROOT/logs/hooks.log` (secret values masked) and the operation goes on."""
    secrets: dict[str, str] | None = None
    try:
        if not await asyncio.to_thread(project_automation_allowed, record.project_path):
            return None
        if record.parent_id is not None:
            parent = registry.get_workspace(record.parent_id)
            if parent is not None and parent.path == record.path:
                return None
        checkout = checkout_for(record)
        runtime = checkout.open_runtime()
        try:
            if not (await runtime.stat(record.path)).is_dir:
                return None
            # The checkout's own `.xum/` only: these hooks clean up after that very checkout.
            hook = await hooks.find_project_hook(runtime, checkout.hook_roots().checkout, name)
            if hook is None:
                return None
            secrets = await asyncio.to_thread(project_secrets, record.project_path)
            result = await hooks.run_hook(
                runtime,
                hook,
                env=lifecycle_env(record, secrets),
                cwd=record.path,
                timeout_s=timeout_s,
            )
        finally:
            await runtime.close()
        if not result.ok:
            from xum.workspaces.safety.masking import SecretMasker

            hooks.log_hook(record.id, result, mask=SecretMasker.for_project(secrets).mask)
        return result
    except Exception as exc:  # cleanup hooks never block the operation
        with contextlib.suppress(OSError):
            _log_exception(record, name, exc, secrets)
        return None


def _log_exception(
    record: WorkspaceRecord, name: str, exc: Exception, secrets: dict[str, str] | None
) -> None:
    """Record why a lifecycle hook could not run. An error message can quote anything (a remote
    host's stderr, a path), so the project's secret values are masked in it too."""
    from xum.workspaces.safety.masking import SecretMasker

    if secrets is None:
        try:
            secrets = project_secrets(record.project_path)
        except Exception:  # an unreadable secrets file: nothing to mask with
            secrets = {}
    message = SecretMasker.for_project(secrets).mask(str(exc) or type(exc).__name__)
    hooks.append_hooks_log(
        {"ts": now_ms(), "workspaceId": record.id, "hook": f".xum/{name}", "error": message}
    )


__all__ = [
    "BranchPolicy",
    "CreatedWorkspace",
    "DeleteReport",
    "DirtyWorkspaceError",
    "InvalidNameError",
    "WorkspaceNotFoundError",
    "archive_workspace",
    "copy_conversation",
    "create_workspace",
    "delete_workspace",
    "deletion_preview",
    "fork_workspace",
    "get_workspace",
    "list_workspaces",
    "parse_runtime",
    "rename_workspace",
    "unarchive_workspace",
]
