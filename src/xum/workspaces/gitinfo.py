"""Git status and diff of a workspace, bounded, for the review panel.

Git runs through the workspace's runtime, so the same code serves a local directory, a worktree
and an SSH host's checkout (where each git call is one round trip over the shared connection).
Output is cut on the runtime's side (`head -c`) and read up to a limit, so a huge diff costs a
bounded amount of memory and transfer. The base of a diff is the merge-base of the workspace's
HEAD with its parent workspace's branch (a fork) or with the project's default branch
(`origin/HEAD`, else `main`, else `master`); without either, HEAD.
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass, field

from xum.runtime.base import Runtime
from xum.runtime.ssh import SshError

GIT_TIMEOUT_S = 30.0
MAX_STATUS_ENTRIES = 2000
MAX_DIFF_BYTES = 512 * 1024
MAX_UNTRACKED_DIFFS = 100
# The user's git config applies; nothing may wait for a prompt or take optional locks.
GIT_ENV = {"GIT_TERMINAL_PROMPT": "0", "LC_ALL": "C", "GIT_OPTIONAL_LOCKS": "0"}
# Between the untracked files' diffs in one command's output (git never prints a NUL in one).
_FILE_SEP = b"\0xum-untracked\0"


@dataclass
class GitOutput:
    code: int
    out: bytes
    truncated: bool


class _Collect:
    """An output sink that keeps at most `limit` bytes and notes whether more came."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.data = bytearray()
        self.more = False

    def __call__(self, chunk: bytes) -> None:
        room = self.limit - len(self.data)
        if len(chunk) > room:
            self.more = True
        if room > 0:
            self.data += chunk[:room]


async def run_bounded(runtime: Runtime, script: str, limit: int) -> GitOutput:
    """Run `script` (git commands, stderr discarded by the caller) in the workspace; its stdout
    is cut after `limit` bytes on the runtime's side. A command that could not start (the
    checkout is gone) reads as exit code -1. The exit status a runtime reserves for its own
    transport (`Runtime.transport_failure_exit`: ssh's 255, which git never exits with) is
    SshError, with ssh's message."""
    sink = _Collect(limit)
    wrapped = f"{{ {script}\n}} | head -c {limit + 1}\nexit ${{PIPESTATUS[0]}}"
    try:
        result = await runtime.exec(wrapped, env=GIT_ENV, timeout_s=GIT_TIMEOUT_S, on_output=sink)
    except OSError:
        return GitOutput(-1, b"", False)
    if result.exit_code is not None and result.exit_code == runtime.transport_failure_exit:
        said = bytes(sink.data).decode(errors="replace").strip().splitlines()
        raise SshError(said[-1] if said else "ssh exited with status 255")
    code = -1 if result.exit_code is None else result.exit_code
    return GitOutput(code, bytes(sink.data), sink.more)


def _git(args: list[str]) -> str:
    return shlex.join(["git", "-c", "core.quotepath=off", *args]) + " 2>/dev/null"


async def git_bounded(
    runtime: Runtime, args: list[str], limit: int = MAX_DIFF_BYTES * 4
) -> GitOutput:
    return await run_bounded(runtime, _git(args), limit)


async def _text(runtime: Runtime, args: list[str]) -> str | None:
    done = await git_bounded(runtime, args, 64 * 1024)
    return done.out.decode("utf-8", "replace").strip() if done.code == 0 else None


@dataclass
class StatusEntry:
    path: str
    index: str
    worktree: str
    orig_path: str | None = None


@dataclass
class GitStatus:
    is_git: bool
    branch: str | None = None
    entries: list[StatusEntry] = field(default_factory=list)
    truncated: bool = False


async def is_git_dir(runtime: Runtime) -> bool:
    return await _text(runtime, ["rev-parse", "--is-inside-work-tree"]) == "true"


async def status(runtime: Runtime) -> GitStatus:
    if not await is_git_dir(runtime):
        return GitStatus(is_git=False)
    branch = await _text(runtime, ["symbolic-ref", "--quiet", "--short", "HEAD"])
    done = await git_bounded(
        runtime, ["status", "--porcelain=v1", "-z", "--untracked-files=all"], 4 * 1024 * 1024
    )
    fields = done.out.split(b"\0")
    entries: list[StatusEntry] = []
    truncated = done.truncated
    i = 0
    while i < len(fields):
        item = fields[i]
        i += 1
        if len(item) < 4:
            continue
        x, y = chr(item[0]), chr(item[1])
        entry = StatusEntry(item[3:].decode("utf-8", "replace"), x, y)
        if x in "RC" or y in "RC":
            if i < len(fields):
                entry.orig_path = fields[i].decode("utf-8", "replace")
            i += 1
        if len(entries) == MAX_STATUS_ENTRIES:
            truncated = True
            break
        entries.append(entry)
    return GitStatus(True, branch, entries, truncated)


@dataclass
class Base:
    ref: str
    sha: str


