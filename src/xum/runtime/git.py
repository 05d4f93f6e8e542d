"""Small helpers over the system `git` binary (it honours the user's own git config).

These are lifecycle operations, not hot paths: they are synchronous (callers in async code wrap
them in `asyncio.to_thread`). Messages from git are passed through: they are the best
explanation of what went wrong.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

from xum.core.errors import XumError
from xum.core.ownsecrets import without_own_secrets

GIT_TIMEOUT_S = 60.0


class GitError(XumError):
    code = "git_error"


def git_env(**extra: str) -> dict[str, str]:
    """The environment of every git process xum runs itself: xum's own, less its provider keys
    and server token (git runs the repository's hooks, which are the project's code, not xum's),
    and never interactive. `extra` is laid over it."""
    env = without_own_secrets(os.environ)
    env["GIT_TERMINAL_PROMPT"] = "0"  # never wait for credentials nobody will type
    env["LC_ALL"] = "C"  # stable messages
    env.update(extra)
    return env


def run_git(
    args: list[str], cwd: str | Path, *, check: bool = True
) -> subprocess.CompletedProcess[str]:
    """Run `git <args>` in `cwd`; raise GitError with git's own message when it fails."""
    try:
        done = subprocess.run(
            ["git", *args],
            cwd=cwd,
            env=git_env(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=GIT_TIMEOUT_S,
            check=False,
        )
    except FileNotFoundError as exc:
        if exc.filename == "git":
            raise GitError("git is not installed", hint="install git and try again") from None
        raise GitError(f"{cwd}: no such directory") from None
    except NotADirectoryError:
        raise GitError(f"{cwd}: not a directory") from None
    except subprocess.TimeoutExpired:
        raise GitError(f"`git {' '.join(args)}` took longer than {GIT_TIMEOUT_S:.0f} s") from None
    if check and done.returncode != 0:
        message = (done.stderr or done.stdout).strip() or f"exit code {done.returncode}"
        raise GitError(f"`git {' '.join(args)}` failed in {cwd}: {message}")
    return done


WORK_TREE_ARGS = ["rev-parse", "--path-format=absolute", "--show-toplevel", "--git-common-dir"]


def _work_tree(returncode: int | None, stdout: str) -> tuple[Path, Path] | None:
    lines = stdout.splitlines()
    if returncode != 0 or len(lines) < 2 or not lines[0] or not lines[1]:
        return None
    return Path(lines[0]), Path(lines[1])


def work_tree(path: str | Path) -> tuple[Path, Path] | None:
    """(working tree root, common git directory) of the work tree containing `path`, in one git
    call; None when it is not inside a git work tree. The common directory is the main
    repository's `.git` for a linked worktree too."""
    done = run_git(WORK_TREE_ARGS, path, check=False)
    return _work_tree(done.returncode, done.stdout)


class WorkTreeQuery:
    """`work_tree(path)` started now and read later: the git process runs while the caller does
    its own work (imports, config reads), and `result()` waits for it."""

    def __init__(self, path: str | Path) -> None:
        self.path = path
        self._answer: tuple[Path, Path] | None = None
        self._done = False
        self._proc: subprocess.Popen[str] | None
        try:
            self._proc = subprocess.Popen(
                ["git", *WORK_TREE_ARGS],
                cwd=path,
                env=git_env(),
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=subprocess.DEVNULL,
                text=True,
                errors="replace",
            )
        except OSError:
            self._proc = None  # result() runs work_tree, which raises the usual GitError

    def result(self) -> tuple[Path, Path] | None:
        if not self._done:
            self._answer = self._wait() if self._proc is not None else work_tree(self.path)
            self._done = True
        return self._answer

    def _wait(self) -> tuple[Path, Path] | None:
        assert self._proc is not None
        try:
            stdout, _ = self._proc.communicate(timeout=GIT_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self._proc.kill()
            self._proc.communicate()
            raise GitError(
                f"`git {' '.join(WORK_TREE_ARGS)}` took longer than {GIT_TIMEOUT_S:.0f} s"
            ) from None
        return _work_tree(self._proc.returncode, stdout)


def toplevel(path: str | Path) -> Path | None:
    """The working tree root containing `path`, or None when it is not inside a git work tree."""
    done = run_git(["rev-parse", "--show-toplevel"], path, check=False)
    if done.returncode != 0:
        return None
    return Path(done.stdout.strip())


def head_commit(repo: str | Path) -> str | None:
    """The commit HEAD points at, or None in a repository without commits."""
    done = run_git(["rev-parse", "--verify", "--quiet", "HEAD^{commit}"], repo, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def current_branch(repo: str | Path) -> str | None:
    """The checked-out branch name, or None when HEAD is detached."""
    done = run_git(["symbolic-ref", "--quiet", "--short", "HEAD"], repo, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def branch_exists(repo: str | Path, branch: str) -> bool:
    done = run_git(["rev-parse", "--verify", "--quiet", f"refs/heads/{branch}"], repo, check=False)
    return done.returncode == 0


def is_valid_branch_name(repo: str | Path, branch: str) -> bool:
    if not branch or branch.startswith("-"):
        return False
    done = run_git(["check-ref-format", f"refs/heads/{branch}"], repo, check=False)
    return done.returncode == 0


def delete_branch(repo: str | Path, branch: str, *, force: bool = False) -> None:
    run_git(["branch", "-D" if force else "-d", "--", branch], repo)


def parse_porcelain_z(text: str) -> list[str]:
    """The paths of `git status --porcelain=v1 -z` output (a rename gives its new path)."""
    entries = text.split("\0")
    paths: list[str] = []
    i = 0
    while i < len(entries):
        entry = entries[i]
        i += 1
        if len(entry) < 4:
            continue
        paths.append(entry[3:])
        if entry[0] in "RC":
            i += 1  # the original path follows a rename or copy
    return paths


def dirty_files(repo: str | Path) -> list[str]:
    """Files with uncommitted changes in the work tree: modified, staged, deleted and untracked
    (ignored files are not listed)."""
    done = run_git(["status", "--porcelain=v1", "-z", "--untracked-files=all"], repo)
    return parse_porcelain_z(done.stdout)
