"""The SSH runtime: commands and files on a remote host, through the system `ssh`.

The host is anything `ssh <host>` accepts (a name, `user@name`, an alias from the user's ssh
config); everything else about the connection (keys, ports, jump hosts) is the user's ssh config.
xum adds only what its threat model needs (the remote host may be hostile):

* no agent forwarding (`-a`, `ForwardAgent=no`), no X11 (`-x`), no port forwardings, no local
  commands, no TTY, and `BatchMode=yes` (never a password prompt nobody would answer);
* one multiplexed connection per host (`ControlMaster=auto`, `ControlPersist`), its socket in a
  private directory under `$XUM_ROOT`, so each command costs a round trip instead of a handshake;
* nothing of the local environment is sent: a command sees the remote login environment plus the
  variables the caller passes (the `XUM_*` set and the project's secrets). The ssh client itself
  runs without xum's own secrets (`client_env`), so a `SendEnv` in the user's ssh config cannot
  forward a provider key either.

How a command runs. The remote side is a small bash bootstrap (`_BOOTSTRAP`). The command line
that ssh shows to the remote (and to its `ps`) holds only the bootstrap; the caller's script and
environment travel on stdin, ended by a NUL byte, so secrets never appear in an argv. The
bootstrap starts the script as a job in its own process group (bash job control, `set -m`) with
stdin from /dev/null, then keeps reading its own stdin: that pipe is the lifeline. When it reaches
end-of-file (xum closed it on a timeout or an interrupt, or xum died, or the connection dropped)
the whole remote process group gets SIGTERM and, a second later, SIGKILL. When the script exits
by itself, background jobs it left holding the output get a short grace and are stopped too, so
a command never outlives its call (on this runtime, unlike the local one, that includes jobs that
redirected their output away).

File operations are small remote scripts (`cat`/`head`, temp file + `mv`, `stat`, `realpath -m`
or python3), each one round trip over the shared connection.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import hashlib
import os
import posixpath
import re
import shlex
import signal
import stat
import subprocess
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import BinaryIO

from xum.core.ownsecrets import without_own_secrets
from xum.core.paths import ensure_private_dir, xum_root
from xum.runtime import childwatch
from xum.runtime.base import ExecResult, FileStat, NotRegularFileError, OutputSink, RuntimeKind

# Laid over the remote login environment for every command (as the local runtime does).
NON_INTERACTIVE_ENV: dict[str, str] = {
    "PAGER": "cat",
    "GIT_PAGER": "cat",
    "GIT_TERMINAL_PROMPT": "0",
}
# Variables that name local paths: meaningless (or misleading) on the remote.
LOCAL_ONLY_ENV = frozenset({"XUM_SCRATCH_DIR"})
# The most bytes a tool's spill file keeps here (the local runtime's: `SPILL_CAP_BYTES`).
SSH_SPILL_CAP_BYTES = 64 * 1024 * 1024
# Where `publish_file` puts files under the remote scratch dir.
PUBLISHED_DIR = "tool-output"

CONTROL_PERSIST_S = 300
CONNECT_TIMEOUT_S = 15
FILE_OP_TIMEOUT_S = 120.0
# After the lifeline closes, how long the remote gets to stop the group and report back before
# the local ssh client is killed (which closes the channel: the remote still stops the group).
STOP_GRACE_S = 4.0
READ_CHUNK = 256 * 1024
SSH_CONFIG_ENV = "XUM_SSH_CONFIG"

# Left-over members of the command's group get a grace period, then are stopped; zombies do not
# count (`xum_live` reads /proc where it can: state and process group after the name's ")"): a
# host or container whose init never reaps keeps orphans as zombies, and each command would
# otherwise wait out the whole grace for them.
# The bootstrap's own stderr goes before job control starts: a job that ends before `set +m`
# would otherwise have bash print "[1]+ Done ..." into the command's output (seen in a
# container, whose exec merges the streams).
_BOOTSTRAP = r"""
IFS= read -r -d '' xum_payload || exit 254
exec 3<&0
exec 2>/dev/null
set -m
( set +m; exec 2>&1 3<&-; eval "$xum_payload" ) </dev/null &
xum_job=$!
set +m
unset xum_payload
( while IFS= read -r _; do :; done
  kill -TERM -- -"$xum_job"; sleep 1; kill -KILL -- -"$xum_job" ) <&3 >/dev/null 2>&1 &
