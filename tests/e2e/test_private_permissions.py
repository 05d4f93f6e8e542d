"""Everything xum writes under $XUM_ROOT stays private: directories 0700, files 0600, whatever
the umask. A real `xum run -r worktree` (with a trusted init hook, so logs/ fills too) against
the fake LLM server, then a walk over the whole root."""

from __future__ import annotations

import os
import stat
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.e2e.cli import env_for, events, run_xum
from tests.gitrepo import APP_AND_BINARY_FILES, GIT, make_repo
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


@pytest.fixture
def loose_umask() -> Iterator[None]:
    """The common 022 umask, so a directory made without an explicit mode would show as 0755."""
    previous = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(previous)


def modes_under(root: Path) -> dict[str, int]:
    """Mode of every directory and file under `root`, except the worktree checkouts
    (src/<project>/<workspace>/ holds the user's files, with the user's modes)."""
    found: dict[str, int] = {}
    for directory, subdirs, files in os.walk(root):
        rel = Path(directory).relative_to(root)
        if rel.parts[:1] == ("src",) and len(rel.parts) == 2:
            subdirs.clear()  # keep the project directory itself, skip the checkouts inside
        found[rel.as_posix() + "/"] = stat.S_IMODE(os.lstat(directory).st_mode)
        for name in files:
            found[(rel / name).as_posix()] = stat.S_IMODE(os.lstat(Path(directory, name)).st_mode)
    return found


def test_a_worktree_run_leaves_the_whole_root_private(
    fake_llm: FakeLLM, tmp_path: Path, xum_root: Path, loose_umask: None
) -> None:
    repo = make_repo(tmp_path / "repo", APP_AND_BINARY_FILES)
    hooks = repo / ".xum"
    hooks.mkdir()
    # Fails on purpose: a failed hook also writes logs/hooks.log.
    (hooks / "init").write_text("#!/bin/sh\necho preparing\nexit 3\n")
    (hooks / "init").chmod(0o755)
    subprocess.run([*GIT, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*GIT, "commit", "-qm", "hook"], cwd=repo, check=True)
    assert run_xum("trust", cwd=repo).returncode == 0

    fake_llm.script(
        fakellm.tool_call("bash", {"script": "echo ok", "display_name": "check"}),
        fakellm.text("all done"),
    )
    result = run_xum(
        "run", "--json", "-r", "worktree", "check it", cwd=repo,
        env={**env_for(fake_llm), "XUM_DEBUG_LLM_REQUEST": "1"},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    evts = events(result.stdout)
    assert [e["status"] for e in evts if e["type"] == "init-end"] == ["failed"]
    assert "all done" in result.stdout

    modes = modes_under(xum_root)
    # The run really made the trees the walk is about.
    for expected in ("scratch/", "sessions/", "logs/", "logs/init/", "src/repo/"):
        assert expected in modes, sorted(modes)
    assert any(name.startswith("logs/init/") and name.endswith(".log") for name in modes)
    loose = {
        name: oct(mode)
        for name, mode in modes.items()
        if mode != (0o700 if name.endswith("/") else 0o600)
    }
    assert loose == {}

    doctor = run_xum("doctor")
    assert "[ok  ] permissions" in doctor.stdout, doctor.stdout