async def default_branch(runtime: Runtime) -> str | None:
    head = await _text(runtime, ["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"])
    if head:
        return head
    for name in ("main", "master"):
        if await _text(runtime, ["rev-parse", "--verify", "--quiet", f"refs/heads/{name}"]):
            return name
    return None


async def find_base(runtime: Runtime, parent_branch: str | None) -> Base | None:
    head = await _text(runtime, ["rev-parse", "--verify", "--quiet", "HEAD"])
    if head is None:
        return None
    if parent_branch:
        sha = await _text(runtime, ["merge-base", "HEAD", parent_branch])
        if sha:
            return Base(parent_branch, sha)
    ref = await default_branch(runtime)  # asked only when the parent branch gives no base
    if ref:
        sha = await _text(runtime, ["merge-base", "HEAD", ref])
        if sha:
            return Base(ref, sha)
    return Base("HEAD", head)


async def ahead_behind(runtime: Runtime, base: Base) -> tuple[int, int]:
    out = await _text(runtime, ["rev-list", "--left-right", "--count", f"HEAD...{base.ref}"])
    if not out:
        return 0, 0
    try:
        ahead, behind = (int(n) for n in out.split())
    except ValueError:
        return 0, 0
    return ahead, behind


@dataclass
class FileStat:
    path: str
    additions: int
    deletions: int
    binary: bool
    untracked: bool = False


@dataclass
class GitDiff:
    base: Base | None
    files: list[FileStat]
    diff: str
    truncated: bool


async def diff(runtime: Runtime, base: Base, only: str | None = None) -> GitDiff:
    spec = ["--", only] if only else []
    numstat = await git_bounded(
        runtime, ["diff", "--numstat", "-z", "-M", base.sha, *spec], 4 * 1024 * 1024
    )
    files = _parse_numstat(numstat.out)
    text = await git_bounded(runtime, ["diff", "-M", "--no-color", base.sha, *spec], MAX_DIFF_BYTES)
    out = bytearray(text.out)
    truncated = text.truncated or numstat.truncated
    untracked = await git_bounded(
        runtime, ["ls-files", "--others", "--exclude-standard", "-z", *spec], 1024 * 1024
    )
    names = [n.decode("utf-8", "replace") for n in untracked.out.split(b"\0") if n]
    if untracked.truncated and names:
        names.pop()  # the last name may be cut
    names = names[:MAX_UNTRACKED_DIFFS]
    if names and len(out) < MAX_DIFF_BYTES:
        added, cut = await _untracked_diffs(runtime, names, MAX_DIFF_BYTES - len(out))
        for rel, one in added:
            out += one
            adds = one.count(b"\n+") - 1 if b"Binary files" not in one else 0
            files.append(FileStat(rel, max(adds, 0), 0, b"Binary files" in one, untracked=True))
        truncated = truncated or cut
    elif names:
        truncated = True
    if len(out) > MAX_DIFF_BYTES:
        out = out[:MAX_DIFF_BYTES]
        truncated = True
    return GitDiff(base, files, out.decode("utf-8", "replace"), truncated)


async def _untracked_diffs(
    runtime: Runtime, names: list[str], limit: int
) -> tuple[list[tuple[str, bytes]], bool]:
    """Each untracked file's diff against /dev/null, all from one command (one round trip on
    SSH). Returns (name, diff) pairs in order, and whether the output was cut."""
    sep = _printf(_FILE_SEP)
    script = "\n".join(
        f"{sep}; {_git(['diff', '--no-index', '--no-color', '--', '/dev/null', name])}"
        for name in names
    )
    done = await run_bounded(runtime, script, limit + len(_FILE_SEP) * len(names))
    parts = done.out.split(_FILE_SEP)[1:]
    return list(zip(names, parts, strict=False)), done.truncated


def _printf(data: bytes) -> str:
    """A `printf` command that writes `data` exactly: bytes other than plain printable ASCII
    (and `%`, `\\`, `'`) as octal escapes, in a single-quoted format."""
    special = {ord(c) for c in "%\\'"}
    escaped = "".join(
        chr(b) if 0x20 <= b < 0x7F and b not in special else f"\\{b:03o}" for b in data
    )
    return f"printf '{escaped}'"


def _parse_numstat(raw: bytes) -> list[FileStat]:
    files: list[FileStat] = []
    fields = raw.split(b"\0")
    i = 0
    while i < len(fields):
        head = fields[i]
        i += 1
        if not head:
            continue
        parts = head.split(b"\t")
        if len(parts) < 3:
            continue
        adds, dels, name = parts[0], parts[1], parts[2]
        if not name:  # a rename: the old and new paths follow as their own fields
            name = fields[i + 1] if i + 1 < len(fields) else b""
            i += 2
        binary = adds == b"-"
        files.append(
            FileStat(
                name.decode("utf-8", "replace"),
                0 if binary else int(adds),
                0 if binary else int(dels),
                binary,
            )
        )
    return files
