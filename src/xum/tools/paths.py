"""Where the edit tools may write: canonicalize first, then check containment.

A path the model gives is joined to the workspace and resolved the way the kernel would walk
it (every symlink followed, `..` folded after each link). Only then is it checked, before any
I/O: it must lie inside the workspace, the scratch dir, the runtime's temp dir or an extra root
the engine granted, and no component may be `.git` (git's internals: hooks there run code, and
a worktree's `.git` file points at the shared repository) nor, inside the checkout, `.xum` (its
hooks run outside the sandbox; its agents and skills steer the model). In plan mode the single
plan file is the only writable path. Reads are fenced by the user's read denylist (opt-in,
`xum.tools.denylist`) and by xum's own directory (below); otherwise file_read reads anything the
OS lets xum read.

xum's own directory (`$XUM_ROOT`: its config, provider keys, the server's token, every session)
is outside every fence, for reads and writes alike, wherever it lives (under the system temp dir
too, which is otherwise writable): an agent that could read the server's token or rewrite
`config.json` could switch its own sandbox off. The refusal comes before any other rule, so no
approval, granted root or temp dir can lift it. Only the workspace's own places under it stay
open: its checkout (a worktree under `$XUM_ROOT/src`), its scratch dir, its plan file (read; in
plan mode written), and, to read, the user's global skills and agents. The provider key files
`providers.jsonc` points at (`apiKeyFile`) are xum's credentials too, wherever they are: refused
the same way.

The check and the write are separate steps, so a process racing to swap a directory for a
symlink in between could still redirect a write; the agent's own bash can do anything the user
can anyway, so this fence is against mistakes and injected paths, not against local code.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from xum.core.paths import xum_root
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


async def _refuse_own_files(ctx: ToolContext, path: str, canonical: str, *, write: bool) -> None:
    """PathRefused when `canonical` lies in xum's own directory outside the workspace's own
    places there, or is a provider key file (module docstring). Local runtimes only: a remote
    host's paths are not this machine's `$XUM_ROOT` and key files."""
    runtime = ctx.runtime
    if not runtime.sees_local_files:
        return
    root = await runtime.realpath(os.path.abspath(xum_root()))
    if not is_within(canonical, root):
        if canonical in await _key_files(ctx):
            raise PathRefused(
                f"refused: {path} (resolved: {canonical}) is one of xum's provider key files "
                "(apiKeyFile in providers.jsonc); agents cannot read or change it."
            )
        return
    for place in await _own_places(ctx, root, write=write):
        if place != root and is_within(place, root) and is_within(canonical, place):
            return
    raise PathRefused(
        f"refused: {path} (resolved: {canonical}) is inside xum's own directory ($XUM_ROOT, "
        f"{root}), which holds its configuration, credentials and sessions; agents cannot read "
        "or change it. Work in the workspace, and ask the user if you need something from there."
    )


async def _key_files(ctx: ToolContext) -> set[str]:
    """The provider key files (resolved); none when `providers.jsonc` does not parse (xum
    cannot use them then either, and whoever reads it for a request reports the error)."""
    from xum.core.errors import ConfigError
    from xum.store.providers import key_file_paths, load_providers

    try:
        paths = key_file_paths(load_providers())
    except ConfigError:
        return set()
    return {await ctx.runtime.realpath(p) for p in paths}


async def _own_places(ctx: ToolContext, root: str, *, write: bool) -> list[str]:
    """The workspace's own paths under xum's directory `root` (resolved) that its tools may
    use: the checkout, the scratch dir, the plan file; to read, the global skills and agents."""
    from xum.core.paths import plans_dir
    from xum.store.registry import project_name

    runtime = ctx.runtime
    places = [runtime.workspace_path]
    if ctx.scratch_dir:
        places.append(ctx.scratch_dir)
    if ctx.plan_file:
        places.append(ctx.plan_file)
    elif not write:  # outside plan mode the plan can be read, not written
        plan = plans_dir() / project_name(ctx.project_path) / f"{ctx.workspace_name}.md"
        places.append(str(plan))
    if not write:
        places += [os.path.join(root, "skills"), os.path.join(root, "agents")]
    return [await runtime.realpath(os.path.abspath(p)) for p in places]


async def resolve_read_path(ctx: ToolContext, path: str) -> str:
    if not path.strip():
        raise PathRefused("the path is empty")
    if "\0" in path:
        raise PathRefused("the path contains a NUL character")
    canonical = await ctx.runtime.realpath(path)
    await _refuse_own_files(ctx, path, canonical, write=False)
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
    await _refuse_own_files(ctx, path, canonical, write=True)
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
