"""The command line an editor's terminal is sent: the secret prelude run for real by bash, and
the sandbox argv built from a real `SandboxedRuntime` (or refused when it cannot be)."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from xum.acp.terminal_command import editor_argv, without_own_secrets_argv
from xum.runtime.local import LocalRuntime
from xum.runtime.sandbox import Layout, SandboxedRuntime, find_bwrap


def run_env(argv: list[str], env: dict[str, str]) -> dict[str, str]:
    done = subprocess.run(argv, env=env, capture_output=True, check=True, timeout=30)
    pairs = (e.decode().partition("=") for e in done.stdout.split(b"\0") if e)
    return {name: value for name, _, value in pairs}


def test_the_prelude_drops_every_key_and_token_but_those_sent_on_purpose() -> None:
    env = {
        "PATH": os.environ["PATH"],
        "ANTHROPIC_API_KEY": "a",
        "openai_api_key": "b",  # the rule ignores case, as xum's own filter does
        "ODD-NAME_API_KEY": "c",  # not a shell identifier: bash could not unset it
        "XUM_SERVER_AUTH_TOKEN": "d",
        "PROJECT_API_KEY": "kept",
        "GITHUB_TOKEN": "not xum's",
        "MULTI": "line one\nline two",
    }
    seen = run_env(without_own_secrets_argv(["env", "-0"], ["PROJECT_API_KEY", "PATH"]), env)
    assert seen["PROJECT_API_KEY"] == "kept"
    assert seen["GITHUB_TOKEN"] == "not xum's" and seen["MULTI"] == "line one\nline two"
    assert not {"ANTHROPIC_API_KEY", "openai_api_key", "ODD-NAME_API_KEY"} & set(seen)
    assert "XUM_SERVER_AUTH_TOKEN" not in seen
    assert not [k for k in seen if k.startswith("__xum")]


def test_arguments_reach_the_command_unchanged() -> None:
    argv = without_own_secrets_argv(["printf", "%s|", "--", "a b", "-u", "$HOME"], [])
    done = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=30)
    assert done.stdout == "--|a b|-u|$HOME|"


def test_without_a_sandbox_the_script_goes_bare(tmp_path: Path) -> None:
    runtime = LocalRuntime(str(tmp_path))
    assert editor_argv(runtime, "echo hi", str(tmp_path)) == ["bash", "-c", "echo hi"]


def test_a_sandbox_that_cannot_be_built_is_not_delegated(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    layout = Layout(workspace=str(tmp_path), writable_workspace=True, temp_dir=None)
    sandboxed = SandboxedRuntime(LocalRuntime(str(tmp_path)), layout)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bwrap-here"))
    assert editor_argv(sandboxed, "echo hi", str(tmp_path)) is None


@pytest.mark.skipif(find_bwrap() is None, reason="bubblewrap is not installed")
def test_a_sandboxed_script_goes_inside_bwrap_with_its_temp_dir(tmp_path: Path) -> None:
    temp = tmp_path / "scratch" / "sandbox-tmp"
    layout = Layout(workspace=str(tmp_path), writable_workspace=True, temp_dir=str(temp))
    sandboxed = SandboxedRuntime(LocalRuntime(str(tmp_path)), layout)
    argv = editor_argv(sandboxed, "echo hi", str(tmp_path))
    assert argv is not None
    assert argv[0] == find_bwrap() and argv[-3:] == ["bash", "-c", "echo hi"]
    assert temp.is_dir()  # made, as the local runtime makes it
    i = argv.index("TMPDIR")
    assert argv[i - 1] == "--setenv" and argv[i + 1] == str(temp)
