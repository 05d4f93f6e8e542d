"""An external agent on an SSH workspace: started on the host (a real sshd on 127.0.0.1,
tests/sshd.py) in the remote checkout, its ACP messages carried over the ssh channel, its
`fs/*` and `terminal/*` requests served on the host, and its own process inside the host's
bubblewrap. The "host" is this machine, so the same python runs the scripted fake agent
(`xum.testing.fake_acp_agent`) there; it is told where xum's sources are through its `env`
(nothing of the local environment crosses ssh)."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

import xum
from tests.sshd import Sshd, ssh_host, sshd  # noqa: F401 - fixtures
from tests.support.external_agents import calls, configure, final, run_xum, texts, write_script
from xum.runtime.sandbox import local_backend
from xum.testing.fake_acp_agent import SCRIPT_ENV

SOURCES = str(Path(xum.__file__).resolve().parents[1])


def _remote_env(script: Path) -> dict[str, str]:
    return {SCRIPT_ENV: str(script), "PYTHONPATH": SOURCES}


@pytest.fixture
def outside() -> Iterator[Path]:
    """A directory outside the remote checkout and /tmp, read-only in the host's sandbox."""
    if not os.access("/var/tmp", os.W_OK):
        pytest.skip("/var/tmp is not writable here")
    path = Path(tempfile.mkdtemp(prefix="xum-extbox-ssh-", dir="/var/tmp"))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _running_with(marker: bytes) -> list[int]:
    """Live processes whose environment holds `marker` (their host pids: the agent's own pid
    is its sandbox's PID namespace's). A process can vanish between listing and reading."""
    found = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as stat:
                state = stat.read().rsplit(b")", 1)[1].split()[0]
            with open(f"/proc/{name}/environ", "rb") as environ:
                env = environ.read().split(b"\0")
        except (OSError, IndexError):
            continue
        if state not in (b"Z", b"X") and marker in env:
            found.append(int(name))
    return found


def wait_gone(marker: bytes, timeout_s: float = 20.0) -> list[int]:
    """The processes with `marker` still running after a bounded poll (none, normally)."""
    deadline = time.monotonic() + timeout_s
    while (left := _running_with(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


def _remote_checkout(log: Path) -> Path:
    (opened,) = [c for c in calls(log) if c["method"] == "session/new"]
    return Path(opened["cwd"])


def test_the_agent_runs_on_the_host_in_the_remote_checkout(
    repo: Path,
    tmp_path: Path,
    ssh_host: Sshd,  # noqa: F811
) -> None:
    log, dump = tmp_path / "calls.ndjson", tmp_path / "env.json"
    steps = [
        {"write": {"path": "served.txt", "content": "through xum\n"}},
        {"read": "app.py"},
        {"terminal": {"command": "pwd", "id": "t1"}},
    ]
    # It does not exit when its input ends: the host's launcher has to stop it.
    script = write_script(
        tmp_path / "s.json", [steps], callLog=str(log), envDump=str(dump), stayAfterEof=True
    )
    configure(script, env=_remote_env(script))
    # Without the sandbox (whose bwrap would take the agent with it when the launcher goes),
    # only the launcher's lifeline stops an agent that outlives its input.
    code, events, err = run_xum(
        repo,
        "--runtime",
        f"ssh {ssh_host.alias}",
        "--sandbox",
        "off",
        "--external-agent",
        "fake",
        "go",
    )
    assert code == 0, err
    remote = _remote_checkout(log)
    assert remote != repo and remote.is_relative_to(ssh_host.remote_home)
    said = "".join(texts(events))
    # fs/* went to the remote checkout, terminal/* ran there.
    assert (remote / "served.txt").read_text() == "through xum\n"
    assert not (repo / "served.txt").exists()
    assert "def greet" in said  # the remote app.py was read
    assert f"exit 0: {remote}\n" in said
    # It ran on the host: the host's login environment, with its definition's env, and
    # nothing of xum's own.
    env = json.loads(dump.read_text())
    assert env["HOME"] == str(ssh_host.remote_home) and env["PYTHONPATH"] == SOURCES
    assert "XUM_ROOT" not in env
    # xum went, so the agent went too.
    assert wait_gone(f"{SCRIPT_ENV}={script}".encode()) == []
    # The next message starts the agent again over a new ssh session, in the same checkout.
    write_script(script, [[{"message": "again"}]], callLog=str(log), stayAfterEof=True)
    code, again, err = run_xum(repo, "--workspace", final(events)["workspace_id"], "two")
    assert code == 0, err
    assert texts(again) == ["again"]
    assert {c["cwd"] for c in calls(log) if c["method"] == "session/new"} == {str(remote)}


@pytest.mark.skipif(
    not local_backend().ok, reason=f"no working bubblewrap here: {local_backend().detail}"
)
def test_the_agent_is_sandboxed_on_the_host(
    repo: Path,
    tmp_path: Path,
    outside: Path,
    ssh_host: Sshd,  # noqa: F811
) -> None:
    log = tmp_path / "calls.ndjson"
    state = outside / "agent-state"
    script = write_script(tmp_path / "s.json", [[{"message": "placeholder"}]], callLog=str(log))
    configure(script, env=_remote_env(script), writablePaths=[str(state)])
    # A first turn finds the remote checkout (its path is the host's choice).
    code, events, err = run_xum(
        repo, "--runtime", f"ssh {ssh_host.alias}", "--external-agent", "fake", "where"
    )
    assert code == 0, err
    remote = _remote_checkout(log)
    steps = [
        {"ownWrite": {"path": str(remote / "made.txt"), "content": "inside\n"}},
        {"ownWrite": {"path": str(outside / "escaped.txt"), "content": "x\n"}},
        {"ownWrite": {"path": str(state / "kept.txt"), "content": "kept\n"}},
    ]
    write_script(script, [steps], callLog=str(log))
    code, again, err = run_xum(repo, "--workspace", final(events)["workspace_id"], "files")
    assert code == 0, err
    lines = "".join(texts(again)).splitlines()
    assert lines[0] == f"own-wrote {remote / 'made.txt'}"
    assert lines[1].startswith("own-refused:") and "Read-only file system" in lines[1]
    assert not (outside / "escaped.txt").exists()
    assert lines[2] == f"own-wrote {state / 'kept.txt'}"  # made on the host, then writable


def test_a_command_missing_on_the_host_names_the_host(
    repo: Path,
    tmp_path: Path,
    ssh_host: Sshd,  # noqa: F811
) -> None:
    script = write_script(tmp_path / "s.json", [[{"message": "never"}]])
    configure(script, command="no-such-agent-on-the-host", env=_remote_env(script))
    code, events, _err = run_xum(
        repo, "--runtime", f"ssh {ssh_host.alias}", "--external-agent", "fake", "go"
    )
    assert code == 1
    end = next(e for e in events if e["type"] == "turn-end")
    assert end["reason"] == "error"
    message = end["error"]["message"]
    assert "'no-such-agent-on-the-host' was not found on xum-test" in message
    assert "externalAgents.fake" in end["error"]["hint"]
