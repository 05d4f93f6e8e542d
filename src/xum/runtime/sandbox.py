"""The command sandbox: what a model's command may see and change, as bubblewrap arguments.

A sandboxed command runs under `bwrap` (Debian's `bubblewrap`) in fresh mount and PID
namespaces:

* `workspace-write`: the whole filesystem is mounted read-only; the workspace checkout, its
  scratch directory, its own `$TMPDIR`, `/tmp` and the user's granted folders are writable.
  `/tmp` is the host's, shared, as most tools expect (sockets, files other processes wait
  for); `privateTmp` makes it the command's own directory instead. What git
  needs to commit stays writable (a worktree's objects, refs and logs in the shared repository),
  but the parts of `.git` that make git run code or change how it behaves (`hooks`, `config`,
  `info`) and the checkout's `.xum/` (its hooks, agents and MCP config) are mounted read-only
  again, so a command cannot plant code that later runs outside the sandbox. A missing `.xum/`
  or `.git/hooks` is held as an empty read-only directory (bwrap leaves an empty directory behind
  as the mount point).
* `read-only`: nothing is writable but an empty, throwaway `$TMPDIR`.

In both, xum's own root (`$XUM_ROOT`: provider keys, the server's token, config, every session)
is hidden (an empty read-only directory) except what the workspace needs from it: its checkout
when that lives there, its scratch directory, the user's global skills (read-only) and the file
bash sources; the PID namespace makes "every descendant dies with the command"
structural (when the script exits, or its group is killed, the namespace goes with it, whatever
the descendants did with `setsid` or their output), and capabilities are dropped (a command run
as root cannot remount its way out). Egress `off` adds a network namespace with only its own
loopback.

A local workspace-write session runs these arguments once, as one long-lived sandbox whose
launcher starts each command (`xum.runtime.sandboxd`; there each command's bash is a subreaper
and the launcher ends what it leaves, in place of a PID namespace per command).

This module is pure: it turns a `Layout` into arguments, probes whether bubblewrap works, and
wraps a runtime so its `exec` runs inside. Which mode applies, and what goes in the layout, is
decided by the workspace layer (`xum.workspaces.safety.sandboxing`).
"""

from __future__ import annotations

import contextlib
import os
import shlex
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from xum.core.pathtext import is_within
from xum.runtime.base import ExecResult, OutputSink, Runtime
from xum.runtime.forwarding import ForwardingRuntime

# The settings and the PATH scan live apart (what a session needs when it starts); they are
# this module's names too.
from xum.runtime.sandbox_settings import BWRAP as BWRAP
from xum.runtime.sandbox_settings import EGRESS_MODES as EGRESS_MODES
from xum.runtime.sandbox_settings import INSTALL_HINT as INSTALL_HINT
from xum.runtime.sandbox_settings import SANDBOX_MODES as SANDBOX_MODES
from xum.runtime.sandbox_settings import EgressMode as EgressMode
from xum.runtime.sandbox_settings import SandboxMode as SandboxMode
from xum.runtime.sandbox_settings import SandboxSettings as SandboxSettings
from xum.runtime.sandbox_settings import find_bwrap as find_bwrap
from xum.runtime.sandbox_settings import parse_settings as parse_settings


class SessionSandbox(Protocol):
    """The session's one sandbox (`xum.runtime.sandboxd.SessionSandbox`), as a command sees it."""

    async def run(
        self,
        boundaries: Sequence[str],
        script: str,
        *,
        env: Mapping[str, str],
        cwd: str,
        timeout_s: float | None,
        on_output: OutputSink | None,
    ) -> ExecResult | None:
        """The command's result in a sandbox with these `boundaries` (bwrap arguments); None
        when the command did not start there (the caller runs it in a bwrap of its own)."""
        ...

    async def start(self, boundaries: Sequence[str]) -> bool:
        """Have the sandbox of `boundaries` running ahead of the commands; False when it cannot
        run."""
        ...


# Inside `.git`: what makes git run code or change its behaviour. Held read-only.
GIT_PROTECTED = ("hooks", "config", "info")
# Inside the shared repository of a worktree: what a commit writes.
GIT_COMMIT_DIRS = ("objects", "refs", "logs")
# Enough to show that mount and PID namespaces work (the probe and every command need both).
_PROBE_ARGS = (
    "--ro-bind",
    "/",
    "/",
    "--dev",
    "/dev",
    "--proc",
    "/proc",
    "--unshare-pid",
    "--die-with-parent",
    "--",
    "true",
)


