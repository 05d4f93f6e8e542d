"""`xum run --json` ends with exactly one terminal event, carrying the reason and the exit code,
whatever ends the run: a provider error, bad flags, an unexpected failure. And the agent cannot
claim the exit codes xum reserves."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import env_for, events, run_xum
from tests.gitrepo import APP_AND_BINARY_FILES
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.repo(files=APP_AND_BINARY_FILES)


UNAUTHORIZED = {"type": "error", "error": {"type": "authentication_error", "message": "bad key"}}


def the_terminal_event(stdout: str) -> dict[str, Any]:
    """The last line, after checking it is the only `final` or `error` event of the run."""
    evts = events(stdout)
    terminal = [e for e in evts if e["type"] in ("final", "error")]
    assert len(terminal) == 1, terminal
    assert evts[-1] is terminal[0]
    return terminal[0]


def test_a_provider_error_ends_with_a_final_event_and_exit_1(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.script(fakellm.error(401, UNAUTHORIZED))
    result = run_xum("run", "--json", "hello", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 1, result.stderr
    final = the_terminal_event(result.stdout)
    assert final["type"] == "final"
    assert final["reason"] == "error" and final["exit_code"] == 1
    assert final["error"]["kind"] == "auth" and "rejected" in final["error"]["message"]
    assert final["error"]["hint"]
    turn_end = next(e for e in events(result.stdout) if e["type"] == "turn-end")
    assert turn_end["reason"] == "error" and turn_end["error"] == final["error"]


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (["-r", "bogus"], "bogus"),
        (["--mode", "review"], "review"),
        (["--no-such-flag"], "--no-such-flag"),
        (["-d", "/nonexistent/dir"], "/nonexistent/dir"),
        (["-b", "lots"], "lots"),
    ],
)
def test_a_usage_error_with_json_is_one_error_event(
    repo: Path, xum_root: Path, args: list[str], named: str
) -> None:
    result = run_xum("run", "--json", *args, "hello", cwd=repo, env={"ANTHROPIC_API_KEY": "k"})
    assert result.returncode == 1
    assert len(result.stdout.splitlines()) == 1
    error = the_terminal_event(result.stdout)
    assert error["type"] == "error"
    assert error["reason"] == "error" and error["exit_code"] == 1
    assert named in error["message"]
    assert error["hint"]
    assert not (xum_root / "sessions").exists()


def test_a_usage_error_without_json_is_plain_text(repo: Path) -> None:
    result = run_xum("run", "-r", "bogus", "hello", cwd=repo)
    assert result.returncode == 1
    assert result.stdout == ""
    assert "unknown runtime 'bogus'" in result.stderr


def test_an_unexpected_failure_is_one_error_event_with_the_traceback_on_stderr(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    # Where the session logs go is a file, not a directory: nothing xum plans for.
    xum_root.mkdir(mode=0o700)
    (xum_root / "sessions").write_text("not a directory\n")
    fake_llm.set_default(fakellm.text("unused"))
    result = run_xum("run", "--json", "hello", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 1
    error = the_terminal_event(result.stdout)
    assert error["type"] == "error" and error["exit_code"] == 1 and error["reason"] == "error"
    assert str(xum_root / "sessions") in error["message"]
    assert "xum doctor" in error["hint"]
    assert "Traceback" in result.stderr

    text = run_xum("run", "hello", cwd=repo, env=env_for(fake_llm))
    assert text.returncode == 1
    assert f"error: cannot use {xum_root / 'sessions'}" in text.stderr


def test_the_agent_cannot_claim_the_reserved_exit_codes(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.script(
        fakellm.tool_call("set_exit_code", {"code": 2, "reason": "pretend the budget ran out"}),
        fakellm.tool_call("set_exit_code", {"code": 130, "reason": "pretend an interrupt"}),
        fakellm.text("Tried."),
    )
    result = run_xum("run", "--json", "review", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 0, result.stderr
    refused = [e for e in events(result.stdout) if e["type"] == "tool-result"]
    assert [r["is_error"] for r in refused] == [True, True]
    assert "Exit code 2 is reserved" in refused[0]["output"]
    assert "Exit code 130 is reserved" in refused[1]["output"]
    final = the_terminal_event(result.stdout)
    assert final["exit_code"] == 0 and "agent_exit_code" not in final
    description = next(
        t["description"] for t in fake_llm.requests[0].json["tools"] if t["name"] == "set_exit_code"
    )
    assert "2, 3 and 130 are reserved" in description


@pytest.mark.parametrize(
    ("message", "named"), [("/model opus", "/model"), ("/fork try-b\nthen go on", "/fork")]
)
def test_chat_commands_are_refused_before_anything_is_written(
    fake_llm: FakeLLM, repo: Path, xum_root: Path, message: str, named: str
) -> None:
    result = run_xum("run", "--json", message, cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 1
    error = the_terminal_event(result.stdout)
    assert error["type"] == "error" and named in error["message"]
    assert error["hint"]
    assert fake_llm.requests == []
    assert not (xum_root / "sessions").exists()
