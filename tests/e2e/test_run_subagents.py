"""`xum run` with sub-agents and background bash: the real CLI in a subprocess, one fake LLM
server answering the parent and its child, a real git repository."""

from __future__ import annotations

import json
import os
import re
import subprocess
import time
from pathlib import Path

from tests.e2e.cli import run_xum
from tests.support.tools import running_with
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM, RecordedRequest


def _texts(req: RecordedRequest, kind: str) -> str:
    out = []
    for message in req.json["messages"]:
        if message["role"] != "user" or isinstance(message["content"], str):
            continue
        for block in message["content"]:
            if block.get("type") != kind:
                continue
            content = block.get("text") if kind == "text" else block.get("content")
            if isinstance(content, list):
                out.extend(b.get("text", "") for b in content)
            elif isinstance(content, str):
                out.append(content)
    return "\n".join(out)


def test_run_delegates_applies_the_patch_and_leaves_no_process_behind(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    repo = tmp_path / "repo"
    repo.mkdir()
    for args in (
        ["init", "-q", "-b", "main"],
        ["config", "user.name", "Test"],
        ["config", "user.email", "test@example.com"],
    ):
        subprocess.run(["git", *args], cwd=repo, check=True)
    (repo / "README.md").write_text("hi\n")
    subprocess.run(["git", "add", "."], cwd=repo, check=True)
    subprocess.run(["git", "commit", "-qm", "init"], cwd=repo, check=True)
    # Found by its tag: in the sandbox `$$` is a PID of the command's own namespace.
    tag = f"300.{os.getpid()}7"

    def responder(req: RecordedRequest) -> fakellm.Reply:
        step = sum(1 for m in req.json["messages"] if m["role"] == "assistant")
        if "CHILD-TASK" in _texts(req, "text"):
            if step == 0:
                return fakellm.tool_call(
                    "bash",
                    {
                        "script": "echo b > b.txt && git add b.txt && git commit -qm 'add b'",
                        "display_name": "commit",
                    },
                )
            return fakellm.text("b.txt is committed")
        results = _texts(req, "tool_result")
        if step == 0:
            return fakellm.reply(
                fakellm.ToolCall(
                    "bash",
                    {
                        "script": f"exec sleep {tag}",
                        "display_name": "watcher",
                        "run_in_background": True,
                    },
                ),
                fakellm.ToolCall("task", {"title": "Writer", "prompt": "CHILD-TASK: add b.txt"}),
            )
        if step == 1:
            found = re.search(r'<task id="([0-9a-f]{10})"', results)
            task_id = found.group(1) if found else "missing"
            return fakellm.tool_call("task_apply_git_patch", {"task_id": task_id})
        return fakellm.text("Delegated and merged.")

    fake_llm.set_responder(responder)
    done = run_xum(
        "run",
        "--json",
        "-m",
        "anthropic:claude-sonnet-5-5",
        "PARENT: delegate the file",
        cwd=repo,
        env={"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake_llm.url},
    )
    assert done.returncode == 0, done.stderr + done.stdout[-2000:]
    final = json.loads(done.stdout.splitlines()[-1])
    assert final["type"] == "final" and final["text"] == "Delegated and merged."
    log = subprocess.run(
        ["git", "log", "-1", "--format=%s"], cwd=repo, capture_output=True, text=True, check=True
    )
    assert log.stdout.strip() == "add b" and (repo / "b.txt").read_text() == "b\n"
    # The background process did not outlive the run.
    deadline = time.monotonic() + 5
    while running_with(tag):
        assert time.monotonic() < deadline, "the background process outlived xum run"
        time.sleep(0.05)
    assert not fake_llm.errors
