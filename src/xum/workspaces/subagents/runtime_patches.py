"""`task_apply_git_patch` between checkouts that xum reaches through their runtimes (Docker
containers): the child's commits exported in its container, applied with `git am` in the
parent's.

`patches.apply_child_commits` runs git on this machine, where both checkouts (worktrees) share
the project's repository. A Docker workspace's checkout is a repository of its own in its
container, so here every git command runs through a runtime's `exec`, and the patch series
travels through its file operations:

1. in the child's container, `git format-patch --binary --stdout <fork base>..HEAD` into a
   temporary file, read back with `read_bytes` (the commits' shas and subjects are printed);
2. the series is written into the parent's container (`write_bytes_atomic`), where one script
   checks the guards (the expected HEAD; commits already in the parent's history since the fork
   point, compared by `git patch-id`, unless forced; a clean index, no `git am` in progress) and
   runs `git am --keep-cr` (with `--3way` when asked), rolled back with `git am --abort` when it
   fails. A dry run applies it to a throwaway worktree at the parent's HEAD instead.

Git hooks are off for these commands, as in `patches`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from xum.core.clock import now_ms
from xum.runtime.base import Runtime

if TYPE_CHECKING:
    from xum.tools.taskrecords import PatchOutcome
    from xum.workspaces.subagents.records import Child

GIT_TIMEOUT_S = 120.0

# In the child's checkout: the commits since the fork point, and the series in a temporary file.
_EXPORT = r"""
set -u
base=$XUM_PATCH_BASE
head=$(git rev-parse --verify --quiet HEAD) || { echo "the sub-agent's checkout has no commits"; exit 3; }
git cat-file -e "$base^{commit}" 2>/dev/null || { echo "the fork point $base is not in the sub-agent's history"; exit 4; }
printf '@head %s\n' "$head"
git log --reverse --format='@commit %H%x09%s' "$base..$head"
out=$(mktemp "${TMPDIR:-/tmp}/xum-patch.XXXXXX") || exit 5
git format-patch --binary --no-stat --stdout "$base..$head" > "$out" || { rm -f "$out"; exit 5; }
printf '@file %s\n' "$out"
[ -z "$(git status --porcelain)" ] || echo '@dirty'
"""

# In the parent's checkout: the guards, then `git am` (or a trial in a throwaway worktree).
_APPLY = r"""
set -u
f=$XUM_PATCH_FILE; base=$XUM_PATCH_BASE
trap 'rm -f "$f"' EXIT
am() { git -c core.hooksPath=/dev/null am --keep-cr ${XUM_PATCH_3WAY:+--3way} "$f"; }
cur=$(git rev-parse --verify --quiet HEAD) || { echo "your checkout has no commits to apply onto"; exit 20; }
printf '@before %s\n' "$cur"
if [ -n "${XUM_PATCH_EXPECTED:-}" ]; then
  want=$(git rev-parse --verify --quiet "$XUM_PATCH_EXPECTED^{commit}" || true)
  [ "$want" = "$cur" ] || exit 21
fi
if [ -z "${XUM_PATCH_FORCE:-}" ] && git cat-file -e "$base^{commit}" 2>/dev/null; then
  theirs=$(git patch-id --stable < "$f" | cut -d' ' -f1 | sort -u)
  ours=$(git log -p --binary --no-color --no-merges "$base..HEAD" | git patch-id --stable | cut -d' ' -f1 | sort -u)
  if [ -n "$theirs" ] && [ -z "$(printf '%s\n' "$theirs" | grep -vxF -f <(printf '%s\n' "$ours"))" ]; then
    exit 22
  fi
fi
if [ -n "${XUM_PATCH_DRY:-}" ]; then
  t=$(mktemp -d "${TMPDIR:-/tmp}/xum-trial.XXXXXX") || exit 24
  trap 'rm -f "$f"; git worktree remove --force "$t/w" >/dev/null 2>&1; rm -rf "$t"; git worktree prune >/dev/null 2>&1' EXIT
  git worktree add -q --detach "$t/w" "$cur" || exit 24
  (cd "$t/w" && am) || exit 23
  exit 0
fi
gd=$(git rev-parse --absolute-git-dir)
if [ -e "$gd/rebase-apply" ] || [ -e "$gd/rebase-merge" ]; then
  echo "a rebase or \`git am\` is already in progress in your checkout; finish or abort it"; exit 25
fi
git diff --cached --quiet || {
  echo "your checkout has staged changes; commit or unstage them first (git am needs a clean index)"; exit 25
}
if ! am; then
  git -c core.hooksPath=/dev/null am --abort >/dev/null 2>&1
  printf '@after %s\n' "$(git rev-parse HEAD)"; exit 23