xum_watch=$!
exec 3<&-
wait "$xum_job"; xum_rc=$?
xum_live() {
  kill -0 -- -"$xum_job" || return 1
  [ -r /proc/self/stat ] || return 0
  for xum_stat in /proc/[0-9]*/stat; do
    read -r xum_line < "$xum_stat" || continue
    set -- ${xum_line##*) }
    [ "$1" != Z ] && [ "$3" = "$xum_job" ] && return 0
  done
  return 1
}
if xum_live; then
  sleep 0.25; kill -TERM -- -"$xum_job"
  for _ in 1 2 3 4 5 6 7 8 9 10; do xum_live || break; sleep 0.05; done
  kill -KILL -- -"$xum_job"
fi
kill "$xum_watch"
exit "$xum_rc"
"""

_READ = r"""
f=$1; n=$2
if [ -d "$f" ]; then exit 21; fi
if [ ! -e "$f" ]; then exit 2; fi
if [ ! -f "$f" ]; then exit 22; fi
if [ ! -r "$f" ]; then exit 13; fi
if [ -n "$n" ]; then exec head -c "$n" -- "$f"; else exec cat -- "$f"; fi
"""

_WRITE = r"""
f=$1; d=${f%/*}; [ -n "$d" ] || d=/
mkdir -p -- "$d" || exit 1
t="$d/.${f##*/}.$$.$RANDOM$RANDOM.xum-tmp"
set -C
if ! cat > "$t"; then rm -f -- "$t"; exit 1; fi
if [ -e "$f" ]; then
  chmod --reference="$f" -- "$t" 2>/dev/null || chmod "$(stat -c %a -- "$f")" -- "$t"
fi
sync -- "$t" 2>/dev/null
mv -f -- "$t" "$f" || { rm -f -- "$t"; exit 1; }
"""

# Like _WRITE, for xum's own files (spill files): private (umask 077), the directory too.
_UPLOAD = r"""
umask 077
f=$1; d=${f%/*}; [ -n "$d" ] || d=/
mkdir -p -- "$d" || exit 1
t="$d/.${f##*/}.$$.$RANDOM$RANDOM.xum-tmp"
set -C
if ! cat > "$t"; then rm -f -- "$t"; exit 1; fi
mv -f -- "$t" "$f" || { rm -f -- "$t"; exit 1; }
"""

_STAT = r"""stat -c '%f %s %.9Y' -- "$1" 2>&1 || stat -c '%f %s %Y' -- "$1" """

_REALPATH = r"""
realpath -m -- "$1" 2>/dev/null && exit 0
python3 -c 'import os, sys; print(os.path.realpath(sys.argv[1]))' "$1"
"""

# A directory's entries, NUL-separated (names may hold newlines); exit 2: not a directory.
_LIST = r"""
[ -d "$1" ] || exit 2
cd -- "$1" 2>/dev/null || exit 13
shopt -s nullglob dotglob
for f in *; do printf '%s\0' "$f"; done
"""

_HOST_RE = re.compile(r"[^\s\x00-\x1f\x7f]+")


class SshError(ConnectionError):
    """ssh itself failed (connection refused, authentication, host key): exit status 255."""


def check_host(host: str) -> str:
    """Refuse hosts that ssh would read as an option or that could smuggle arguments."""
    if not host or host.startswith("-") or not _HOST_RE.fullmatch(host):
        raise ValueError(f"not a usable ssh host: {host!r}")
    return host


def control_dir() -> Path:
    """The private directory for multiplexing sockets. A unix socket path is limited to about
    104 bytes, and ssh adds a 40-character hash and a temporary suffix, so a deep `$XUM_ROOT`
    falls back to a private directory under the system temp dir."""
    preferred = xum_root() / "ssh"
    if len(str(preferred)) <= 45:
        return ensure_private_dir(preferred)
    fallback = Path(tempfile.gettempdir()) / f"xum-ssh-{os.getuid()}"
    hashed = hashlib.sha256(str(xum_root()).encode()).hexdigest()[:8]
    path = fallback / hashed
    ensure_private_dir(fallback)
    if fallback.stat().st_uid != os.getuid():
        raise PermissionError(f"{fallback} belongs to another user; set a shorter XUM_ROOT")
    return ensure_private_dir(path)


def client_env() -> dict[str, str]:
    """The environment of every ssh client xum starts: xum's own, less its own secrets (ssh
    needs HOME, SSH_AUTH_SOCK and the like; it never needs a provider key)."""
    return without_own_secrets(os.environ)


def ssh_command(host: str, remote_command: str) -> list[str]:
    """The full argv that runs `remote_command` (a shell command line) on `host`."""
    argv = ["ssh"]
    config = os.environ.get(SSH_CONFIG_ENV)
    if config:
        argv += ["-F", config]
    argv += [
        "-T",
        "-a",
        "-x",
        "-o", "BatchMode=yes",
        "-o", "ForwardAgent=no",
        "-o", "ForwardX11=no",
        "-o", "ClearAllForwardings=yes",
        "-o", "PermitLocalCommand=no",
        "-o", f"ConnectTimeout={CONNECT_TIMEOUT_S}",
        "-o", "ServerAliveInterval=15",
        "-o", "ServerAliveCountMax=4",
        "-o", "ControlMaster=auto",
        "-o", f"ControlPath={control_dir()}/%C",
        "-o", f"ControlPersist={CONTROL_PERSIST_S}",
        "--",
        check_host(host),
        remote_command,
    ]  # fmt: skip
    return argv


def close_master(host: str) -> None:
    """End xum's multiplexed connection to `host` now (`ssh -O exit`); a no-op without one."""
    argv = ssh_command(host, "true")
    argv[argv.index("--") : argv.index("--") + 1] = ["-O", "exit", "--"]
    argv.pop()  # no remote command with -O
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        subprocess.run(argv, capture_output=True, timeout=10, check=False, env=client_env())


