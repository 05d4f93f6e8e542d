"""Moving a fork-isolated child's commits into another checkout: format-patch, then `git am`.

The patch is every commit on the child's branch since its fork point, exported with
`git format-patch --binary` into a temporary directory (files, not text, so no byte of a
non-UTF-8 source is lost) and applied with `git am`, which keeps each commit's message and
author. Git hooks are switched off for these commands: the repository's own automation must
not run because an agent moved commits around (the user trusts projects explicitly elsewhere).

Synchronous, like `xum.runtime.git`: callers in async code use `asyncio.to_thread`.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from xum.runtime import git
from xum.runtime.git import GitError

if TYPE_CHECKING:
    from xum.tools.taskrecords import PatchOutcome
    from xum.workspaces.subagents.records import Child

_NO_HOOKS = ["-c", "core.hooksPath=/dev/null"]


@dataclass
class PatchReport:
    ok: bool
    message: str
    commits: list[tuple[str, str]] = field(default_factory=list)  # (sha, subject) applied
    head_before: str | None = None
    head_after: str | None = None


def commits_between(repo: str | Path, base: str, head: str) -> list[tuple[str, str]]:
    """(sha, subject) of the commits in base..head, oldest first."""
    done = git.run_git(["log", "--reverse", "--format=%H%x09%s", f"{base}..{head}"], repo)
    out = []
    for line in done.stdout.splitlines():
        sha, _, subject = line.partition("\t")
        if sha:
            out.append((sha, subject))
    return out


def already_applied(target: str | Path, base: str, head: str) -> bool:
    """True when every commit of base..head has an equivalent change in the target's history
    (`git cherry` compares patch ids, so re-applied commits with new shas still count)."""
    done = git.run_git(["cherry", "HEAD", head, base], target, check=False)
    lines = [line for line in done.stdout.splitlines() if line.strip()]
    return done.returncode == 0 and bool(lines) and all(line.startswith("-") for line in lines)


def resolve_commit(repo: str | Path, rev: str) -> str | None:
    done = git.run_git(["rev-parse", "--verify", "--quiet", f"{rev}^{{commit}}"], repo, check=False)
    return done.stdout.strip() if done.returncode == 0 else None


def _git_dir(repo: str | Path) -> Path:
    done = git.run_git(["rev-parse", "--absolute-git-dir"], repo)
    return Path(done.stdout.strip())


def apply_commits(
    *,
    source_repo: str | Path,
    base: str,
    head: str,
    target: str | Path,
    three_way: bool,
    dry_run: bool,
) -> PatchReport:
    """Apply base..head (from `source_repo`) to the checkout at `target`, or with `dry_run` to a
    throwaway worktree at the target's HEAD. A failed `git am` is aborted, leaving the target as
    it was."""
    commits = commits_between(source_repo, base, head)
    if not commits:
        return PatchReport(False, "the sub-agent made no commits since it was forked")
    head_before = git.head_commit(target)
    if head_before is None:
        return PatchReport(False, f"{target} has no commits to apply onto")
    scratch = Path(tempfile.mkdtemp(prefix="xum-patch-"))
    try:
        patch_dir = scratch / "patches"
        git.run_git(
            ["format-patch", "--binary", "--no-stat", "-o", str(patch_dir), f"{base}..{head}"],
            source_repo,
        )
        files = sorted(str(p) for p in patch_dir.iterdir())
        if dry_run:
            return _dry_run(target, files, commits, head_before, scratch, three_way)
        problem = _dirty_for_am(target)
        if problem:
            return PatchReport(False, problem, head_before=head_before)
        return _am(target, files, commits, head_before, three_way)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)


def _dirty_for_am(target: str | Path) -> str | None:
    git_dir = _git_dir(target)
    if (git_dir / "rebase-apply").exists() or (git_dir / "rebase-merge").exists():
        return "a rebase or `git am` is already in progress in your checkout; finish or abort it"
    staged = git.run_git(["diff", "--cached", "--quiet"], target, check=False)
    if staged.returncode != 0:
        return "your checkout has staged changes; commit or unstage them first (git am needs a clean index)"
    return None


def _am(
    target: str | Path,
    files: list[str],
    commits: list[tuple[str, str]],
    head_before: str,
    three_way: bool,
) -> PatchReport:
    args = [*_NO_HOOKS, "am", "--keep-cr"]
    if three_way:
        args.append("--3way")
    done = git.run_git([*args, *files], target, check=False)
    if done.returncode != 0:
        with contextlib.suppress(GitError):
            git.run_git([*_NO_HOOKS, "am", "--abort"], target, check=False)
        message = (done.stderr or done.stdout).strip()
        return PatchReport(
            False,
            f"git am failed and was rolled back; your checkout is unchanged.\n{message}",
            head_before=head_before,
            head_after=git.head_commit(target),
        )
    head_after = git.head_commit(target)
    return PatchReport(
        True,
        f"applied {len(commits)} commit(s)",
        commits=commits,
        head_before=head_before,
        head_after=head_after,
    )


def _dry_run(
    target: str | Path,
    files: list[str],
    commits: list[tuple[str, str]],
    head_before: str,
    scratch: Path,
    three_way: bool,
) -> PatchReport:
    trial = scratch / "trial"
    git.run_git(["worktree", "add", "--detach", "--", str(trial), head_before], target)
    try:
        report = _am(trial, files, commits, head_before, three_way)
    finally:
        with contextlib.suppress(GitError):
            git.run_git(["worktree", "remove", "--force", "--", str(trial)], target, check=False)
        if trial.exists():
            shutil.rmtree(trial, ignore_errors=True)
        with contextlib.suppress(GitError):
            git.run_git(["worktree", "prune"], target, check=False)
    if report.ok:
        report.message = (
            f"dry run: {len(commits)} commit(s) apply cleanly onto {head_before[:12]}; your "
            "checkout was not touched"
        )
    else:
        report.message = "dry run: " + report.message.replace(
            "git am failed and was rolled back; your checkout is unchanged.",
            "the commits do not apply; your checkout was not touched.",
        )
    report.head_after = head_before
    return report


def apply_child_commits(
    child: Child,
    target: str,
    *,
    dry_run: bool,
    expected: str | None,
    three_way: bool,
    force: bool,
) -> PatchOutcome:
    """`task_apply_git_patch`: the fork child's commits since its fork point, onto `target` (the
    parent's checkout), with the tool's guards: the parent's HEAD must be `expected` when given,
    and commits already in the target's history are not applied again unless `force`."""
    from xum.tools.taskrecords import PatchOutcome

    record = child.record
    assert child.fork_base is not None and record.branch is not None
    if git.toplevel(target) is None:
        return PatchOutcome(False, f"{target} is not a git checkout")
    head = resolve_commit(record.project_path, record.branch)
    if head is None:
        return PatchOutcome(False, f"the sub-agent's branch {record.branch!r} no longer exists")
    current = git.head_commit(target)
    if expected is not None:
        wanted = resolve_commit(target, expected)
        if wanted is None or wanted != current:
            return PatchOutcome(
                False,
                f"refused: your HEAD is {(current or 'none')[:12]}, not {expected}; nothing "
                "was applied (look at what changed, then retry with the current sha)",
                {"head": current, "expected_head_sha": expected},
            )
    if not force and already_applied(target, child.fork_base, head):
        return PatchOutcome(
            False,
            f"{child.id}'s commits are already in your history; nothing was applied (force "
            "applies them again)",
            {"head": current},
        )
    report = apply_commits(
        source_repo=record.project_path,
        base=child.fork_base,
        head=head,
        target=target,
        three_way=three_way,
        dry_run=dry_run,
    )
    lines = [report.message]
    lines.extend(f"  {sha[:12]} {subject}" for sha, subject in report.commits)
    if report.ok and not dry_run:
        lines.append(f"HEAD is now {report.head_after}.")
    exists = Path(record.path).is_dir()
    dirty = exists and git.run_git(["status", "--porcelain"], record.path, check=False).stdout
    if dirty:
        lines.append(
            "note: the sub-agent also left uncommitted changes in its worktree; they are not "
            f"part of the patch ({record.path})"
        )
    return PatchOutcome(
        report.ok,
        "\n".join(lines),
        {
            "task_id": child.id,
            "dry_run": dry_run,
            "commits": [{"sha": s, "subject": m} for s, m in report.commits],
            "head_before": report.head_before,
            "head_after": report.head_after,
            "fork_base": child.fork_base,
            "branch": record.branch,
        },
    )
