"""An agent cannot read or use xum's own credentials, nor change xum's configuration, through the
real CLI: `xum server` runs on the same `$XUM_ROOT` as a `xum run` whose model tries every way
in (the file tools on the lock, the token, a `..` path, an edit of config.json, a write into
sessions/, `cat` in bash). Nothing of the token reaches the run's output, its session files or
any request to the model. Also: `$XUM_ROOT` under the system temp dir (S3) and `--permissions
read-only` with the default approval policy (S6)."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import XUM, env_for, events, run_xum
from tests.gitrepo import make_repo
from xum.core.pathtext import is_within
from xum.runtime.sandbox import local_backend
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

REFUSED = "inside xum's own directory ($XUM_ROOT"
CONFIG = {"sandbox": {"mode": "workspace-write"}}


@contextmanager
def xum_server(env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[str]]:
    """A real `xum server` on a free port and the test's $XUM_ROOT, stopped afterwards."""
    proc = subprocess.Popen(
        [XUM, "server", "--port", "0"],
        env={**os.environ, **(env or {})},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    try:
        if "listening on" not in first:
            proc.kill()
            raise AssertionError(f"the server did not start: {first!r} {proc.communicate()[1]}")
        yield proc
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=20)


def bash(script: str) -> fakellm.Reply:
    return fakellm.tool_call("bash", {"script": script, "display_name": "cmd"})


def results(stdout: str) -> list[dict[str, Any]]:
    return [e for e in events(stdout) if e["type"] == "tool-result"]


def leaks(root: Path, fake: FakeLLM, token: str, *outputs: str) -> list[str]:
    """Where the token shows: the run's outputs, any file under sessions/ and logs/, any
    request the model got."""
    found = [f"output {i}" for i, text in enumerate(outputs) if token in text]
    for tree in ("sessions", "logs", "scratch"):
        for path in (root / tree).rglob("*"):
            if path.is_file() and token.encode() in path.read_bytes():
                found.append(str(path))
    found += [f"request {r.index}" for r in fake.requests if token.encode() in r.body]
    return found


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "proj")