def remote_bash(script: str, *args: str) -> str:
    """A remote command line that runs `script` with bash, `args` as its positional parameters."""
    return " ".join(["exec bash -c", shlex.quote(script), "xum", *map(shlex.quote, args)])


def run_ssh_sync(
    host: str,
    script: str,
    *args: str,
    input: bytes | None = None,
    timeout_s: float = FILE_OP_TIMEOUT_S,
) -> subprocess.CompletedProcess[bytes]:
    """Run a small remote bash script and capture its output (lifecycle code, not tools).
    Raises SshError when ssh itself fails."""
    try:
        done = subprocess.run(
            ssh_command(host, remote_bash(script, *args)),
            input=input if input is not None else b"",
            capture_output=True,
            timeout=timeout_s,
            check=False,
            env=client_env(),
        )
    except FileNotFoundError:
        raise SshError("ssh is not installed (the SSH runtime uses the system `ssh`)") from None
    if done.returncode == 255:
        raise SshError(_ssh_message(host, done.stderr))
    return done


def _ssh_message(host: str, stderr: bytes) -> str:
    text = stderr.decode(errors="replace").strip() or "exit status 255"
    return f"ssh {host}: {text.splitlines()[-1]}"


def _payload(script: str, env: Mapping[str, str], cwd: str) -> bytes:
    if "\0" in script:
        raise ValueError("the script contains a NUL byte")
    lines = []
    merged = dict(NON_INTERACTIVE_ENV)
    merged.update(env)
    for name, value in merged.items():
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", name) and "\0" not in value:
            lines.append(f"export {name}={shlex.quote(value)}")
    lines.append(f"cd -- {shlex.quote(cwd)} || exit 1")
    lines.append(script)
    return ("\n".join(lines) + "\n").encode() + b"\0"


