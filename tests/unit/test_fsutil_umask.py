"""`atomic_write_bytes` learns the umask without setting it: a set-and-restore would leave the
process-wide mask at 0 for a moment, and a process started in that moment (a command, or the
command helper that passes its mask to every command) would keep it."""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

import pytest

from xum.core.fsutil import atomic_write_bytes


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc/self/status")
def test_a_new_file_gets_the_umask_default_without_the_mask_being_touched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    mask = os.umask(0o027)
    try:

        def refuse(_mask: int) -> int:
            raise AssertionError("the umask was changed to be read")

        monkeypatch.setattr(os, "umask", refuse)
        target = tmp_path / "new.txt"
        atomic_write_bytes(target, b"x", mode=None)
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
    finally:
        monkeypatch.undo()
        os.umask(mask)
