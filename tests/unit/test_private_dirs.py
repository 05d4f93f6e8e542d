"""`ensure_private_dir`: the directory and every parent it has to make are 0700, whatever the
umask; an existing directory is tightened; a file in the way is an error."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from xum.core.paths import ensure_private_dir, logs_dir


@pytest.fixture(autouse=True)
def loose_umask() -> Iterator[None]:
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_missing_parents_are_made_private_too(xum_root: Path) -> None:
    made = ensure_private_dir(logs_dir() / "init")
    assert made == xum_root / "logs" / "init"
    assert [mode(p) for p in (xum_root, xum_root / "logs", made)] == [0o700] * 3


def test_existing_directories_keep_their_parents_and_are_tightened(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    shared.mkdir(mode=0o755)
    target = shared / "mine"
    target.mkdir(mode=0o755)
    ensure_private_dir(target)
    assert mode(target) == 0o700
    assert mode(shared) == 0o755  # existed already: not ours to change


def test_a_file_in_the_way_is_refused(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("x")
    os.chmod(blocker, 0o644)
    with pytest.raises(FileExistsError):
        ensure_private_dir(blocker)
    assert mode(blocker) == 0o644
