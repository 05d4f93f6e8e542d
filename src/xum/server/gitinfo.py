"""Git status and diff of a workspace, bounded, for the review panel.

Runs the system `git` (the user's own config applies) with output read up to a limit and the
process killed past it, so a huge diff costs a bounded amount of memory. The base of a diff is
the merge-base of the workspace's HEAD with its parent workspace's branch (a fork) or with the
project's default branch (`origin/HEAD`, else `main`, else `master`); without either, HEAD.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

GIT_TIMEOUT_S = 30.0
MAX_STATUS_ENTRIES = 2000
MAX_DIFF_BYTES = 512 * 1024
MAX_UNTRACKED_DIFFS = 100


@dataclass
class GitOutput:
    code: int
    out: bytes
    truncated: bool


def git_bounded(args: list[str], cwd: str, limit: int = MAX_DIFF_BYTES * 4) -> GitOutput:
    env = dict(os.environ)
    env.update(GIT_TERMINAL_PROMPT="0", LC_ALL="C", GIT_OPTIONAL_LOCKS="0")
    proc = subprocess.Popen(
        ["git", "-c", "core.quotepath=off", *args],
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
    )
    assert proc.stdout is not None
    chunks: list[bytes] = []
    size = 0
    truncated = False
    try:
        while True:
            chunk = proc.stdout.read(65536)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
            if size > limit:
                truncated = True
                proc.kill()
                break
        code = proc.wait(timeout=GIT_TIMEOUT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        code = -1
    finally:
        proc.stdout.close()
    data = b"".join(chunks)
    return GitOutput(code, data[:limit], truncated)


def _text(args: list[str], cwd: str) -> str | None:
    done = git_bounded(args, cwd, 64 * 1024)
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


def is_git_dir(path: str) -> bool:
    return Path(path).is_dir() and _text(["rev-parse", "--is-inside-work-tree"], path) == "true"


def status(path: str) -> GitStatus:
    if not is_git_dir(path):
        return GitStatus(is_git=False)
    branch = _text(["symbolic-ref", "--quiet", "--short", "HEAD"], path)
    done = git_bounded(
        ["status", "--porcelain=v1", "-z", "--untracked-files=all"], path, 4 * 1024 * 1024
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


def default_branch(repo: str) -> str | None:
    head = _text(["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"], repo)
    if head:
        return head
    for name in ("main", "master"):
        if _text(["rev-parse", "--verify", "--quiet", f"refs/heads/{name}"], repo):
            return name
    return None


def find_base(path: str, parent_branch: str | None) -> Base | None:
    head = _text(["rev-parse", "--verify", "--quiet", "HEAD"], path)
    if head is None:
        return None
    for ref in (parent_branch, default_branch(path)):
        if not ref:
            continue
        sha = _text(["merge-base", "HEAD", ref], path)
        if sha:
            return Base(ref, sha)
    return Base("HEAD", head)


def ahead_behind(path: str, base: Base) -> tuple[int, int]:
    out = _text(["rev-list", "--left-right", "--count", f"HEAD...{base.ref}"], path)
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


def diff(path: str, base: Base, only: str | None = None) -> GitDiff:
    spec = ["--", only] if only else []
    numstat = git_bounded(["diff", "--numstat", "-z", "-M", base.sha, *spec], path, 4 * 1024 * 1024)
    files = _parse_numstat(numstat.out)
    text = git_bounded(["diff", "-M", "--no-color", base.sha, *spec], path, MAX_DIFF_BYTES)
    out = bytearray(text.out)
    truncated = text.truncated or numstat.truncated
    untracked = git_bounded(
        ["ls-files", "--others", "--exclude-standard", "-z", *spec], path, 1024 * 1024
    )
    for name in [n for n in untracked.out.split(b"\0") if n][:MAX_UNTRACKED_DIFFS]:
        rel = name.decode("utf-8", "replace")
        if len(out) >= MAX_DIFF_BYTES:
            truncated = True
            break
        one = git_bounded(
            ["diff", "--no-index", "--no-color", "--", "/dev/null", rel],
            path,
            MAX_DIFF_BYTES - len(out),
        )
        out += one.out
        truncated = truncated or one.truncated
        adds = one.out.count(b"\n+") - 1 if b"Binary files" not in one.out else 0
        files.append(FileStat(rel, max(adds, 0), 0, b"Binary files" in one.out, untracked=True))
    if len(out) > MAX_DIFF_BYTES:
        out = out[:MAX_DIFF_BYTES]
        truncated = True
    return GitDiff(base, files, out.decode("utf-8", "replace"), truncated)


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