@dataclass(frozen=True, slots=True)
class Backend:
    """Whether bubblewrap works here; `detail` says which one, or why not (with the fix)."""

    ok: bool
    detail: str


# By the bwrap found on PATH: a change of PATH (or an install) is noticed, a working one is not
# tried twice.
_tried: dict[str, Backend] = {}
_probing = threading.Lock()


def local_backend() -> Backend:
    """Whether bubblewrap works on this machine: found on PATH and able to start a command in
    new mount and PID namespaces (one short `bwrap ... true`, once per process and bwrap)."""
    path = find_bwrap()
    if path is None:
        return _missing()
    with _probing:  # a background probe (`probe_soon`) and a command's: one runs, one waits
        known = _tried.get(path)
        if known is None:
            known = _tried[path] = _try_bwrap(path)
    return known


def _missing() -> Backend:
    return Backend(False, f"bubblewrap (bwrap) is not installed; {INSTALL_HINT}")


def known_local_backend() -> Backend | None:
    """`local_backend()`'s answer when it needs no probe (bwrap is missing, or the one on PATH
    was tried already), else None. A PATH scan and a lookup: cheap enough to ask on the event
    loop, so a sandboxed command after the first one does not hop to a thread for it."""
    path = find_bwrap()
    return _missing() if path is None else _tried.get(path)


def _try_bwrap(path: str) -> Backend:
    import subprocess  # the first sandboxed command, not start-up

    try:
        done = subprocess.run(
            [path, *_PROBE_ARGS], capture_output=True, timeout=20, stdin=subprocess.DEVNULL
        )
        version = subprocess.run([path, "--version"], capture_output=True, timeout=20)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return Backend(False, f"{path} could not run ({exc}); {INSTALL_HINT}")
    if done.returncode != 0:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        why = said[-1] if said else f"exit status {done.returncode}"
        return Backend(False, f"{path} cannot make namespaces here ({why}); {INSTALL_HINT}")
    name = version.stdout.decode(errors="replace").strip() or "bubblewrap"
    return Backend(True, f"{name} ({path})")


@dataclass(frozen=True, slots=True)
class GitLayout:
    """Where a checkout's git data is: its own git dir and the repository's common dir (the
    same directory for an ordinary checkout; for a linked worktree, `<common>/worktrees/<n>`)."""

    git_dir: str
    common_dir: str


def read_git_layout(workspace: str) -> GitLayout | None:
    """The checkout's git dirs, from `.git` (a directory, or a worktree's `gitdir:` file) and
    `commondir`; None when it is not a git checkout. File reads only, no git process."""
    found = git_dirs(workspace)
    if found is None:
        return None
    return GitLayout(os.path.realpath(found[0]), os.path.realpath(found[1]))


def git_dirs(workspace: str) -> tuple[str, str] | None:
    """`read_git_layout`'s two directories as the files name them (not yet resolved)."""
    dot_git = os.path.join(workspace, ".git")
    if os.path.isdir(dot_git):
        git_dir = dot_git
    elif os.path.isfile(dot_git):
        try:
            text = Path(dot_git).read_text(errors="replace").strip()
        except OSError:
            return None
        if not text.startswith("gitdir:"):
            return None
        git_dir = os.path.normpath(os.path.join(workspace, text.removeprefix("gitdir:").strip()))
    else:
        return None
    common = git_dir
    try:
        pointer = Path(git_dir, "commondir").read_text(errors="replace").strip()
    except OSError:
        pointer = ""
    if pointer:
        common = os.path.normpath(os.path.join(git_dir, pointer))
    return git_dir, common