def test_an_agent_beside_a_running_server_cannot_read_its_token_or_change_the_config(
    fake_llm: FakeLLM, project: Path, xum_root: Path
) -> None:
    xum_root.mkdir(parents=True, exist_ok=True)
    (xum_root / "config.json").write_text(json.dumps(CONFIG))
    with xum_server():
        token = (xum_root / "server" / "auth-token").read_text().strip()
        assert json.loads((xum_root / "server.lock").read_text())["token"] == token
        fake_llm.script(
            fakellm.tool_call("file_read", {"path": str(xum_root / "server.lock")}),
            fakellm.tool_call("file_read", {"path": str(xum_root / "server" / "auth-token")}),
            # The worktree checkout is $XUM_ROOT/src/<project>/<workspace>.
            fakellm.tool_call("file_read", {"path": "../../../config.json"}),
            fakellm.tool_call(
                "file_edit_replace_string",
                {
                    "path": str(xum_root / "config.json"),
                    "old_string": "workspace-write",
                    "new_string": "off",
                },
            ),
            fakellm.tool_call(
                "file_edit_insert",
                {"path": str(xum_root / "sessions" / "planted.jsonl"), "content": "{}\n"},
            ),
            bash(f"cat {xum_root}/server/auth-token {xum_root}/server.lock; echo done"),
            fakellm.text("could not"),
        )
        done = run_xum(
            "run", "--json", "-r", "worktree", "go", cwd=project, env=env_for(fake_llm)
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        lock, stored, config, edit, plant, cat = results(done.stdout)
        for result in (lock, stored, config, edit, plant):
            assert result["is_error"] and REFUSED in result["output"], result
        if local_backend().ok:  # sandboxed: the token files are not there at all
            assert "No such file" in cat["output"]
        assert json.loads((xum_root / "config.json").read_text())["sandbox"]["mode"] == (
            "workspace-write"
        )
        assert not (xum_root / "sessions" / "planted.jsonl").exists()
        assert leaks(xum_root, fake_llm, token, done.stdout, done.stderr) == []


def test_an_unsandboxed_command_that_reads_the_token_sees_it_masked(
    fake_llm: FakeLLM, project: Path, xum_root: Path
) -> None:
    """The run never held the server's token (the server made it); its masker reads it from
    the root before each call, so bash without a sandbox prints a mask, not the token."""
    with xum_server():
        token = (xum_root / "server" / "auth-token").read_text().strip()
        fake_llm.script(
            bash(f"cat {xum_root}/server/auth-token; cat {xum_root}/server.lock"),
            fakellm.text("done"),
        )
        done = run_xum(
            "run", "--json", "--sandbox", "off", "go", cwd=project, env=env_for(fake_llm)
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        (cat,) = results(done.stdout)
        assert "[secret:xum-server" in cat["output"]
        assert leaks(xum_root, fake_llm, token, done.stdout, done.stderr) == []


def test_a_root_under_the_temp_dir_is_not_writable_to_the_file_tools(
    fake_llm: FakeLLM, project: Path
) -> None:
    """S3: the write fence admits the system temp dir; a root inside it stays out of reach."""
    root = Path(tempfile.mkdtemp(prefix="xum-root-", dir=tempfile.gettempdir()))
    try:
        assert is_within(str(root), tempfile.gettempdir())
        (root / "config.json").write_text(json.dumps(CONFIG))
        fake_llm.script(
            fakellm.tool_call(
                "file_edit_replace_string",
                {
                    "path": str(root / "config.json"),
                    "old_string": "workspace-write",
                    "new_string": "off",
                },
            ),
            fakellm.tool_call(
                "file_edit_insert", {"path": str(root / "notes.md"), "content": "x\n"}
            ),
            fakellm.text("could not"),
        )
        done = run_xum(
            "run", "--json", "--sandbox", "off", "go",
            cwd=project, env={**env_for(fake_llm), "XUM_ROOT": str(root)},
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        for result in results(done.stdout):
            assert result["is_error"] and REFUSED in result["output"], result
        assert json.loads((root / "config.json").read_text())["sandbox"]["mode"] == (
            "workspace-write"
        )
        assert not (root / "notes.md").exists()
    finally:
        shutil.rmtree(root, ignore_errors=True)


def status(repo: Path) -> str:
    return subprocess.run(
        ["git", "status", "--porcelain", "--untracked-files=all"],
        cwd=repo, capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip


def test_read_only_permissions_never_write_with_the_default_approval(
    fake_llm: FakeLLM, project: Path
) -> None:
    """S6: `--approval never` (the default) once turned every mode into `auto`."""
    fake_llm.script(
        fakellm.tool_call("file_edit_insert", {"path": "app.py", "content": "# planted\n"}),
        bash("touch x; echo y > app.py"),
        fakellm.text("could not"),
    )
    done = run_xum(
        "run", "--json", "--permissions", "read-only", "go", cwd=project, env=env_for(fake_llm)
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    edit, command = results(done.stdout)
    assert edit["is_error"] and "read-only permission mode" in edit["output"]
    assert command["is_error"]
    assert status(project) == ""


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap is not installed")
def test_read_only_permissions_refuse_bash_where_no_sandbox_works(
    fake_llm: FakeLLM, project: Path, tmp_path: Path
) -> None:
    """Without bubblewrap (hidden from PATH), bash is refused, whatever the sandbox setting."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "git", "touch"):
        found = shutil.which(tool)
        assert found is not None
        (bin_dir / tool).symlink_to(found)
    fake_llm.script(bash("touch x"), fakellm.text("could not"))
    done = run_xum(
        "run", "--json", "--permissions", "read-only", "--sandbox", "off", "go",
        cwd=project, env={**env_for(fake_llm), "PATH": str(bin_dir)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    (command,) = results(done.stdout)
    assert command["is_error"] and "bash was not run" in command["output"]
    assert "apt-get install bubblewrap" in command["output"]
    assert status(project) == ""