class SshRuntime:
    kind: RuntimeKind = "ssh"
    # A spill file crosses the network a second time (to the host, `publish_file`): it keeps less.
    spill_cap: int = SSH_SPILL_CAP_BYTES
    sees_local_files: bool = False
    transport_failure_exit: int | None = 255

    def __init__(
        self,
        host: str,
        workspace_path: str,
        *,
        home: str,
        temp_dir: str = "/tmp",
        scratch_dir: str | None = None,
    ) -> None:
        """`scratch_dir`: a private remote directory for xum's files about this workspace (bash
        spill files); by default one under `temp_dir` named after the workspace path."""
        self.host = check_host(host)
        self.home = home
        self.workspace_path = posixpath.normpath(workspace_path)
        self.temp_dir = temp_dir
        if scratch_dir is None:
            key = hashlib.sha256(f"{host}\0{self.workspace_path}".encode()).hexdigest()[:12]
            scratch_dir = posixpath.join(temp_dir, f"xum-scratch-{key}")
        self.scratch_dir = posixpath.normpath(scratch_dir)

    def __repr__(self) -> str:
        return f"SshRuntime({self.host!r}, {self.workspace_path!r})"

    # -- paths -------------------------------------------------------------------------------

    def _expand(self, path: str) -> str:
        if path == "~" or path.startswith("~/"):
            return self.home + path[1:]
        return path

    def _joined(self, path: str) -> str:
        return posixpath.join(self.workspace_path, self._expand(path))

    def resolve(self, path: str) -> str:
        return posixpath.normpath(self._joined(path))

    async def realpath(self, path: str) -> str:
        done = await self._run(_REALPATH, self._joined(path))
        out = done[1].decode(errors="surrogateescape").strip()
        if done[0] != 0 or not out:
            raise OSError(errno.EIO, f"cannot resolve {path} on {self.host}")
        return out

    # -- processes ---------------------------------------------------------------------------

    async def exec(
        self,
        script: str,
        *,
        env: Mapping[str, str],
        cwd: str | None = None,
        timeout_s: float | None = None,
        on_output: OutputSink | None = None,
    ) -> ExecResult:
        started = time.monotonic()
        where = self.resolve(cwd) if cwd else self.workspace_path
        payload = _payload(script, self._remote_env(env), where)
        childwatch.install()
        proc = await asyncio.create_subprocess_exec(
            *self._argv("exec bash -c " + shlex.quote(_BOOTSTRAP)),
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # a Ctrl-C on xum's terminal is xum's to handle, not ssh's
            env=client_env(),
        )
        assert proc.stdin is not None and proc.stdout is not None
        timed_out = False
        try:
            try:
                async with asyncio.timeout(timeout_s):
                    try:
                        proc.stdin.write(payload)
                        await proc.stdin.drain()
                    except (BrokenPipeError, ConnectionResetError):
                        pass  # ssh died first (no connection): its exit status and message tell
                    await _pump(proc.stdout, on_output)
                    await proc.wait()
            except TimeoutError:
                timed_out = True
                await _stop(proc, on_output)
        except asyncio.CancelledError:
            await _stop(proc, None)
            raise
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            raise
        finally:
            with contextlib.suppress(Exception):
                proc.stdin.close()
        code = proc.returncode
        if timed_out:
            sig = code - 128 if code is not None and 128 < code < 160 else signal.SIGKILL
            return ExecResult(
                exit_code=None,
                signal=int(sig),
                timed_out=True,
                duration_s=time.monotonic() - started,
            )
        return ExecResult(exit_code=code, duration_s=time.monotonic() - started)

    # -- files -------------------------------------------------------------------------------

    async def read_bytes(self, path: str, *, limit: int | None = None) -> bytes:
        resolved = self.resolve(path)
        rc, out, err = await self._run(_READ, resolved, "" if limit is None else str(limit))
        if rc == 0:
            return out
        if rc == 2:
            raise FileNotFoundError(errno.ENOENT, "no such file", resolved)
        if rc == 21:
            raise IsADirectoryError(errno.EISDIR, "is a directory", resolved)
        if rc == 22:
            raise NotRegularFileError(errno.EINVAL, "not a regular file", resolved)
        if rc == 13:
            raise PermissionError(errno.EACCES, "permission denied", resolved)
        raise OSError(errno.EIO, err.decode(errors="replace").strip() or f"exit {rc}", resolved)

    async def write_bytes_atomic(self, path: str, data: bytes) -> None:
        resolved = self.resolve(path)
        rc, _out, err = await self._run(_WRITE, resolved, input=data)
        if rc != 0:
            message = err.decode(errors="replace").strip() or f"exit {rc}"
            if "Permission denied" in message:
                raise PermissionError(errno.EACCES, message, resolved)
            raise OSError(errno.EIO, message, resolved)

    async def upload(self, local: Path, path: str, *, timeout_s: float = FILE_OP_TIMEOUT_S) -> None:
        """Copy a local file to `path` on the host (created 0600, missing directories 0700),
        streamed from disk rather than held in memory."""
        resolved = self.resolve(path)
        with open(local, "rb") as source:
            rc, _out, err = await self._run(_UPLOAD, resolved, stdin=source, timeout_s=timeout_s)
        if rc != 0:
            message = err.decode(errors="replace").strip() or f"exit {rc}"
            raise OSError(errno.EIO, message, resolved)

    async def publish_file(self, local: Path) -> str:
        """Copy `local` into the remote scratch dir (`tool-output/<same name>`, where the tools
        on the host read it) and remove the local copy; returns the remote path. Raises OSError
        when the copy fails (the local file is then kept)."""
        remote = f"{self.scratch_dir}/{PUBLISHED_DIR}/{local.name}"
        await self.upload(local, remote)
        with contextlib.suppress(OSError):
            local.unlink()
        return remote

    async def list_dir(self, path: str) -> list[str] | None:
        """The names in a directory on the host ([] when it is not one; None when it cannot be
        read), so project agents and skills are found on an SSH workspace too."""
        rc, out, _err = await self._run(_LIST, self.resolve(path))
        if rc == 2:
            return []
        if rc != 0:
            return None
        return [n for n in out.decode(errors="surrogateescape").split("\0") if n]

    async def stat(self, path: str) -> FileStat:
        resolved = self.resolve(path)
        rc, out, _err = await self._run(_STAT, resolved)
        fields = out.decode(errors="replace").split()
        if rc != 0 or len(fields) != 3:
            return FileStat(path=resolved, exists=False)
        mode = int(fields[0], 16)
        seconds, _, fraction = fields[2].partition(".")
        mtime_ns = int(seconds) * 1_000_000_000 + int((fraction or "0").ljust(9, "0")[:9])
        return FileStat(
            path=resolved,
            exists=True,
            is_file=stat.S_ISREG(mode),
            is_dir=stat.S_ISDIR(mode),
            is_symlink=stat.S_ISLNK(mode),
            size=int(fields[1]),
            mode=mode,
            mtime_ns=mtime_ns,
        )

    async def close(self) -> None:
        # The multiplexed connection is shared by every workspace on the host and ends by
        # itself after ControlPersist seconds idle.
        return None

    # -- internals ---------------------------------------------------------------------------

    async def _run(
        self,
        script: str,
        *args: str,
        input: bytes | None = None,
        stdin: BinaryIO | None = None,
        timeout_s: float = FILE_OP_TIMEOUT_S,
    ) -> tuple[int, bytes, bytes]:
        """`input`: bytes for the script's stdin; `stdin`: an open file to read it from instead."""
        childwatch.install()
        proc = await asyncio.create_subprocess_exec(
            *self._argv(remote_bash(script, *args)),
            stdin=stdin if stdin is not None else asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            start_new_session=True,
            env=client_env(),
        )
        try:
            async with asyncio.timeout(timeout_s):
                if stdin is not None:
                    out, err = await proc.communicate()
                else:
                    out, err = await proc.communicate(input if input is not None else b"")
        except BaseException:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            raise
        code = proc.returncode if proc.returncode is not None else -1
        if code == self.transport_failure_exit:
            raise self._transport_error(err)
        return code, out, err

    def client_argv(self, remote_command: str) -> list[str]:
        """The client command line that runs `remote_command` where the workspace is, for a
        process xum talks to over its stdio (an external agent on the host)."""
        return self._argv(remote_command)

    def _argv(self, remote_command: str) -> list[str]:
        """The client command line that runs `remote_command` (a shell command line) where the
        workspace is. A runtime that reaches its files another way (a container) overrides it."""
        return ssh_command(self.host, remote_command)

    def _remote_env(self, env: Mapping[str, str]) -> dict[str, str]:
        """What of the caller's environment a command gets: not the variables naming local
        paths."""
        return {k: v for k, v in env.items() if k not in LOCAL_ONLY_ENV}

    def _transport_error(self, stderr: bytes) -> OSError:
        """The error for a client that exited with `transport_failure_exit`."""
        return SshError(_ssh_message(self.host, stderr))


async def _pump(stream: asyncio.StreamReader, on_output: OutputSink | None) -> None:
    while chunk := await stream.read(READ_CHUNK):
        if on_output is not None:
            on_output(chunk)


async def _stop(proc: asyncio.subprocess.Process, on_output: OutputSink | None) -> None:
    """Close the lifeline (the remote stops the command's process group), collect what is still
    in flight, and make sure the local ssh client is gone, even if cancelled again meanwhile."""
    assert proc.stdin is not None and proc.stdout is not None
    with contextlib.suppress(Exception):
        proc.stdin.close()
    try:
        async with asyncio.timeout(STOP_GRACE_S):
            await _pump(proc.stdout, on_output)
            await proc.wait()
    except TimeoutError:
        pass
    finally:
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
            with contextlib.suppress(Exception):
                await asyncio.shield(proc.wait())
