"""How long a file signature counts as too recent to trust depends on what its mtime shows of
the filesystem: a fraction of a second proves fine timestamps (a short window); a whole second
may come from a filesystem that keeps only seconds (the long one). With the long window for
everything, a fresh `xum run` re-ran the whole discovery before every request for its first
two seconds, because registering the workspace had just moved `$XUM_ROOT`'s mtime."""

from __future__ import annotations

import os
import time
from pathlib import Path

from tests.contextkit import live, workspace_context, write
from tests.gitrepo import make_repo
from xum.context.files import FINE_RACY_NS, RACY_NS, Sig, racy, racy_window

SECOND = 1_000_000_000


def _fine(ns: int) -> int:
    """`ns`, nudged off a whole second so it reads as a sub-second timestamp."""
    return ns if ns % SECOND else ns - 1


def backdate(root: Path, ns: int) -> None:
    """Set every file and directory under `root` (and `root`) to the mtime `ns`."""
    for directory, dirs, files in os.walk(root):
        for name in [*dirs, *files]:
            os.utime(Path(directory) / name, ns=(ns, ns), follow_symlinks=False)
    os.utime(root, ns=(ns, ns))


def test_a_sub_second_mtime_gets_the_short_window_and_a_whole_second_the_long_one() -> None:
    assert racy_window(_fine(time.time_ns())) == FINE_RACY_NS
    assert racy_window(1_700_000_000 * SECOND) == RACY_NS
    half_a_second_ago = _fine(time.time_ns() - SECOND // 2)
    assert not racy(Sig(True, mtime_ns=half_a_second_ago))
    # A whole-second mtime up to a second ahead (a coarse filesystem rounds up) stays racy.
    next_second = (time.time_ns() // SECOND + 1) * SECOND
    assert racy(Sig(True, mtime_ns=next_second))
    assert not racy(Sig(False))


async def test_a_workspace_changed_half_a_second_ago_is_vouched_for_by_the_quick_check(
    tmp_path: Path, xum_root: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    write(repo / "AGENTS.md", "rules\n")
    xum_root.mkdir(parents=True, exist_ok=True)
    recent = _fine(time.time_ns() - SECOND // 2)
    backdate(repo, recent)
    backdate(Path(os.environ["HOME"]), recent)  # holds $XUM_ROOT here
    context = workspace_context(repo)
    first = await live(context)
    assert await context._quick[1].unchanged()  # type: ignore[index]
    assert await live(context) is first
    # A change after that is still seen on the next request.
    write(xum_root / "AGENTS.md", "global rules\n")
    assert "global rules" in (await live(context)).sections["instructions"]