@dataclass(frozen=True, slots=True)
class Layout:
    """What one sandboxed command sees. Every path is absolute in the namespace the command
    runs in. A path named here need not exist: mounts whose source is missing are left out, and a
    protected directory that is missing is held as an empty read-only one."""

    workspace: str
    writable_workspace: bool  # workspace-write (True) or read-only (False)
    # The command's own $TMPDIR (writable; empty and throwaway read-only), made by the local
    # runtime. None: /tmp itself (shared with the host when writable, else throwaway).
    temp_dir: str | None
    private_slash_tmp: bool = False  # /tmp is the command's own too, not the host's
    egress: EgressMode = "shared"
    writable: tuple[str, ...] = ()  # scratch dir and granted folders
    git: GitLayout | None = None
    # Directories shown empty and read-only under everything else (xum's root); what `shown`,
    # the workspace and `writable` put inside one stays as those mounts say.
    hidden: tuple[str, ...] = ()
    shown: tuple[str, ...] = ()  # read-only paths inside a hidden directory that commands need
    denied: tuple[str, ...] = ()  # the read denylist: directories shown empty, over everything
    denied_files: tuple[str, ...] = ()  # and files shown empty
    drop_caps: bool = False  # running as root: drop every capability (no remounting out)
    # Writable in both modes: an external agent's own state (its sessions, settings, caches;
    # `xum.workspaces.external.sandboxed`). Empty for xum's commands.
    always_writable: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Mount:
    """Arguments that depend on whether `path` exists where the command runs (None: always
    `present`)."""

    path: str | None
    present: tuple[str, ...]
    absent: tuple[str, ...] = ()


def _git_protected(git: GitLayout) -> list[str]:
    protected = [os.path.join(git.common_dir, name) for name in GIT_PROTECTED]
    if git.git_dir != git.common_dir:  # a worktree's own per-worktree config
        protected.append(os.path.join(git.git_dir, "config.worktree"))
    return protected


def _if_exists(path: str, *args: str) -> Mount:
    return Mount(path, args)


def mount_plan(layout: Layout, *, cwd: str, bwrap: str = BWRAP) -> list[Mount]:
    """The `bwrap ... --` prefix that runs a command (appended after it) inside `layout`, as
    steps that depend on what exists (`argv_for` decides them here, `shell_for` on a remote).

    Mounts are applied in order, later ones over earlier ones: the read-only root, then what is
    hidden, then what is writable, then what is held read-only inside it, then the read
    denylist over all of it; last, the hidden directories are made read-only.
    """
    head = [bwrap, "--die-with-parent", "--unshare-pid"]
    if layout.egress == "off":
        head.append("--unshare-net")
    if layout.drop_caps:
        head += ["--cap-drop", "ALL"]
    head += ["--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc"]
    tmp, write = layout.temp_dir, layout.writable_workspace
    private = layout.private_slash_tmp or tmp is None  # /tmp is the command's own
    if write and not layout.private_slash_tmp:
        head += ["--bind", "/tmp", "/tmp"]  # shared with the host, as most tools expect
    elif write and tmp is not None:
        head += ["--bind", tmp, "/tmp"]
    elif private:
        head += ["--tmpfs", "/tmp"]
    plan = [Mount(None, tuple(head))]
    plan += [_if_exists(d, "--tmpfs", d) for d in layout.hidden]
    plan += [_if_exists(p, "--ro-bind", p, p) for p in layout.shown]
    git = layout.git
    ws = layout.workspace
    if git is not None and not is_within(git.common_dir, ws):
        # The shared repository of a worktree may sit in a hidden or private place (/tmp).
        plan.append(_if_exists(git.common_dir, "--ro-bind", git.common_dir, git.common_dir))
    if not layout.writable_workspace:
        plan.append(_if_exists(ws, "--ro-bind", ws, ws))
    else:
        plan.append(Mount(None, ("--bind", ws, ws)))
        plan += [_if_exists(p, "--bind", p, p) for p in layout.writable]
        if git is not None:
            if not is_within(git.common_dir, ws):
                for name in GIT_COMMIT_DIRS:
                    path = os.path.join(git.common_dir, name)
                    plan.append(_if_exists(path, "--bind", path, path))
                plan.append(_if_exists(git.git_dir, "--bind", git.git_dir, git.git_dir))
            for path in _git_protected(git):
                plan.append(_held_read_only(path, directory=path.endswith("/hooks")))
        plan.append(_held_read_only(os.path.join(ws, ".xum"), directory=True))
    plan += [_if_exists(p, "--bind", p, p) for p in layout.always_writable]
    if not private and tmp is not None:
        # $TMPDIR: the session's own directory to write in; read-only, an empty throwaway one.
        if not write:
            plan.append(Mount(None, ("--tmpfs", tmp)))
        elif not any(is_within(tmp, root) for root in layout.writable):
            plan.append(Mount(None, ("--bind", tmp, tmp)))
    plan += [_if_exists(d, "--tmpfs", d, "--remount-ro", d) for d in layout.denied]
    plan += [_if_exists(f, "--ro-bind", "/dev/null", f) for f in layout.denied_files]
    # Only now, with every mount inside it in place (bwrap makes their mount points in it), is
    # a hidden directory made read-only: a command cannot leave files there for anyone, even in
    # the throwaway view. The remount is the directory's own, not the mounts inside it.
    plan += [_if_exists(d, "--remount-ro", d) for d in layout.hidden]
    shown_tmp = "/tmp" if private or tmp is None else tmp
    plan.append(Mount(None, ("--setenv", "TMPDIR", shown_tmp, "--chdir", cwd, "--")))
    return plan


