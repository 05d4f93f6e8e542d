"""`xum run` with the workspaces layer: secrets, trust, hooks and the SSH runtime, end to end
(the real CLI in a subprocess, the fake LLM server, real git repositories, a real sshd)."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.e2e.cli import XUM, env_for, events, run_xum
from tests.gitrepo import APP_AND_BINARY_FILES
from tests.sshd import Sshd, ssh_host, sshd  # noqa: F401 - fixtures
from xum.store.secrets import set_project_secret
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.repo(files=APP_AND_BINARY_FILES)


SECRET = "ghp_e2eSecretValue0123456789"
DIGEST = hashlib.sha256(SECRET.encode()).hexdigest()[:16]


def commit_all(repo: Path, message: str) -> None:
    git = ["git", "-c", "user.name=T", "-c", "user.email=t@example.com"]
    subprocess.run([*git, "add", "-A"], cwd=repo, check=True)
    subprocess.run([*git, "commit", "-qm", message], cwd=repo, check=True)


def test_secrets_reach_the_command_but_not_the_log_or_the_provider(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    set_project_secret(str(repo), "API_TOKEN", SECRET)
    fake_llm.script(
        fakellm.tool_call(
            "bash",
            {
                # The model never knows the value: the command checks a digest of it.
                "script": 'echo "token is $API_TOKEN"; '
                f'[ "$(printf %s "$API_TOKEN" | sha256sum | cut -c1-16)" = {DIGEST} ] '
                "&& echo match",
                "display_name": "leak",
            },
        ),
        fakellm.text("done"),
    )
    result = run_xum("run", "--json", "show the token", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 0, result.stderr
    out = next(e for e in events(result.stdout) if e["type"] == "tool-result")["output"]
    assert "token is [secret:API_TOKEN]" in out and "match" in out
    assert SECRET not in result.stdout and SECRET not in result.stderr
    for path in (xum_root / "sessions").rglob("*"):
        if path.is_file():
            assert SECRET.encode() not in path.read_bytes(), path
    assert fake_llm.requests and all(SECRET.encode() not in r.body for r in fake_llm.requests)
    assert b"[secret:API_TOKEN]" in fake_llm.requests[-1].body


def test_hooks_wait_for_trust_and_init_runs_before_the_first_tool(
    fake_llm: FakeLLM, repo: Path
) -> None:
    hooks = repo / ".xum"
    hooks.mkdir()
    (hooks / "init").write_text("#!/bin/sh\necho setting up\nsleep 1\necho ready > init-done\n")
    (hooks / "tool_pre").write_text(
        '#!/bin/sh\ncase "$XUM_TOOL_INPUT_SCRIPT" in *forbidden*) echo "no: forbidden" >&2; '
        "exit 1;; esac\n"
    )
    for name in ("init", "tool_pre"):
        (hooks / name).chmod(0o755)
    commit_all(repo, "hooks")

    def script() -> None:
        fake_llm.script(
            fakellm.tool_call(
                "bash", {"script": "cat init-done; echo forbidden", "display_name": "a"}
            ),
            fakellm.text("done"),
        )

    script()
    first = run_xum("run", "--json", "-r", "worktree", "go", cwd=repo, env=env_for(fake_llm))
    assert first.returncode == 0, first.stderr
    evts = events(first.stdout)
    notice = [e for e in evts if e.get("kind") == "untrusted-project"]
    assert len(notice) == 1 and ".xum/init" in notice[0]["message"]
    assert not [e for e in evts if e["type"] in ("init-output", "init-end")]
    result = next(e for e in evts if e["type"] == "tool-result")
    assert "forbidden" in result["output"] and "No such file" in result["output"]

    trusted = run_xum("trust", cwd=repo)
    assert trusted.returncode == 0, trusted.stderr
    script()
    second = run_xum("run", "--json", "-r", "worktree", "go", cwd=repo, env=env_for(fake_llm))
    assert second.returncode == 0, second.stderr
    evts = events(second.stdout)
    assert not [e for e in evts if e.get("kind") == "untrusted-project"]
    assert [e["line"] for e in evts if e["type"] == "init-output"] == ["setting up"]
    assert [e["status"] for e in evts if e["type"] == "init-end"] == ["succeeded"]
    result = next(e for e in evts if e["type"] == "tool-result")
    assert result["is_error"] and "no: forbidden" in result["output"]


def test_run_on_an_ssh_host_reads_edits_and_runs_remotely(
    fake_llm: FakeLLM,
    repo: Path,
    ssh_host: Sshd,  # noqa: F811
) -> None:
    (repo / "uncommitted.txt").write_text("stays local\n")
    fake_llm.script(
        fakellm.tool_call("file_read", {"path": "app.py"}),
        fakellm.tool_call(
            "file_edit_replace_string",
            {"path": "app.py", "old_string": "'hi'", "new_string": "'remote'"},
        ),
        fakellm.tool_call(
            "bash",
            {
                "script": "python3 -c 'import app; print(app.greet())'; hostname >/dev/null; "
                'echo "rt=$XUM_RUNTIME"; ls; git log --oneline | wc -l',
                "display_name": "check",
            },
        ),
        fakellm.text("edited on the host"),
    )
    result = run_xum(
        "run", "--json", "-r", f"ssh {ssh_host.alias}", "edit remotely", cwd=repo,
        env=env_for(fake_llm),
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    evts = events(result.stdout)
    final = evts[-1]
    remote_dir = Path(final["workspace_path"])
    assert remote_dir == ssh_host.remote_home / "xum" / "src" / "repo" / final["workspace_name"]
    results = [e for e in evts if e["type"] == "tool-result"]
    assert [r["is_error"] for r in results] == [False, False, False], results
    assert "return 'hi'" in results[0]["output"]
    bash_out = results[2]["output"]
    assert "remote\n" in bash_out and "rt=ssh" in bash_out
    assert "uncommitted.txt" not in bash_out  # only the committed HEAD was shipped
    assert (remote_dir / "app.py").read_text().endswith("'remote'\n")
    assert (repo / "app.py").read_text().endswith("'hi'\n")


def test_interrupting_an_ssh_run_kills_the_remote_command(
    fake_llm: FakeLLM,
    repo: Path,
    ssh_host: Sshd,  # noqa: F811
) -> None:
    marker = f"xum-e2e-ssh-{os.urandom(4).hex()}"
    fake_llm.script(
        fakellm.tool_call(
            "bash",
            {
                "script": f"bash -c 'sleep 310; : {marker}' & bash -c 'sleep 311; : {marker}'",
                "display_name": "sleep",
            },
        )
    )
    proc = subprocess.Popen(
        [XUM, "run", "--json", "-r", f"ssh {ssh_host.alias}", "sleep remotely"],
        cwd=repo,
        env=dict(os.environ, **env_for(fake_llm)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )

    def alive() -> bool:
        return subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 0

    try:
        deadline = time.monotonic() + 30
        while not alive():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the remote command never started"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        stdout, stderr = proc.communicate(timeout=30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, stderr
    assert events(stdout)[-1]["reason"] == "interrupted"
    deadline = time.monotonic() + 5
    while alive() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not alive()
