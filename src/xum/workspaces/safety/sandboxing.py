"""The sandbox of a workspace's commands: which mode applies, and the call's sandboxed runtime.

`SandboxMiddleware` sits in the tool-call middleware after the hooks (so it sees the
`.xum/tool_env` file bash will source) and, for every `bash` call, hands the call a
`SandboxedRuntime` (foreground and background commands both start from the call's runtime).

* `off`: the command runs as before, as the user.
* `auto` (the default): `workspace-write` where bubblewrap works; otherwise as before, with one
  `sandbox-unavailable` advisory naming the fix (at session start when `bwrap` is missing, at
  the first command when it is present but cannot run).
* `workspace-write`, `read-only` asked for explicitly: fail-closed. Without a working backend
  bash refuses to run, saying how to install it.

The hooks (`.xum/tool_pre`, `tool_post`, `init`, ...) are trusted configuration and run outside
the sandbox, as the user; what a hook sources for bash (`tool_env`) runs inside it, with the
script. On an SSH workspace the backend is the remote host's bubblewrap, probed once per
session; granted folders are local paths and do not apply there. On a Docker workspace the
container is the boundary (`container_sandbox`).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from xum.core.paths import xum_root
from xum.engine import events as E
from xum.engine.events import EventSink
from xum.engine.extensions import ToolCall
from xum.runtime.base import Runtime
from xum.tools.denylist import ReadDenylist
from xum.workspaces.safety.choice import (
    SafetyChoice,
    SafetyConfigError,
    permission_mode,
    sandbox_settings,
)

if TYPE_CHECKING:
    from xum.runtime.sandbox import Backend, GitLayout, Layout, SandboxSettings
    from xum.runtime.sandboxd import SessionSandbox
    from xum.tools.base import ToolContext, ToolResult

log = logging.getLogger(__name__)

SANDBOXED_TOOLS = frozenset({"bash"})
# How long the background probe waits for the first request to go out before it runs anyway.
PROBE_GATE_S = 2.0
# What a denied write looks like in a command's output: the note after it says why.
_DENIED_MARKERS = ("Read-only file system", "EROFS")


@dataclasses.dataclass(frozen=True, slots=True)
class CommandSandbox:
    """`SandboxMiddleware.command_sandbox`'s answer. `mode`: the mode that applies (after the
    read-only permission mode's override); `layout`: the sandbox, None when `mode` is off or
    there is a `problem` (in words: why the sandbox cannot be kept), whose `kind` says whether
    the backend is unavailable or a setting is wrong (or, without a problem, `container`: a
    container runtime, whose container is the boundary)."""

    mode: str
    layout: Layout | None
    problem: str | None = None
    kind: str = ""


def missing_backend_notice(mode: str) -> E.Advisory | None:
    """At session start: the advisory for a sandbox that cannot work here because `bwrap` is
    not installed (a PATH scan, no process), or None."""
    from xum.runtime.sandbox_settings import INSTALL_HINT, find_bwrap

    if mode == "off" or find_bwrap() is not None:
        return None
    if mode == "auto":
        message = (
            "commands run without a sandbox, as you: bubblewrap (bwrap) is not installed; "
            f"{INSTALL_HINT}"
        )
    else:
        message = (
            f"the sandbox mode is {mode}, but bubblewrap (bwrap) is not installed, so bash will "
            f"refuse to run; {INSTALL_HINT}"
        )
    return E.Advisory(kind="sandbox-unavailable", message=message)


class SandboxMiddleware:
    """Runs each `bash` call's commands in the sandbox the settings ask for."""

    def __init__(
        self,
        runtime: Runtime,
        *,
        workspace_id: str,
        scratch_dir: Path,
        emit: EventSink,
        choice: SafetyChoice,
        warned: bool = False,
    ) -> None:
        """`warned`: the session already said the sandbox is unavailable (at its start)."""
        self.runtime = runtime
        self.workspace_id = workspace_id
        self.scratch_dir = scratch_dir
        self.emit = emit
        self.choice = choice
        self._warned = warned
        self._remote: tuple[Backend, bool, GitLayout | None] | None = None
        self._probe_lock = asyncio.Lock()
        # The session's one sandbox for local commands (started by its first turn, `warm`, or
        # else its first command).
        self.session_sandbox: SessionSandbox | None = None
        self._warming: asyncio.Task[None] | None = None
        if runtime.sees_local_files:
            from xum.llm.http import first_request_sent
            from xum.runtime.sandbox_settings import find_bwrap, helper_soon, probe_soon

            # What the first command would otherwise wait for starts once the first request is
            # out, while the model answers: the probe (a short bwrap run) for sandboxed
            # commands, the command helper (a Python process) for unsandboxed ones.
            if not self._may_sandbox():
                helper_soon(first_request_sent, PROBE_GATE_S)
            elif find_bwrap() is not None:
                probe_soon(first_request_sent, PROBE_GATE_S)

    async def aclose(self) -> None:
        """The session ends: so does its sandbox, with every command still in it."""
        if self._warming is not None:
            self._warming.cancel()  # a sandbox it was starting is ended with it
        if self.session_sandbox is not None:
            self.session_sandbox.close()

    def warm(
        self,
        ctx: ToolContext | Callable[[], ToolContext],
        *,
        after: threading.Event | None = None,
    ) -> asyncio.Task[None] | None:
        """A turn starts: start the session's sandbox now, while the model answers its first
        request, instead of with its first command, which would wait for it (a bwrap and the
        launcher's interpreter: about 60 ms alone, several hundred when many sessions start at
        once). The sandbox is the one a `bash` call with `ctx` would get, so the first command
        finds it under its own key; one it does not match (its `.xum/tool_env` is mounted, or
        the settings changed meanwhile) starts its own, as before. Once per session, local
        workspace-write sandboxes only, and only where the backend works: nothing is reported
        from here (the first command still says what it always said). Returns the task that
        starts it (None for a runtime without local files).

        `ctx` may be a function that makes it, and `after` an event to wait for first (at most
        `PROBE_GATE_S`): a turn passes the first request going out, so that neither the tool
        context nor the sandbox's modules are made or imported before that request."""
        if self._warming is None and self.runtime.sees_local_files:
            self._warming = asyncio.get_running_loop().create_task(self._warm(ctx, after))
        return self._warming

    async def _warm(
        self, ctx: ToolContext | Callable[[], ToolContext], after: threading.Event | None
    ) -> None:
        # Settings that keep commands out of the sandbox: nothing to make, import or wait for.
        if not self._may_sandbox():
            return
        if after is not None and not after.is_set():
            await asyncio.to_thread(after.wait, PROBE_GATE_S)
        from xum.runtime.sandbox import SandboxedRuntime
        from xum.tools.base import ToolContext

        try:
            if callable(ctx):
                ctx = ctx()
            if not self._may_sandbox() or not (await self._backend(ctx.runtime))[0].ok:
                return
            changed = await self.before_tool(ToolCall(id="", name="bash", arguments="{}"), ctx)
            if isinstance(changed, ToolContext) and isinstance(changed.runtime, SandboxedRuntime):
                await changed.runtime.start_session_sandbox()
        except Exception:  # best effort: the first command starts it, or says why it cannot
            log.debug("the session sandbox did not start ahead of the first command", exc_info=True)

    def _may_sandbox(self) -> bool:
        """Whether a command of this session may run in the sandbox (its settings as now)."""
        try:
            mode = sandbox_settings(self.choice).mode
        except SafetyConfigError:
            return False  # every command says so; nothing to probe for
        return mode != "off" or permission_mode(self.choice, self.workspace_id) == "read-only"

    async def before_tool(
        self, call: ToolCall, ctx: ToolContext
    ) -> ToolResult | ToolContext | None:
        if call.name not in SANDBOXED_TOOLS:
            return None
        from xum.tools.base import error

        if ctx.sandbox_escalated:  # approved for this one call (recorded in its result)
            return None
        if ctx.runtime.kind in ("docker", "devcontainer"):  # the container is the boundary
            try:
                settings = self._settings()
            except SafetyConfigError as exc:
                return error(
                    f"bash was not run: {exc.message} ({exc.hint})", sandbox="config-error"
                )
            if settings.mode == "off":
                return None
            from xum.workspaces.safety.container_sandbox import container_call

            return container_call(ctx, settings)
        decided = await self.command_sandbox(ctx)
        if decided.problem is not None:
            if decided.kind == "unavailable" and decided.mode == "auto":
                self._warn(decided.problem)
                return None
            if decided.kind == "unavailable":
                return error(
                    f"bash was not run: the sandbox mode is {decided.mode}, which needs a "
                    f"working sandbox, and {decided.problem}. The user can install it, or choose "
                    'another sandbox mode ("sandbox" in config.json, or `xum run --sandbox`; the '
                    "read-only permission mode always needs it).",
                    sandbox="unavailable",
                )
            return error(f"bash was not run: {decided.problem}", sandbox="config-error")
        if decided.layout is None:
            return None
        from xum.runtime.sandbox import SandboxedRuntime

        session = None
        if ctx.runtime.sees_local_files:
            if self.session_sandbox is None:
                from xum.runtime.sandboxd import SessionSandbox

                self.session_sandbox = SessionSandbox()
            session = self.session_sandbox
        sandboxed = SandboxedRuntime(ctx.runtime, decided.layout, session)
        return dataclasses.replace(ctx, runtime=sandboxed)

    def _settings(self) -> SandboxSettings:
        """The settings as they apply now (SafetyConfigError when config.json's are wrong): the
        read-only permission mode runs commands only in the read-only sandbox."""
        settings = sandbox_settings(self.choice)
        if permission_mode(self.choice, self.workspace_id) == "read-only":
            settings = dataclasses.replace(settings, mode="read-only")
        return settings

    async def command_sandbox(self, ctx: ToolContext) -> CommandSandbox:
        """What sandbox a command started from `ctx` runs in, as the settings say now: its
        layout (None when the mode is off), or the problem that keeps it from being kept. The
        bash tool and an external agent's process (`xum.workspaces.external.sandboxed`) both
        start from here. On a container runtime no bubblewrap applies: the answer is the mode
        and the kind `container` (the container is the boundary, `container_sandbox`)."""
        try:
            settings = self._settings()
        except SafetyConfigError as exc:
            return CommandSandbox("auto", None, f"{exc.message} ({exc.hint})", "config-error")
        if settings.mode == "off":
            return CommandSandbox("off", None)
        if ctx.runtime.kind in ("docker", "devcontainer"):
            return CommandSandbox(settings.mode, None, kind="container")
        backend, is_root, git = await self._backend(ctx.runtime)
        if not backend.ok:
            return CommandSandbox(settings.mode, None, backend.detail, "unavailable")
        from xum.tools.denylist import current_denylist

        try:
            denylist = current_denylist()
        except ValueError as exc:  # fail closed, as the file tools do
            return CommandSandbox(
                settings.mode,
                None,
                f"the read denylist in xum's config.json is malformed ({exc})",
                "config-error",
            )
        layout = self._layout(ctx, settings, settings.mode != "read-only", is_root, git)
        if denylist.active:
            layout = _with_denylist(layout, denylist, ctx.runtime)
        if ctx.runtime.sees_local_files:
            layout = _without_key_files(layout)
        return CommandSandbox(settings.mode, layout)

    async def after_tool(self, call: ToolCall, result: ToolResult, ctx: ToolContext) -> ToolResult:
        if not result.is_error:
            # Checked first: the sandbox's module (3 ms to import) stays unloaded in a session
            # whose commands run unsandboxed and succeed.
            return result
        from xum.runtime.forwarding import ForwardingRuntime
        from xum.runtime.sandbox import SandboxedRuntime

        runtime = ctx.runtime
        # A later layer may have wrapped the sandboxed runtime (the editor's terminal, which
        # runs the same sandbox): the note is about the sandbox underneath.
        while isinstance(runtime, ForwardingRuntime) and not isinstance(runtime, SandboxedRuntime):
            runtime = runtime.inner
        if not isinstance(runtime, SandboxedRuntime):
            return result
        if not any(marker in result.output for marker in _DENIED_MARKERS):
            return result
        if runtime.layout.writable_workspace:
            where = (
                "in the workspace, its scratch dir ($XUM_SCRATCH_DIR), $TMPDIR, /tmp and the "
                "folders the user granted; .git/hooks, .git/config and .xum/ are read-only"
            )
        else:
            where = "nowhere but a throwaway $TMPDIR (read-only sandbox)"
        note = (
            f"\n[note: this command runs in xum's sandbox, which allows writes only {where}. "
            "Write somewhere allowed, or tell the user what needs to change.]"
        )
        meta = {**result.meta, "sandbox_denied": True}
        return dataclasses.replace(result, output=result.output + note, meta=meta)

    # -- the backend and the layout -------------------------------------------------------------

    async def _backend(self, runtime: Runtime) -> tuple[Backend, bool, GitLayout | None]:
        """(backend, runs as root, git dirs); the git dirs only for a remote runtime (a local
        checkout's are read from its files on every call)."""
        if runtime.sees_local_files:
            from xum.runtime.sandbox import known_local_backend, local_backend

            # Only the first probe (a short bwrap run) goes to a thread; later calls know.
            backend = known_local_backend()
            if backend is None:
                backend = await asyncio.to_thread(local_backend)
            return backend, os.geteuid() == 0, None
        async with self._probe_lock:
            if self._remote is None:
                self._remote = await _probe_remote(runtime)
        return self._remote

    def _layout(
        self,
        ctx: ToolContext,
        settings: SandboxSettings,
        write: bool,
        is_root: bool,
        remote_git: GitLayout | None,
    ) -> Layout:
        from xum.runtime.git_layout import git_layout
        from xum.runtime.sandbox import Layout

        runtime = ctx.runtime
        source: tuple[str, ...] = (ctx.env_source,) if ctx.env_source else ()
        if not runtime.sees_local_files:
            scratch = str(getattr(runtime, "scratch_dir", "") or "")
            return Layout(
                workspace=runtime.workspace_path,
                writable_workspace=write,
                # No directory is made on the host for $TMPDIR: /tmp is it.
                temp_dir=None,
                private_slash_tmp=settings.private_tmp,
                egress=settings.egress,
                writable=(scratch,) if write and scratch else (),
                git=remote_git,
                shown=(*source, *((scratch,) if scratch and not write else ())),
                drop_caps=is_root,
            )
        workspace = os.path.realpath(runtime.workspace_path)
        scratch = os.path.realpath(ctx.scratch_dir)
        # The ssh agent's socket often lives in /tmp, which `privateTmp` replaces: git over ssh
        # keeps working (connecting to a socket is not a write).
        agent = os.environ.get("SSH_AUTH_SOCK")
        source += (agent,) if agent and os.path.isabs(agent) else ()
        root = os.path.realpath(xum_root())
        # The user's global skills, read-only: a skill's scripts are meant to be run.
        source += (os.path.join(root, "skills"),)
        return Layout(
            workspace=workspace,
            writable_workspace=write,
            temp_dir=os.path.join(scratch, "sandbox-tmp"),
            private_slash_tmp=settings.private_tmp,
            egress=settings.egress,
            writable=(scratch, *settings.writable) if write else (),
            git=git_layout(workspace),
            # xum's own root holds provider keys, the server's token, the config and every
            # session: not the model's, to read or to change.
            hidden=(root,),
            shown=(*source, *(() if write else (scratch,))),
            drop_caps=is_root,
        )

    def _warn(self, detail: str) -> None:
        if self._warned:
            return
        self._warned = True
        self.emit(
            E.Advisory(
                kind="sandbox-unavailable",
                message=f"commands run without a sandbox, as you: {detail}",
            )
        )