def _held_read_only(path: str, *, directory: bool) -> Mount:
    # Missing: an empty, read-only directory in its place, so nothing can be planted there.
    absent = ("--tmpfs", path, "--remount-ro", path) if directory else ()
    return Mount(path, ("--ro-bind", path, path), absent)


def _make_held_mount_point(workspace: str) -> None:
    """Make the workspace's `.xum` directory when it is missing, as an empty one. The sandbox
    holds a missing `.xum` as an empty read-only directory, and bubblewrap makes its mount point
    in the writable workspace: the first sandboxed command leaves that empty directory on the
    host. The session sandbox is keyed by its mounts, so the second command saw a change (held
    empty, now bound) and started a new sandbox in every new workspace. Making it first leaves
    the same directory, and one sandbox serves the session from its first command. Something
    else in its place (a file, a link) stays as it is; the plan mounts what is there."""
    with contextlib.suppress(OSError):
        os.mkdir(os.path.join(workspace, ".xum"))


def argv_for(plan: Sequence[Mount], exists: Callable[[str], bool] = os.path.lexists) -> list[str]:
    """The plan decided here and now (the local runtime)."""
    argv: list[str] = []
    for step in plan:
        argv.extend(step.present if step.path is None or exists(step.path) else step.absent)
    return argv


def shell_for(plan: Sequence[Mount], script: str) -> str:
    """A bash script that decides the plan where it runs, then execs bwrap running `script`
    (a remote runtime: one round trip, and what exists is checked at that moment)."""
    lines = ["set --"]
    for step in plan:
        present = " ".join(shlex.quote(a) for a in step.present)
        absent = " ".join(shlex.quote(a) for a in step.absent)
        if step.path is None:
            lines.append(f'set -- "$@" {present}')
        else:
            test = f"[ -e {shlex.quote(step.path)} ] || [ -L {shlex.quote(step.path)} ]"
            other = f'else set -- "$@" {absent}; ' if absent else ""
            lines.append(f'if {test}; then set -- "$@" {present}; {other}fi')
    lines.append(f'exec "$@" bash -c {shlex.quote(script)}')
    return "\n".join(lines)


# What a remote runtime is asked once per session (run in the workspace): does bwrap work there,
# is the command user root, and where is the checkout's git data.
REMOTE_PROBE = r"""
if command -v bwrap >/dev/null 2>&1; then
  if out=$(bwrap --ro-bind / / --dev /dev --proc /proc --unshare-pid --die-with-parent -- true 2>&1)
  then echo "bwrap-ok $(bwrap --version 2>/dev/null | head -n1)"
  else echo "bwrap-fails $(printf %s "$out" | tail -n1)"; fi
else echo "bwrap-missing"; fi
echo "uid $(id -u)"
if g=$(git rev-parse --absolute-git-dir 2>/dev/null); then
  echo "gitdir $g"
  c=$(git rev-parse --git-common-dir 2>/dev/null) && echo "commondir $(cd -- "$c" && pwd -P)"
fi
exit 0
"""


@dataclass(frozen=True, slots=True)
class RemoteFacts:
    backend: Backend
    is_root: bool
    git: GitLayout | None