fi
printf '@after %s\n' "$(git rev-parse HEAD)"
"""


@dataclass
class _Ran:
    code: int | None
    lines: list[str] = field(default_factory=list)  # what was not a `@` marker
    marks: dict[str, list[str]] = field(default_factory=dict)  # `@name value` lines

    def first(self, name: str) -> str | None:
        values = self.marks.get(name)
        return values[0] if values else None

    @property
    def text(self) -> str:
        return "\n".join(self.lines).strip()


async def _run(runtime: Runtime, script: str, env: Mapping[str, str]) -> _Ran:
    out = bytearray()
    done = await runtime.exec(script, env=env, timeout_s=GIT_TIMEOUT_S, on_output=out.extend)
    ran = _Ran(done.exit_code)
    for line in out.decode(errors="replace").splitlines():
        if line.startswith("@"):
            name, _, value = line[1:].partition(" ")
            ran.marks.setdefault(name, []).append(value)
        else:
            ran.lines.append(line)
    if done.timed_out:
        ran.lines.append(f"(git did not finish within {GIT_TIMEOUT_S:.0f} s)")
    return ran


async def apply_child_commits_in_runtimes(
    child: Child,
    child_runtime: Runtime,
    parent_runtime: Runtime,
    *,
    dry_run: bool,
    expected: str | None,
    three_way: bool,
    force: bool,
) -> PatchOutcome:
    """`task_apply_git_patch` for a child whose checkout is reached through `child_runtime`,
    onto the parent's checkout reached through `parent_runtime` (see the module docstring)."""
    from xum.tools.taskrecords import PatchOutcome

    assert child.fork_base is not None
    base = child.fork_base
    exported = await _run(child_runtime, _EXPORT, {"XUM_PATCH_BASE": base})
    if exported.code != 0:
        return PatchOutcome(
            False, f"could not export the sub-agent's commits: {exported.text or 'git failed'}"
        )
    commits = [tuple(c.split("\t", 1)) for c in exported.marks.get("commit", [])]
    pairs = [(c[0], c[1] if len(c) > 1 else "") for c in commits]
    series_file = exported.first("file")
    assert series_file is not None
    try:
        series = await child_runtime.read_bytes(series_file)
    finally:
        await child_runtime.exec(f"rm -f -- '{series_file}'", env={})
    if not pairs:
        return PatchOutcome(False, "the sub-agent made no commits since it was forked")
    target = f"{parent_runtime.temp_dir}/xum-patch-{child.id}-{now_ms()}.mbox"
    await parent_runtime.write_bytes_atomic(target, series)
    env = {"XUM_PATCH_FILE": target, "XUM_PATCH_BASE": base}
    for name, on in (
        ("XUM_PATCH_DRY", dry_run),
        ("XUM_PATCH_3WAY", three_way),
        ("XUM_PATCH_FORCE", force),
    ):
        if on:
            env[name] = "1"
    if expected:
        env["XUM_PATCH_EXPECTED"] = expected
    applied = await _run(parent_runtime, _APPLY, env)
    before = applied.first("before")
    meta = {
        "task_id": child.id,
        "dry_run": dry_run,
        "commits": [{"sha": s, "subject": m} for s, m in pairs],
        "head_before": before,
        "head_after": before if dry_run else applied.first("after"),
        "fork_base": base,
        "branch": child.record.branch,
    }
    if applied.code == 21:
        return PatchOutcome(
            False,
            f"refused: your HEAD is {(before or 'none')[:12]}, not {expected}; nothing was "
            "applied (look at what changed, then retry with the current sha)",
            {"head": before, "expected_head_sha": expected},
        )
    if applied.code == 22:
        return PatchOutcome(
            False,
            f"{child.id}'s commits are already in your history; nothing was applied (force "
            "applies them again)",
            {"head": before},
        )
    ok = applied.code == 0
    if ok:
        first = (
            f"dry run: {len(pairs)} commit(s) apply cleanly onto {(before or '')[:12]}; your "
            "checkout was not touched"
            if dry_run
            else f"applied {len(pairs)} commit(s)"
        )
    elif applied.code == 23:
        first = (
            "dry run: the commits do not apply; your checkout was not touched."
            if dry_run
            else "git am failed and was rolled back; your checkout is unchanged."
        )
        first += f"\n{applied.text}" if applied.text else ""
    else:
        first = applied.text or f"git failed in your checkout (exit {applied.code})"
    lines = [first]
    if ok:
        lines.extend(f"  {sha[:12]} {subject}" for sha, subject in pairs)
        if not dry_run:
            lines.append(f"HEAD is now {applied.first('after')}.")
    else:
        meta["commits"] = []
    if "dirty" in exported.marks:
        lines.append(
            "note: the sub-agent also left uncommitted changes in its checkout; they are not "
            f"part of the patch ({child_runtime.workspace_path} in its container)"
        )
    return PatchOutcome(ok, "\n".join(lines), meta)
