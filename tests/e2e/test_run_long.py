"""Long sessions from the CLI: `xum run` compacts automatically, continues a workspace with
`--workspace`, and carries out `/compact` and `/clear` there. The real CLI in a subprocess, the
fake LLM server over HTTP, real git repositories."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e.cli import env_for, events, run_xum
from xum.store import compaction_config as cc
from xum.store import sessions as session_files
from xum.store.config import update_config
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.testing.fakellm.record import RecordedRequest

MODEL = "anthropic:claude-sonnet-5-5"


def is_compaction(request: RecordedRequest) -> bool:
    return any('<agent id="compact"' in b["text"] for b in request.json.get("system", []))


def texts(request: RecordedRequest) -> list[str]:
    out: list[str] = []
    for message in request.json["messages"]:
        content = message["content"]
        if isinstance(content, str):
            out.append(content)
        else:
            out.extend(b["text"] for b in content if b.get("type") == "text")
    return out


def test_a_long_run_compacts_automatically_and_says_so_in_json(
    fake_llm: FakeLLM, repo: Path
) -> None:
    # A small window: the tool loop below passes 75% of it within a few steps.
    def small_window(config: dict[str, Any]) -> None:
        config[cc.CONTEXT_WINDOWS_KEY] = {MODEL: 24_000}

    update_config(small_window)
    steps = {"n": 0}

    def respond(request: RecordedRequest) -> fakellm.Reply:
        if is_compaction(request):
            return fakellm.text("SUMMARY: printed many lines so far.")
        steps["n"] += 1
        if steps["n"] <= 14:
            script = f"python3 -c \"print('line ' * 900)\"  # {steps['n']}"
            return fakellm.tool_call("bash", {"script": script, "display_name": "print"})
        return fakellm.text("finished")

    fake_llm.set_responder(respond)
    proc = run_xum("run", "--json", "-m", MODEL, "print a lot", cwd=repo, env=env_for(fake_llm))
    assert proc.returncode == 0, proc.stderr
    out = events(proc.stdout)
    types = [e["type"] for e in out]
    assert "compaction-start" in types and "compaction" in types
    start = next(e for e in out if e["type"] == "compaction-start")
    done = next(e for e in out if e["type"] == "compaction")
    assert start["trigger"] == done["trigger"] == "force" and start["seq"] < done["seq"]
    assert out[-1]["type"] == "final" and out[-1]["text"] == "finished"
    assert any(is_compaction(r) for r in fake_llm.requests)


def run_json(server: FakeLLM, repo: Path, *args: str) -> tuple[int, list[dict[str, Any]], str]:
    proc = run_xum("run", "--json", *args, cwd=repo, env=env_for(server))
    return proc.returncode, events(proc.stdout), proc.stderr


def test_workspace_last_continues_the_previous_run(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.script(fakellm.text("Noted: pineapple."), fakellm.text("The word was pineapple."))
    code, first, _ = run_json(fake_llm, repo, "-m", "haiku", "remember the word pineapple")
    assert code == 0
    code, second, stderr = run_json(fake_llm, repo, "--workspace", "last", "what was the word?")
    assert code == 0, stderr
    assert second[-1]["workspace_id"] == first[-1]["workspace_id"]
    assert second[-1]["model"] == "anthropic:claude-haiku-5-5"  # the workspace's model
    sent = texts(fake_llm.requests[1])
    assert sent[:2] == ["remember the word pineapple", "Noted: pineapple."]
    assert sent[-1] == "what was the word?"
    # The same by name and by id; flags still override the model.
    name, wid = first[-1]["workspace_name"], first[-1]["workspace_id"]
    fake_llm.set_default(fakellm.text("ok"))
    assert run_json(fake_llm, repo, "-w", name, "again")[0] == 0
    code, third, _ = run_json(fake_llm, repo, "-w", wid, "-m", "sonnet", "once more")
    assert code == 0 and third[-1]["model"] == MODEL
    assert len(texts(fake_llm.requests[-1])) == 7  # the whole conversation so far


def test_compact_and_clear_in_a_continued_workspace(fake_llm: FakeLLM, repo: Path) -> None:
    def respond(request: RecordedRequest) -> fakellm.Reply:
        return fakellm.text("SUMMARY: a word was chosen." if is_compaction(request) else "ok")

    fake_llm.set_responder(respond)
    assert run_json(fake_llm, repo, "pick a word")[0] == 0
    code, evts, stderr = run_json(fake_llm, repo, "--workspace", "last", "/compact\nand now?")
    assert code == 0, stderr
    types = [e["type"] for e in evts]
    assert types.index("compaction-start") < types.index("compaction") < types.index("final")
    follow = fake_llm.requests[-1]
    assert (
        texts(follow)[0].endswith("SUMMARY: a word was chosen.") and texts(follow)[-1] == "and now?"
    )
    code, evts, _ = run_json(fake_llm, repo, "-w", "last", "/clear --soft")
    assert code == 0 and [e for e in evts if e["type"] == "context-reset"]
    assert evts[-1]["steps"] == 0
    run_json(fake_llm, repo, "-w", "last", "fresh start")
    assert texts(fake_llm.requests[-1]) == ["fresh start"]
    # /compact in a new workspace has nothing to compact: a usage error, nothing sent.
    sent = len(fake_llm.requests)
    code, evts, _ = run_json(fake_llm, repo, "/compact")
    assert code == 1 and "nothing to compact" in evts[-1]["message"]
    assert len(fake_llm.requests) == sent


def test_workspace_commands_and_refusals(fake_llm: FakeLLM, repo: Path) -> None:
    fake_llm.set_default(fakellm.text("ok"))
    code, first, _ = run_json(fake_llm, repo, "hello")
    wid = first[-1]["workspace_id"]
    code, evts, _ = run_json(fake_llm, repo, "-w", "last", "/idle 12")
    assert code == 0 and evts[-1]["command"] == "idle" and evts[-1]["idle_hours"] == 12
    assert cc.idle_hours(str(repo)) == 12
    code, evts, _ = run_json(fake_llm, repo, "-w", "last", "/model opus")
    assert code == 0 and evts[-1]["model"] == "anthropic:claude-opus-5-5"
    assert len(fake_llm.requests) == 1  # neither command reached the model
    for args, named in (
        (["-w", "no-such-workspace", "hi"], "no workspace"),
        (["-w", "last", "-r", "worktree", "hi"], "--runtime"),
        (["-w", "last", "/fork elsewhere"], "/fork"),
        (["/idle 3"], "/idle"),
    ):
        code, evts, _ = run_json(fake_llm, repo, *args)
        assert code == 1 and named in evts[-1]["message"], (args, evts[-1])
    # A workspace whose session another process is writing is refused, naming the holder.
    with session_files.hold(wid, "a test holding the session"):
        code, evts, _ = run_json(fake_llm, repo, "-w", wid, "hi")
    assert code == 1 and evts[-1]["code"] == "session_busy"
    assert "busy" in evts[-1]["message"] and "a test holding the session" in evts[-1]["message"]
    assert len(fake_llm.requests) == 1