def parse_remote_probe(output: str, host: str) -> RemoteFacts:
    backend = Backend(False, f"the sandbox probe on {host} said nothing; {INSTALL_HINT} there")
    is_root = False
    git_dir = common = ""
    for line in output.splitlines():
        word, _, rest = line.partition(" ")
        if word == "bwrap-ok":
            backend = Backend(True, f"{rest.strip() or 'bubblewrap'} on {host}")
        elif word == "bwrap-missing":
            backend = Backend(False, f"bubblewrap is not installed on {host}; {INSTALL_HINT}")
        elif word == "bwrap-fails":
            backend = Backend(False, f"bwrap fails on {host} ({rest.strip()}); {INSTALL_HINT}")
        elif word == "uid":
            is_root = rest.strip() == "0"
        elif word == "gitdir":
            git_dir = rest
        elif word == "commondir":
            common = rest
    git = GitLayout(git_dir, common or git_dir) if git_dir.startswith("/") else None
    return RemoteFacts(backend, is_root, git)


class SandboxedRuntime(ForwardingRuntime):
    """A view of `inner` whose `exec` runs the script inside the sandbox. Files, paths and
    everything else are `inner`'s own (xum's file tools are fenced separately, in
    `xum.tools.paths`). It is made per tool call and owns nothing.

    `session`: the session's one sandbox (`xum.runtime.sandboxd`), used for a local
    workspace-write command; a read-only one keeps a fresh bwrap per command, since its
    writable `$TMPDIR` must be empty and thrown away with each command."""

    def __init__(
        self, inner: Runtime, layout: Layout, session: SessionSandbox | None = None
    ) -> None:
        super().__init__(inner)
        self.layout = layout
        self.session = session

    def __repr__(self) -> str:
        mode = "workspace-write" if self.layout.writable_workspace else "read-only"
        return f"SandboxedRuntime({self.inner!r}, {mode}, egress {self.layout.egress})"

    def _prepare_local(self) -> None:
        """What a local command needs on the host before its sandbox: its $TMPDIR, and (for the
        session sandbox) the workspace's held `.xum` mount point."""
        tmp = self.layout.temp_dir
        if tmp is not None:
            os.makedirs(tmp, mode=0o700, exist_ok=True)
        if self.session is not None and self.layout.writable_workspace:
            _make_held_mount_point(self.layout.workspace)

    async def start_session_sandbox(self) -> bool:
        """Start the session sandbox a command in the workspace's own directory would run in,
        ahead of the command (the session's first request is on its way, and the model takes
        far longer to answer than the sandbox to start): the first command then finds it
        running, under the same key. False when commands here do not use one, or it could not
        start (the first command then does what it always did)."""
        from xum.runtime.local import LocalRuntime

        if (
            self.session is None
            or not self.layout.writable_workspace
            or not isinstance(self.inner, LocalRuntime)
        ):
            return False
        self._prepare_local()
        plan = mount_plan(self.layout, cwd=self.inner.workspace_path)
        return await self.session.start(argv_for(plan[:-1]))

    async def exec(
        self,
        script: str,
        *,
        env: Mapping[str, str],
        cwd: str | None = None,
        timeout_s: float | None = None,
        on_output: OutputSink | None = None,
    ) -> ExecResult:
        from xum.runtime.local import LocalRuntime

        where = self.inner.resolve(cwd) if cwd else self.inner.workspace_path
        plan = mount_plan(self.layout, cwd=where)
        if isinstance(self.inner, LocalRuntime):
            self._prepare_local()
            if self.session is not None and self.layout.writable_workspace:
                # The last step names the command's $TMPDIR and directory: per command, the
                # rest is the session sandbox's boundaries.
                tail = plan[-1].present
                full_env = self.inner.base_env()
                full_env.update(env)
                full_env["TMPDIR"] = tail[2]
                result = await self.session.run(
                    argv_for(plan[:-1]),
                    script,
                    env=full_env,
                    cwd=where,
                    timeout_s=timeout_s,
                    on_output=on_output,
                )
                if result is not None:
                    return result
            return await self.inner.exec(
                script,
                env=env,
                cwd=cwd,
                timeout_s=timeout_s,
                on_output=on_output,
                argv_prefix=argv_for(plan),
            )
        # Elsewhere (SSH) the runtime runs a bash script: one that execs bwrap, so the sandbox
        # is the command's process (its group, its lifeline) and nothing is left outside it.
        wrapped = shell_for(plan, script)
        return await self.inner.exec(
            wrapped, env=env, cwd=cwd, timeout_s=timeout_s, on_output=on_output
        )
