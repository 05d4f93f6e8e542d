"""`xum run` refuses critical commands that ordinary shell syntax disguises: a force push spelled
as a git alias and `rm -rf` inside a `{ }` group, under the default run and `--permissions
read-only` (nobody answers approvals in a run, so a critical command is refused), while an
ordinary `git commit` still runs unasked."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from tests.e2e.cli import env_for, events, run_xum
from tests.gitrepo import GIT, make_repo
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

ALIAS_PUSH = "git -c alias.p='push -f' p origin main"
GROUPED_RM = '{ rm -rf "$HOME/victim"; }'


def _git(cwd: Path, *args: str) -> str:
    done = subprocess.run([*GIT, *args], cwd=cwd, check=True, capture_output=True, text=True)
    return done.stdout.strip()


def _diverged(tmp_path: Path) -> tuple[Path, Path]:
    """A checkout whose `main` has diverged from its bare remote's: only a force push moves the
    remote's `main` to the checkout's."""
    remote = tmp_path / "remote.git"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", str(remote)], check=True)
    repo = make_repo(tmp_path / "repo")
    _git(repo, "remote", "add", "origin", str(remote))
    _git(repo, "commit", "-q", "--allow-empty", "-m", "published")
    _git(repo, "push", "-q", "origin", "main")
    _git(repo, "reset", "-q", "--hard", "HEAD~1")
    _git(repo, "commit", "-q", "--allow-empty", "-m", "local")
    _git(repo, "config", "user.name", "Agent")
    _git(repo, "config", "user.email", "agent@example.com")
    return repo, remote


def _bash(script: str) -> fakellm.Reply:
    return fakellm.tool_call("bash", {"script": script, "display_name": "cmd"})


@pytest.mark.parametrize("mode", [(), ("--permissions", "read-only")], ids=["default", "read-only"])
def test_disguised_critical_commands_do_not_run(
    fake_llm: FakeLLM, tmp_path: Path, mode: tuple[str, ...]
) -> None:
    repo, remote = _diverged(tmp_path)
    published = _git(remote, "rev-parse", "main")
    victim = Path(os.environ["HOME"]) / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious\n")
    fake_llm.script(_bash(ALIAS_PUSH), _bash(GROUPED_RM), fakellm.text("stopped"))
    done = run_xum("run", "--json", *mode, "go", cwd=repo, env=env_for(fake_llm))
    assert done.returncode == 0, done.stderr
    pushed, removed = (e for e in events(done.stdout) if e["type"] == "tool-result")
    for result in (pushed, removed):
        assert result["is_error"], result
        assert result["meta"]["approval"]["kind"] == "critical"
        assert result["meta"]["approval"]["by"] == "policy"
    assert "git alias" in pushed["meta"]["approval"]["why"]
    assert _git(remote, "rev-parse", "main") == published  # the remote kept its history
    assert (victim / "keep.txt").read_text() == "precious\n"


def test_an_ordinary_commit_still_runs_unasked(fake_llm: FakeLLM, tmp_path: Path) -> None:
    repo, _ = _diverged(tmp_path)
    (repo / "app.py").write_text("def greet():\n    return 'hello'\n")
    fake_llm.script(_bash('git commit -qam "Say hello"'), fakellm.text("committed"))
    done = run_xum("run", "--json", "go", cwd=repo, env=env_for(fake_llm))
    assert done.returncode == 0, done.stderr
    result = next(e for e in events(done.stdout) if e["type"] == "tool-result")
    assert not result["is_error"], result
    assert "approval" not in result["meta"]
    assert _git(repo, "log", "-1", "--format=%s") == "Say hello"
