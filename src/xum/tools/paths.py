"""Where the edit tools may write: canonicalize first, then check containment.

A path the model gives is joined to the workspace and resolved the way the kernel would walk
it (every symlink followed, `..` folded after each link). Only then is it checked, before any
I/O: it must lie inside the workspace, the scratch dir, the runtime's temp dir or an extra root
the engine granted, and no component may be `.git` (git's internals: hooks there run code, and
a worktree's `.git` file points at the shared repository) nor, inside the checkout, `.xum` (its
hooks run outside the sandbox; its agents and skills steer the model). In plan mode the single
plan file is the only writable path. Reads are fenced only by the user's read denylist (opt-in,
`xum.tools.denylist`); otherwise file_read reads anything the OS lets xum read.

The check and the write are separate steps, so a process racing to swap a directory for a
symlink in between could still redirect a write; the agent's own bash can do anything the user
can anyway, so this fence is against mistakes and injected paths, not against local code.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from xum.core.pathtext import is_within
from xum.tools.base import ToolContext


@dataclass(frozen=True, slots=True)
class WriteTarget:
    requested: str  # as the model wrote it
    path: str  # canonical: symlinks resolved; the file to read and replace


class PathRefused(Exception):
    """A write the fence refuses; the message is meant for the model."""


class OutsideWriteRoots(PathRefused):
    """Refused only because the file lies outside the workspace and the other writable roots:
    in the `ask` permission mode a person may approve this one write (`canonical`)."""

    def __init__(self, message: str, canonical: str) -> None:
        super().__init__(message)
        self.canonical = canonical


def _has_git_component(path: str) -> bool:
    # Case-insensitive: on a case-insensitive file system `.GIT/config` is `.git/config`.
    return any(part.lower() == ".git" for part in path.split("/"))


def _refuse_denied(ctx: ToolContext, path: str, canonical: str) -> None:
    """PathRefused when the user's read denylist covers the file (`xum.tools.denylist`)."""
    from xum.tools.denylist import current_denylist

    try:
        denylist = current_denylist()
    except ValueError as exc:  # fail closed: a broken denylist must not read as an empty one
        raise PathRefused(
            f"refused: the read denylist in xum's config.json is malformed ({exc}); the user "
            "has to fix it before files can be read"
        ) from None
    if not denylist.active:
        return
    rule = denylist.rule_for(canonical, ctx.runtime.resolve)
    if rule is not None:
        raise PathRefused(
            f"refused: {path} is on the user's read denylist ({rule}), so xum's tools do not "
            "read it. Do not try to read it another way; ask the user if you need what is in it."
        )


def _in_xum_dir(path: str, workspace: str) -> bool:
    """Whether `path` is inside a `.xum` directory of the checkout (its hooks, agents, skills,
    settings): code that runs outside the sandbox, which the model must not write."""
    root = workspace.rstrip("/") + "/"
    if not path.startswith(root):
        return False
    return any(part.lower() == ".xum" for part in path[len(root) :].split("/"))


async def resolve_read_path(ctx: ToolContext, path: str) -> str:
    if not path.strip():
        raise PathRefused("the path is empty")
    if "\0" in path:
        raise PathRefused("the path contains a NUL character")
    canonical = await ctx.runtime.realpath(path)
    _refuse_denied(ctx, path, canonical)
    return canonical


async def resolve_write_path(ctx: ToolContext, path: str) -> WriteTarget:
    """The canonical file an edit of `path` would change, or PathRefused saying why not."""
    if not path.strip():
        raise PathRefused("the path is empty")
    if "\0" in path:
        raise PathRefused("the path contains a NUL character")
    runtime = ctx.runtime
    lexical = runtime.resolve(path)
    canonical = await runtime.realpath(path)
    if _has_git_component(lexical) or _has_git_component(canonical):
        raise PathRefused(
            f"refused: {path} is inside git's internals (.git); xum never edits them. "
            "Use git commands through bash instead."
        )
    workspace = await runtime.realpath(runtime.workspace_path)
    if _in_xum_dir(lexical, runtime.workspace_path) or _in_xum_dir(canonical, workspace):
        raise PathRefused(
            f"refused: {path} is inside the project's .xum/ (its hooks, agents, skills and "
            "settings, some of which run outside the sandbox); xum's tools never edit it. "
            "Tell the user what to change there instead."
        )
    _refuse_denied(ctx, path, canonical)
    if ctx.plan_file is not None:
        plan = await runtime.realpath(ctx.plan_file)
        if canonical != plan:
            raise PathRefused(
                f"refused: plan mode allows file edits only to the plan file {ctx.plan_file}; "
                f"{path} is not it. Write the plan there, or ask the user to switch to exec mode."
            )
        return WriteTarget(requested=path, path=canonical)

    roots = await _write_roots(ctx, workspace)
    if any(is_within(canonical, root) for root in roots):
        return WriteTarget(requested=path, path=canonical)
    if canonical != lexical and any(is_within(lexical, root) for root in roots):
        raise PathRefused(
            f"refused: {path} goes through a symlink that points outside the workspace "
            f"(it resolves to {canonical}); edits stay inside the workspace."
        )
    raise OutsideWriteRoots(
        f"refused: {path} (resolved: {canonical}) is outside the workspace "
        f"{runtime.workspace_path}; edits may only touch files inside it or the scratch dir "
        f"{ctx.scratch_dir}.",
        canonical,
    )


async def _write_roots(ctx: ToolContext, workspace: str) -> list[str]:
    """Where edits may go: the workspace (`workspace`, already resolved: on SSH every realpath
    is a round trip), the scratch and temp dirs, and the roots granted for this call."""
    runtime = ctx.runtime
    candidates = [ctx.scratch_dir, runtime.temp_dir, *ctx.extra_write_roots]
    roots: list[str] = [workspace]
    for root in candidates:
        if root:
            roots.append(await runtime.realpath(os.path.abspath(root)))
    return roots
