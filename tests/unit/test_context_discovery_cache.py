"""Discovery runs before every request, so it caches by file signatures. These tests pin down
that the caching never hides a change: edits inside one timestamp tick, files appearing in
directories that did not exist, and the quick re-check of the paths seen last time."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.contextkit import live, workspace_context, write
from tests.gitrepo import make_repo


def age(root: Path, seconds: int = 60) -> None:
    """Backdate every file and directory under `root`, so no signature counts as recent."""
    past = time.time_ns() - seconds * 1_000_000_000
    for directory, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.utime(Path(directory) / name, ns=(past, past), follow_symlinks=False)
    os.utime(root, ns=(past, past))


async def test_an_edit_that_keeps_size_and_mtime_is_still_seen_while_recent(
    tmp_path: Path,
) -> None:
    repo = make_repo(tmp_path / "repo")
    path = write(repo / "AGENTS.md", "version A\n")
    context = workspace_context(repo)
    assert "version A" in (await live(context)).sections["instructions"]
    st = path.stat()
    path.write_text("version B\n")  # same size...
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))  # ...and the same mtime
    assert "version B" in (await live(context)).sections["instructions"]


async def test_the_quick_check_notices_files_in_new_directories(
    tmp_path: Path, xum_root: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "AGENTS.md", "rules\n")
    xum_root.mkdir(parents=True, exist_ok=True)
    age(repo)
    age(Path(os.environ["HOME"]))  # holds $XUM_ROOT here
    context = workspace_context(repo)
    first = await live(context)
    assert await context._quick[1].unchanged()  # type: ignore[index]
    assert "new-skill" not in first.sections["skills"]
    write(
        repo / ".agents/skills/new-skill/SKILL.md",
        "---\nname: new-skill\ndescription: arrived later\n---\nbody\n",
    )
    assert "new-skill" in (await live(context)).sections["skills"]
    write(xum_root / "AGENTS.md", "global rules\n")
    assert "global rules" in (await live(context)).sections["instructions"]


async def test_an_unchanged_workspace_returns_the_same_live_context(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "AGENTS.md", "rules\n")
    age(repo)
    context = workspace_context(repo)
    first = await live(context)
    assert await live(context) is first
    path = write(repo / ".xum/agents/extra.md", "---\nname: Extra\nbase: exec\n---\nbody\n")
    assert path.exists()
    second = await live(context)
    assert second is not first and second.system == first.system  # nothing the exec agent uses
