"""`xum run` and the safety boundaries: nobody answers approvals in a run, so `--approval`
decides (refusals are tool errors the model sees), `--permissions` picks the mode, `--sandbox`
the sandbox, and the run says at its start when no sandbox can work."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

import pytest

from tests.e2e.cli import env_for, events, run_xum
from xum.runtime.sandbox import local_backend
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


def bash(script: str, **extra: object) -> fakellm.Reply:
    return fakellm.tool_call("bash", {"script": script, "display_name": "cmd", **extra})


def test_deny_refuses_what_the_ask_mode_would_ask(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.script(bash("ls"), bash("touch made.txt"), fakellm.text("could not"))
    done = run_xum(
        "run", "--json", "--permissions", "ask", "--approval", "deny", "--sandbox", "off", "go",
        cwd=repo, env=env_for(fake_llm),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    evts = events(done.stdout)
    listed, refused = (e for e in evts if e["type"] == "tool-result")
    assert not listed["is_error"]  # read-only: allowlisted
    assert refused["is_error"] and "needs a person's approval" in refused["output"]
    assert refused["meta"]["approval"] == {
        "decision": "deny",
        "by": "policy",
        "kind": "command",
        "why": "not in the allowlist of read-only commands and remembered prefixes",
    }
    kinds = [e["type"] for e in evts if e["type"].startswith("approval-")]
    assert kinds == ["approval-request", "approval-resolved"]
    assert not (repo / "made.txt").exists()
    # The model saw the refusal in its next request.
    assert "needs a person's approval" in str(fake_llm.requests[-1].json["messages"][-1])


def test_never_runs_in_auto_mode_and_still_refuses_critical_commands(
    fake_llm: FakeLLM, repo: Path, tmp_path: Path
) -> None:
    victim = tmp_path / "victim"
    victim.mkdir()
    fake_llm.script(bash("touch made.txt"), bash(f"rm -rf {victim}"), fakellm.text("stopped"))
    done = run_xum(
        "run", "--json", "--permissions", "ask", "--sandbox", "off", "go",
        cwd=repo, env=env_for(fake_llm),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    made, critical = (e for e in events(done.stdout) if e["type"] == "tool-result")
    assert not made["is_error"] and (repo / "made.txt").exists()  # never = auto
    assert critical["is_error"] and critical["meta"]["approval"]["kind"] == "critical"
    assert victim.is_dir()


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_an_explicit_sandbox_refuses_without_bubblewrap_and_auto_warns(
    fake_llm: FakeLLM, repo: Path, tmp_path: Path
) -> None:
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "git", "cat", "touch"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    env = {**env_for(fake_llm), "PATH": str(bin_dir)}
    fake_llm.script(bash("touch made.txt"), fakellm.text("done"))
    auto = run_xum("run", "--json", "go", cwd=repo, env=env)
    assert auto.returncode == 0, auto.stderr
    evts = events(auto.stdout)
    warning = next(e for e in evts if e["type"] == "advisory")
    assert warning["kind"] == "sandbox-unavailable"
    assert "apt-get install bubblewrap" in warning["message"]
    assert evts.index(warning) < next(i for i, e in enumerate(evts) if e["type"] == "turn-start")
    assert (repo / "made.txt").exists()
    (repo / "made.txt").unlink()
    fake_llm.script(bash("touch made.txt"), fakellm.text("done"))
    strict = run_xum("run", "--json", "--sandbox", "workspace-write", "go", cwd=repo, env=env)
    result = next(e for e in events(strict.stdout) if e["type"] == "tool-result")
    assert result["is_error"] and "apt-get install bubblewrap" in result["output"]
    assert not (repo / "made.txt").exists()


@pytest.mark.skipif(not local_backend().ok, reason="no working bubblewrap here")
def test_the_default_run_is_sandboxed(fake_llm: FakeLLM, repo: Path) -> None:
    """The acceptance case through the real CLI: a write to $HOME fails and leaves nothing, a
    write in the checkout works. (HOME outside /tmp, which commands share with the host.)"""
    home = Path(tempfile.mkdtemp(prefix="xum-run-home-", dir="/var/tmp"))
    try:
        fake_llm.script(
            bash('echo in > inside.txt; echo x > "$HOME/escaped"'), fakellm.text("done")
        )
        done = run_xum(
            "run", "--json", "go", cwd=repo, env={**env_for(fake_llm), "HOME": str(home)}
        )
        assert done.returncode == 0, done.stderr
        result = next(e for e in events(done.stdout) if e["type"] == "tool-result")
        assert "Read-only file system" in result["output"]
        assert result["meta"]["sandbox_denied"] is True
        assert (repo / "inside.txt").read_text() == "in\n"
        assert not (home / "escaped").exists()
    finally:
        shutil.rmtree(home, ignore_errors=True)
