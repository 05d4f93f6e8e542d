"""An external agent's own process runs inside xum's command sandbox (real bubblewrap): the
scripted fake agent (`xum.testing.fake_acp_agent`) tries its own file access, not through xum's
`fs/*` methods, and what it may write and read is what the sandbox allows. Through the real
`xum run --external-agent`, a temp $XUM_ROOT and a real git checkout."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.external_agents import configure, run_xum, texts, write_script
from xum.runtime.sandbox import local_backend


def said(events: list[dict[str, Any]]) -> list[str]:
    """What the agent reported of its own file accesses, one line each."""
    return "".join(texts(events)).splitlines()


pytestmark = pytest.mark.skipif(
    not local_backend().ok, reason=f"no working bubblewrap here: {local_backend().detail}"
)


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory outside the checkout, /tmp (writable in the workspace-write sandbox, and
    where the test's HOME is) and the agent's state: under /var/tmp, read-only inside."""
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("/var/tmp is not writable here")
    path = Path(tempfile.mkdtemp(prefix="xum-extbox-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def test_the_agent_writes_the_checkout_and_nothing_outside(
    repo: Path, tmp_path: Path, outside: Path
) -> None:
    escaped = outside / "escaped.txt"
    root = Path(os.environ["XUM_ROOT"])
    steps = [
        {"ownWrite": {"path": str(repo / "made.txt"), "content": "inside\n"}},
        {"ownWrite": {"path": str(escaped), "content": "escaped\n"}},
        {"ownWrite": {"path": str(root / "planted.txt"), "content": "x\n"}},
        {"ownList": str(root)},
        {"ownRead": str(root / "config.json")},
    ]
    configure(write_script(tmp_path / "s.json", [steps]))
    code, events, err = run_xum(repo, "--external-agent", "fake", "files")
    assert code == 0, err
    lines = said(events)
    assert lines[0] == f"own-wrote {repo / 'made.txt'}"
    assert (repo / "made.txt").read_text() == "inside\n"
    # Outside the checkout: read-only; $XUM_ROOT: an empty, read-only directory.
    assert lines[1].startswith("own-refused:") and "Read-only file system" in lines[1]
    assert not escaped.exists()
    assert lines[2].startswith("own-refused:")
    assert not (root / "planted.txt").exists()
    # Of xum's root only the session's scratch dir is there (config.json is, outside).
    assert set(lines[3].split(",")) <= {"scratch"}
    assert (root / "config.json").exists()
    assert lines[4].startswith("own-refused:") and "No such file" in lines[4]


def test_the_agents_state_directories_are_writable(
    repo: Path, tmp_path: Path, outside: Path
) -> None:
    # The built-in state of an agent the command line names (here "codex", by a word of its
    # arguments: $CODEX_HOME), and the definition's own writablePaths (made when missing).
    codex_home = outside / "codex-state"
    extra = outside / "agent-extra"
    steps = [
        {"ownWrite": {"path": str(codex_home / "s.json"), "content": "state\n"}},
        {"ownWrite": {"path": str(extra / "cache.txt"), "content": "cache\n"}},
        {"ownWrite": {"path": str(outside / "beside.txt"), "content": "no\n"}},
    ]
    script = write_script(tmp_path / "s.json", [steps])
    configure(
        script,
        args=["-m", "xum.testing.fake_acp_agent", "--as-codex"],
        env={"XUM_FAKE_ACP_SCRIPT": str(script), "CODEX_HOME": str(codex_home)},
        writablePaths=[str(extra)],
    )
    code, events, err = run_xum(repo, "--external-agent", "fake", "state")
    assert code == 0, err
    lines = said(events)
    assert lines[:2] == [f"own-wrote {codex_home / 's.json'}", f"own-wrote {extra / 'cache.txt'}"]
    assert (extra / "cache.txt").read_text() == "cache\n"
    assert lines[2].startswith("own-refused:") and not (outside / "beside.txt").exists()


def test_read_only_mode_leaves_only_the_agents_state_writable(
    repo: Path, tmp_path: Path, outside: Path
) -> None:
    # The script sits in a state directory: /tmp is the agent's own throwaway one there.
    state = outside / "agent-state"
    state.mkdir()
    script = write_script(
        state / "s.json",
        [
            [
                {"ownWrite": {"path": str(repo / "made.txt"), "content": "x\n"}},
                {"ownWrite": {"path": str(state / "kept.txt"), "content": "kept\n"}},
            ]
        ],
    )
    configure(script, writablePaths=[str(state)])
    code, events, err = run_xum(repo, "--permissions", "read-only", "--external-agent", "fake", "w")
    assert code == 0, err
    lines = said(events)
    assert lines[0].startswith("own-refused:") and "Read-only file system" in lines[0]
    assert not (repo / "made.txt").exists()
    assert lines[1] == f"own-wrote {state / 'kept.txt'}"


def test_sandbox_false_runs_the_agent_as_the_user(
    repo: Path, tmp_path: Path, outside: Path
) -> None:
    trusted = outside / "trusted.txt"
    steps = [{"ownWrite": {"path": str(trusted), "content": "trusted\n"}}]
    configure(write_script(tmp_path / "s.json", [steps]), sandbox=False)
    code, events, err = run_xum(repo, "--external-agent", "fake", "go")
    assert code == 0, err
    assert said(events) == [f"own-wrote {trusted}"]
    assert trusted.read_text() == "trusted\n"


def test_a_sandbox_that_cannot_start_refuses_the_agent(
    repo: Path, tmp_path: Path, outside: Path
) -> None:
    # No bwrap on PATH: the auto mode runs xum's own commands unsandboxed with a warning, but
    # the agent is not started outside the boundary it was promised.
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "bash", "sh"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    target = outside / "unsandboxed.txt"
    script = write_script(
        tmp_path / "s.json", [[{"ownWrite": {"path": str(target), "content": "x\n"}}]]
    )
    configure(script)
    code, events, _err = run_xum(repo, "--external-agent", "fake", "go", env={"PATH": str(bin_dir)})
    assert code == 1
    end = next(e for e in events if e["type"] == "turn-end")
    assert end["reason"] == "error"
    assert "was not started" in end["error"]["message"]
    assert "bubblewrap" in end["error"]["message"]
    assert '"sandbox": false' in end["error"]["hint"]
    assert not target.exists()
    # With the workspace's sandbox off, the same agent runs (as the user).
    code, events, err = run_xum(
        repo, "--sandbox", "off", "--external-agent", "fake", "go", env={"PATH": str(bin_dir)}
    )
    assert code == 0, err
    assert target.read_text() == "x\n"