def _with_denylist(layout: Layout, denylist: ReadDenylist, runtime: Runtime) -> Layout:
    """Denied directories shown empty and denied files shown as empty files; of the name
    patterns, only a `.env` at the top of the checkout (mounts cannot follow a pattern). On a
    remote host only the built-in directories apply (configured paths are this machine's, like
    granted folders)."""
    if runtime.sees_local_files:
        roots = denylist.roots(runtime.resolve)
    else:
        roots = ReadDenylist(sensitive=denylist.sensitive).roots(runtime.resolve)
    files = [r for r in roots if runtime.sees_local_files and os.path.isfile(r)]
    directories = [r for r in roots if r not in files]
    if denylist.sensitive:
        files.append(os.path.join(layout.workspace, ".env"))
    return dataclasses.replace(layout, denied=tuple(directories), denied_files=tuple(files))


def _without_key_files(layout: Layout) -> Layout:
    """The provider key files `providers.jsonc` points at (xum's credentials, wherever they
    are) shown as empty files. Those in `$XUM_ROOT` are hidden with it already."""
    from xum.core.errors import ConfigError
    from xum.store.providers import key_file_paths, load_providers

    try:
        paths = key_file_paths(load_providers())
    except ConfigError:  # xum cannot use them then either; the request reports it
        return layout
    files = tuple(os.path.realpath(p) for p in paths if os.path.isfile(p))
    return dataclasses.replace(layout, denied_files=(*layout.denied_files, *files))


async def _probe_remote(runtime: Runtime) -> tuple[Backend, bool, GitLayout | None]:
    from xum.runtime.sandbox import REMOTE_PROBE, Backend, parse_remote_probe

    host = str(getattr(runtime, "host", runtime.kind))
    out = bytearray()
    try:
        await runtime.exec(REMOTE_PROBE, env={}, timeout_s=60, on_output=out.extend)
    except OSError as exc:
        return Backend(False, f"the sandbox probe on {host} failed ({exc})"), False, None
    facts = parse_remote_probe(out.decode(errors="replace"), host)
    return facts.backend, facts.is_root, facts.git
