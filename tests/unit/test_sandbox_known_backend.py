"""Whether bubblewrap works is probed once per process and bwrap (by a session, once its first
request is out, or by the first command); later sandboxed commands ask `known_local_backend` on
the event loop instead of hopping to a thread for the answer."""

from __future__ import annotations

import os
import stat
import threading
from pathlib import Path

import pytest

from xum.runtime import sandbox, sandbox_settings
from xum.runtime.sandbox_settings import probe_soon


def _fake_bwrap(folder: Path, exit_code: int) -> None:
    """A `bwrap` that exits with `exit_code` whatever it is asked (the probe sees it fail or
    work)."""
    folder.mkdir()
    script = folder / "bwrap"
    script.write_text(f"#!/bin/sh\nexit {exit_code}\n")
    script.chmod(script.stat().st_mode | stat.S_IXUSR)


def test_known_after_the_first_probe_and_never_probed_by_asking(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_bwrap(tmp_path / "bin", 1)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    assert sandbox.known_local_backend() is None  # this bwrap was never tried
    probed = sandbox.local_backend()
    assert not probed.ok
    assert sandbox.known_local_backend() is probed


def test_a_missing_bwrap_is_known_without_a_probe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    known = sandbox.known_local_backend()
    assert known is not None and not known.ok
    assert known == sandbox.local_backend()
    assert "not installed" in known.detail


def test_the_background_probe_waits_for_its_gate(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _fake_bwrap(tmp_path / "bin", 0)
    monkeypatch.setenv("PATH", f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}")
    monkeypatch.setattr(sandbox_settings, "_probe_started", False)  # once per process
    gate = threading.Event()
    before = set(threading.enumerate())
    probe_soon(gate, wait_s=600.0)
    probe_soon(gate, wait_s=600.0)  # a second session: no second thread
    (thread,) = [t for t in threading.enumerate() if t not in before]
    assert thread.name.startswith("xum-prewarm") and thread.is_alive()
    assert sandbox.known_local_backend() is None  # not probed before the gate opens
    gate.set()
    thread.join()
    known = sandbox.known_local_backend()
    assert known is not None and known.ok
