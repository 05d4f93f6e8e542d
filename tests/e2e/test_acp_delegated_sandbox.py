"""A command `xum acp` delegates to the editor's terminal keeps xum's boundaries: it runs in the
same bubblewrap sandbox xum would run it in (a write outside the workspace is refused, one
inside works), and without the provider keys and token the editor's environment holds (a
project secret of such a name, given on purpose, still arrives). The real `xum acp` in a
subprocess, the test editor running terminals as real processes, real bwrap."""

from __future__ import annotations

import json
import os
import uuid
from pathlib import Path

import pytest
from acp import text_block

from tests.e2e.cli import XUM
from tests.gitrepo import APP_FILES, make_repo
from tests.support.envdump import FAKE_SECRETS, leaked
from xum.runtime.sandbox import local_backend
from xum.store.secrets import set_project_secret
from xum.testing import fakellm
from xum.testing.acpeditor import EditorCapabilities, TestEditor, connect
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.timeout(120)

# A name bash cannot unset (not an identifier) but a program can still be given.
ODD_NAME = "ODD-VENDOR_API_KEY"


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_repo(tmp_path / "proj", APP_FILES)


@pytest.fixture
def editor_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """The editor (this process) holds provider keys and a server token, as a user's does."""
    for name, value in {**FAKE_SECRETS, ODD_NAME: "sk-test-odd-0123456789"}.items():
        monkeypatch.setenv(name, value)


def probe_script(marker: Path) -> str:
    """Writes outside the workspace (refused in the sandbox) and inside it, then lists the
    environment, NUL-separated, into the workspace."""
    return (
        f"touch {marker}; echo outside=$?; echo kept > written-inside.txt; echo inside=$?; "
        "env -0 > env-dump.bin"
    )


async def run_delegated(fake_llm: FakeLLM, project: Path, *scripts: str) -> TestEditor:
    fake_llm.script(
        *(fakellm.tool_call("bash", {"script": s, "display_name": "probe"}) for s in scripts),
        fakellm.text("Done."),
    )
    editor = TestEditor()
    env = {
        "ANTHROPIC_API_KEY": FAKE_SECRETS["ANTHROPIC_API_KEY"],
        "ANTHROPIC_BASE_URL": fake_llm.url,
    }
    caps = EditorCapabilities(terminal=True)
    async with connect(
        editor,
        [XUM, "acp"],
        env=env,
        cwd=project,
        capabilities=caps,
        stderr=project.parent / "acp-stderr.log",
    ) as (conn, _proc, _init):
        new = await conn.new_session(cwd=str(project), mcp_servers=[])
        answer = await conn.prompt(session_id=new.session_id, prompt=[text_block("Probe")])
        assert answer.stop_reason == "end_turn"
    assert len(editor.terminals) == len(scripts), "the commands went to the editor's terminal"
    return editor


def tool_result(request: fakellm.RecordedRequest) -> str:
    (block,) = [b for b in request.json["messages"][-1]["content"] if b["type"] == "tool_result"]
    content = block["content"]
    return content if isinstance(content, str) else str(content[0]["text"])


def dumped_env(project: Path) -> dict[str, str]:
    entries = (project / "env-dump.bin").read_bytes().split(b"\0")
    pairs = (e.decode(errors="replace").partition("=") for e in entries if e)
    return {name: value for name, _, value in pairs}


@pytest.mark.skipif(not local_backend().ok, reason="no working bubblewrap here")
async def test_a_delegated_command_runs_in_the_sandbox_without_keys(
    fake_llm: FakeLLM, project: Path, editor_env: None
) -> None:
    set_project_secret(str(project), "PROJECT_API_KEY", "project-value-123")
    marker = Path("/var/tmp") / f"xum-acp-probe-{uuid.uuid4().hex}"
    alone = Path("/var/tmp") / f"xum-acp-probe-{uuid.uuid4().hex}"
    try:
        editor = await run_delegated(fake_llm, project, probe_script(marker), f"touch {alone}")
        assert not alone.exists()
        # The sandbox's note on a denied write reaches the model as it does without an editor.
        assert "runs in xum's sandbox" in tool_result(fake_llm.requests[2])
        terminal = editor.terminals["term-1"]
        output = terminal.output.decode(errors="replace")
        assert not marker.exists(), "a write outside the workspace got through the editor"
        assert "outside=1" in output and "inside=0" in output, output
        assert (project / "written-inside.txt").read_text() == "kept\n"
        # The same sandbox xum runs commands in, by bwrap's absolute path.
        assert any(
            os.path.basename(arg) == "bwrap" and os.path.isabs(arg) for arg in terminal.command
        )
        assert terminal.command[-3:-1] == ["bash", "-c"]
        seen = dumped_env(project)
        assert leaked({k: v for k, v in seen.items() if k != "PROJECT_API_KEY"}) == {}
        assert seen["PROJECT_API_KEY"] == "project-value-123"  # sent on purpose
        assert seen["XUM_PROJECT_PATH"] == str(project.resolve())
    finally:
        for path in (marker, alone):
            if path.exists():
                path.unlink()


async def test_with_the_sandbox_off_the_bare_script_still_goes_without_keys(
    fake_llm: FakeLLM, project: Path, xum_root: Path, editor_env: None
) -> None:
    xum_root.mkdir(parents=True, exist_ok=True)
    (xum_root / "config.json").write_text(json.dumps({"sandbox": {"mode": "off"}}))
    editor = await run_delegated(fake_llm, project, "env -0 > env-dump.bin")
    (terminal,) = editor.terminals.values()
    assert not any(os.path.basename(arg) == "bwrap" for arg in terminal.command)
    assert terminal.command[-3:-1] == ["bash", "-c"] and "env -0" in terminal.command[-1]
    seen = dumped_env(project)
    assert leaked(seen) == {}
    assert seen.get("PATH")
