"""`xum run` end to end: the real CLI in a subprocess, the fake LLM server over HTTP, real git
repositories. Each test is one of the engine issue's acceptance cases."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import WIRES, XUM, env_for, events, run_xum
from tests.gitrepo import APP_AND_BINARY_FILES
from tests.support.tools import running_with
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.repo(files=APP_AND_BINARY_FILES)


def committed(evts: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [e for e in evts if "seq" in e]


@pytest.mark.parametrize("wire", sorted(WIRES))
def test_multi_step_run_reads_edits_runs_and_answers(
    fake_llm: FakeLLM, repo: Path, wire: str
) -> None:
    fake_llm.script(
        fakellm.reply("Reading first.", fakellm.ToolCall("file_read", {"path": "app.py"})),
        fakellm.tool_call(
            "file_edit_replace_string",
            {"path": "app.py", "old_string": "'hi'", "new_string": "'hello'"},
        ),
        fakellm.tool_call(
            "bash",
            {"script": "python3 -c 'import app; print(app.greet())'", "display_name": "check"},
        ),
        fakellm.text("greet() now returns hello."),
    )
    model = WIRES[wire][0]
    result = run_xum(
        "run", "--json", "-m", model, "Make greet say hello", cwd=repo, env=env_for(fake_llm, wire)
    )
    assert result.returncode == 0, result.stderr
    assert (repo / "app.py").read_text() == "def greet():\n    return 'hello'\n"

    evts = events(result.stdout)
    kinds = [e["type"] for e in evts]
    assert kinds[-1] == "final" and kinds.count("final") + kinds.count("error") == 1
    final = evts[-1]
    assert final["reason"] == "completed" and final["exit_code"] == 0
    assert final["text"] == "greet() now returns hello."
    assert final["steps"] == 4
    assert final["usage"]["input_tokens"] > 0
    results = [e for e in evts if e["type"] == "tool-result"]
    assert [r["name"] for r in results] == ["file_read", "file_edit_replace_string", "bash"]
    assert not any(r["is_error"] for r in results)
    assert "hello" in results[2]["output"]
    seqs = [e["seq"] for e in committed(evts)]
    assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
    assert kinds.index("turn-start") < kinds.index("user-message") < kinds.index("turn-end")
    assert len(fake_llm.requests) == 4
    assert all(r.wire == wire for r in fake_llm.requests)

    replay = run_xum("session", final["workspace_id"], "--json", cwd=repo)
    assert replay.returncode == 0, replay.stderr
    replayed = events(replay.stdout)
    live = {e["seq"]: e["type"] for e in committed(evts)}
    assert {e["seq"]: e["type"] for e in replayed if e["seq"] in live} == live
    assert replayed[-1]["type"] == "turn-end" and replayed[-1]["reason"] == "completed"


def test_message_from_stdin_and_quiet_output(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.script(fakellm.text("The answer is 42."))
    result = run_xum("run", "-q", cwd=repo, env=env_for(fake_llm), input="What is the answer?\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "The answer is 42.\n"
    sent = fake_llm.requests[0].json
    assert sent["messages"][0]["content"][0]["text"] == "What is the answer?"


def test_tool_failures_are_reported_and_the_turn_continues(
    fake_llm: FakeLLM, repo: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    (repo / "escape").symlink_to(outside)
    fake_llm.script(
        fakellm.tool_call("bash", "{not json"),
        fakellm.tool_call("file_read", {"path": 42, "offset": "first"}),
        fakellm.tool_call("no_such_tool", {}),
        fakellm.tool_call("file_read", {"path": "logo.bin"}),
        fakellm.tool_call(
            "file_edit_replace_string",
            {"path": "escape", "old_string": "secret", "new_string": "pwned"},
        ),
        fakellm.text("Handled every failure."),
    )
    # The temp dir is writable by design; give the run its own so `outside` is really outside.
    systmp = tmp_path / "systmp"
    systmp.mkdir()
    env = {**env_for(fake_llm), "TMPDIR": str(systmp)}
    result = run_xum("run", "--json", "Try things", cwd=repo, env=env)
    assert result.returncode == 0, result.stderr
    evts = events(result.stdout)
    results = [e for e in evts if e["type"] == "tool-result"]
    assert len(results) == 5 and all(r["is_error"] for r in results)
    bad_json, bad_types, unknown, binary, escape = (r["output"] for r in results)
    assert "JSON" in bad_json
    assert "path" in bad_types and "offset" in bad_types
    assert "no_such_tool" in unknown and "file_read" in unknown
    assert "binary" in binary.lower()
    assert "outside" in escape.lower()
    assert outside.read_text() == "secret\n"
    assert evts[-1]["type"] == "final" and evts[-1]["text"] == "Handled every failure."


def test_budget_exceeded_mid_run_exits_2_and_names_the_limit(fake_llm: FakeLLM, repo: Path) -> None:
    big = fakellm.Usage(input_tokens=400_000, output_tokens=1000)
    fake_llm.script(
        fakellm.tool_call("bash", {"script": "true", "display_name": "t"}, usage=big),
        fakellm.tool_call("bash", {"script": "true", "display_name": "t"}, usage=big),
        fakellm.text("never reached"),
    )
    result = run_xum("run", "--json", "-b", "1.00", "spend", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 2, result.stderr
    final = events(result.stdout)[-1]
    assert final["type"] == "final"
    assert final["reason"] == "budget"
    assert final["limit"] == {"kind": "session_budget", "budget_usd": 1.0}
    assert final["cost_usd"] > 1.0
    assert len(fake_llm.requests) < 3


def test_budget_on_an_unpriced_model_is_refused_up_front(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    env = {"OPENROUTER_API_KEY": "k"}
    result = run_xum(
        "run", "-m", "openrouter:some/unpriced-model", "-b", "1", "hi", cwd=repo, env=env
    )
    assert result.returncode == 1
    assert "no known price" in result.stderr
    assert "modelPrices" in result.stderr
    assert not (xum_root / "sessions").exists()
    assert not fake_llm.requests


def test_no_provider_is_a_clear_error_and_writes_nothing(repo: Path, xum_root: Path) -> None:
    result = run_xum("run", "--json", "hello", cwd=repo)
    assert result.returncode == 1
    evts = events(result.stdout)
    assert len(evts) == 1 and evts[0]["type"] == "error"
    assert "ANTHROPIC_API_KEY" in evts[0]["hint"] and "providers.jsonc" in evts[0]["hint"]
    assert not xum_root.exists() or not any(xum_root.iterdir())


def test_agent_chosen_exit_code(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.script(
        fakellm.tool_call("set_exit_code", {"code": 1, "reason": "tests fail: block the merge"}),
        fakellm.text("Blocking the merge."),
    )
    result = run_xum("run", "--json", "review", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 1
    final = events(result.stdout)[-1]
    assert final["reason"] == "completed"
    assert final["agent_exit_code"]["code"] == 1


def test_doom_loop_advises_then_stops(fake_llm: FakeLLM, repo: Path) -> None:
    same = {"path": "app.py"}
    fake_llm.set_default(fakellm.tool_call("file_read", same))
    result = run_xum("run", "--json", "loop", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 1
    evts = events(result.stdout)
    advisories = [e for e in evts if e["type"] == "advisory"]
    assert [a["kind"] for a in advisories][:1] == ["doom-loop"]
    assert advisories[-1]["kind"] == "doom-loop-stop"
    assert evts[-1]["reason"] == "doom_loop"
    assert len(fake_llm.requests) == 6


def test_worktree_runtime_leaves_the_main_checkout_untouched(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    head = subprocess.run(
        ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True
    ).stdout
    fake_llm.script(
        fakellm.tool_call(
            "file_edit_replace_string",
            {"path": "app.py", "old_string": "'hi'", "new_string": "'worktree'"},
        ),
        fakellm.text("done"),
    )
    result = run_xum(
        "run", "--json", "-r", "worktree", "edit in a worktree", cwd=repo, env=env_for(fake_llm)
    )
    assert result.returncode == 0, result.stderr
    final = events(result.stdout)[-1]
    wt = Path(final["workspace_path"])
    assert wt == xum_root / "src" / "repo" / final["workspace_name"]
    assert (wt / "app.py").read_text().endswith("'worktree'\n")
    assert (repo / "app.py").read_text().endswith("'hi'\n")
    status = subprocess.run(
        ["git", "status", "--porcelain"], cwd=repo, capture_output=True, text=True
    )
    assert status.stdout == ""
    assert (
        subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=repo, capture_output=True, text=True
        ).stdout
        == head
    )
    branches = subprocess.run(
        ["git", "branch", "--list", final["workspace_name"]],
        cwd=repo,
        capture_output=True,
        text=True,
    )
    assert final["workspace_name"] in branches.stdout


def pid_script(pids: Path, *, ignore_term: bool = False) -> str:
    """Starts a background child that sleeps under a tag of its own (the file says the tag; the
    tests find the processes by it: in the sandbox `$$` is a PID of the command's namespace),
    then waits; optionally deaf to SIGTERM (so stopping it takes the whole grace period before
    SIGKILL)."""
    trap = "trap '' TERM; " if ignore_term else ""
    tag = f"300.{os.getpid()}{time.monotonic_ns() % 100000}"
    return f"{trap}sleep {tag} & echo {tag} > {pids}; wait"


def start_run(fake_llm: FakeLLM, repo: Path, script: str, *options: str) -> subprocess.Popen[str]:
    fake_llm.script(fakellm.tool_call("bash", {"script": script, "display_name": "sleep"}))
    return subprocess.Popen(
        [XUM, "run", "--json", *options, "sleep for a while"],
        cwd=repo,
        env=dict(os.environ, **env_for(fake_llm)),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_for_pids(pids: Path, proc: subprocess.Popen[str]) -> list[int]:
    """The pids of the shell and its sleeping child, found by the tag the script wrote."""
    deadline = time.monotonic() + 20
    while len(found := running_with(_tag(pids))) < 2:
        assert proc.poll() is None and time.monotonic() < deadline, "the command never started"
        time.sleep(0.02)
    return found


def _tag(pids: Path) -> str:
    text = pids.read_text().strip() if pids.exists() else ""
    return text or "\0no tag yet"


def alive(pid: int) -> bool:
    """A live process (a zombie waiting to be reaped counts as gone)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"


def gone(pids: list[int]) -> bool:
    """Whether every pid has exited, allowing the kernel a moment to finish killing them."""
    deadline = time.monotonic() + 5
    while any(alive(pid) for pid in pids):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def wait_until_delivered(pid: int, sig: int) -> None:
    """Until `sig` is no longer pending for the process (a pending signal sent again is lost)."""
    bit = 1 << (sig - 1)
    deadline = time.monotonic() + 10
    while True:
        status = Path(f"/proc/{pid}/status").read_text().splitlines()
        masks = [int(line.split()[1], 16) for line in status if line[:6] in ("SigPnd", "ShdPnd")]
        if not any(mask & bit for mask in masks):
            return
        assert time.monotonic() < deadline, "the signal was never delivered"
        time.sleep(0.005)


@pytest.fixture
def cleanup() -> Iterator[list[subprocess.Popen[str]]]:
    procs: list[subprocess.Popen[str]] = []
    yield procs
    for proc in procs:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_ctrl_c_kills_the_command_and_closes_the_turn_durably(
    fake_llm: FakeLLM, repo: Path, tmp_path: Path, cleanup: list[subprocess.Popen[str]]
) -> None:
    pids = tmp_path / "pids"
    proc = start_run(fake_llm, repo, pid_script(pids))
    cleanup.append(proc)
    running = wait_for_pids(pids, proc)
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 130, stderr
    evts = events(stdout)
    result = next(e for e in evts if e["type"] == "tool-result")
    assert result["is_error"]
    assert evts[-1]["type"] == "final" and evts[-1]["reason"] == "interrupted"
    assert evts[-1]["exit_code"] == 130
    turn_end = next(e for e in evts if e["type"] == "turn-end")
    assert turn_end["reason"] == "interrupted"
    # The shell and its background `sleep` went with their process group.
    assert gone(running)


def test_a_second_ctrl_c_exits_130_at_once_and_takes_the_commands_along(
    fake_llm: FakeLLM,
    repo: Path,
    tmp_path: Path,
    xum_root: Path,
    cleanup: list[subprocess.Popen[str]],
) -> None:
    pids = tmp_path / "pids"
    # The command ignores SIGTERM, so the first Ctrl-C alone would take its grace period.
    # Outside the sandbox: there the SIGTERM ends bubblewrap, and with it the command at once,
    # trap or not, so the first Ctrl-C alone could end the turn before the second arrives.
    proc = start_run(fake_llm, repo, pid_script(pids, ignore_term=True), "--sandbox", "off")
    cleanup.append(proc)
    running = wait_for_pids(pids, proc)
    proc.send_signal(signal.SIGINT)
    wait_until_delivered(proc.pid, signal.SIGINT)  # else the kernel merges the two into one
    proc.send_signal(signal.SIGINT)
    stdout, stderr = proc.communicate(timeout=20)
    assert proc.returncode == 130, stderr
    # It left at once: the interrupted turn was not closed and no final event was written.
    kinds = [e["type"] for e in events(stdout)]
    assert "final" not in kinds and "turn-end" not in kinds
    assert gone(running)
    # The log is intact: the next open closes the turn that was cut off.
    replay = run_xum("session", "last", "--json", cwd=repo)
    assert replay.returncode == 0, replay.stderr
