"""`.xumignore`: gitignored files to copy from the main checkout into a new worktree workspace.

A worktree shares `.git` but not the files git ignores (`.env`, local config). Lines of the
project's `.xumignore` that start with `!` name such files (a path relative to the project root,
or a glob: `!config/*.local.json`, `!**/.env`); every other line (comments, blanks, plain
patterns) is ignored. A named path is copied only when it exists in the project root, git ignores
it, and the worktree does not already have it; a directory is copied file by file under the same
rules. Copies are physical (symlinks are followed, and must lead to a file inside the project).
Copying is best-effort: a file that cannot be copied is skipped and logged at debug level, never
failing the workspace. It runs after the worktree is made and before the init hook.
"""

from __future__ import annotations

import glob
import logging
import os
import shutil
import subprocess
from dataclasses import dataclass, field
from pathlib import Path

from xum.runtime import git

log = logging.getLogger(__name__)

FILE_NAME = ".xumignore"
MAX_FILES = 10_000  # a runaway glob must not copy a whole node_modules


@dataclass
class CopyReport:
    copied: list[str] = field(default_factory=list)
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (path, why)


def read_patterns(project_root: Path) -> list[str]:
    try:
        text = (project_root / FILE_NAME).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    out = []
    for line in text.splitlines():
        line = line.strip()
        if line.startswith("!") and len(line) > 1:
            out.append(line[1:].strip())
    return out


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def _candidates(root: Path, pattern: str) -> list[Path]:
    pattern = pattern.lstrip("/")
    if not pattern or os.path.isabs(pattern) or ".." in Path(pattern).parts:
        return []
    if any(c in pattern for c in "*?["):
        matches = glob.glob(pattern, root_dir=root, recursive=True, include_hidden=True)
        return [root / m for m in sorted(matches)]
    return [root / pattern.rstrip("/")]


def _expand(path: Path) -> list[Path]:
    if path.is_dir() and not path.is_symlink():
        files: list[Path] = []
        for dirpath, _dirs, names in os.walk(path):
            files.extend(Path(dirpath) / n for n in names)
        return sorted(files)
    return [path]


def _ignored(root: Path, relatives: list[str]) -> set[str]:
    """Which of `relatives` git ignores in the project (one `git check-ignore` call)."""
    if not relatives:
        return set()
    done = subprocess.run(
        ["git", "check-ignore", "-z", "--stdin"],
        cwd=root,
        input="\0".join(relatives).encode() + b"\0",
        capture_output=True,
        timeout=60,
        check=False,
        env=git.git_env(),
    )
    return {p.decode() for p in done.stdout.split(b"\0") if p}


def copy_ignored_files(project_root: Path, worktree: Path) -> CopyReport:
    report = CopyReport()
    root = project_root.resolve()
    wanted: list[Path] = []
    for pattern in read_patterns(root):
        for candidate in _candidates(root, pattern):
            if not os.path.lexists(candidate):
                report.skipped.append((pattern, "does not exist"))
                continue
            wanted.extend(_expand(candidate))
    relatives = []
    for path in wanted[:MAX_FILES]:
        rel = path.relative_to(root).as_posix()
        if rel not in relatives:
            relatives.append(rel)
    try:
        ignored = _ignored(root, relatives)
    except (OSError, subprocess.SubprocessError) as exc:
        log.debug(".xumignore: git check-ignore failed: %s", exc)
        return report
    for rel in relatives:
        source = root / rel
        target = worktree / rel
        why = None
        if rel not in ignored:
            why = "not ignored by git (tracked files come from git itself)"
        elif not _inside(source.resolve(), root) or not source.resolve().is_file():
            why = "not a regular file inside the project"
        elif os.path.lexists(target):
            why = "already present in the workspace"
        if why is not None:
            report.skipped.append((rel, why))
            continue
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(source, target, follow_symlinks=True)
            report.copied.append(rel)
        except OSError as exc:
            log.debug(".xumignore: could not copy %s: %s", rel, exc)
            report.skipped.append((rel, f"copy failed: {exc.strerror or exc}"))
    return report
