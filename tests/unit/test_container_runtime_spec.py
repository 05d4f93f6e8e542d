"""The Docker runtime's pieces that need no container engine: the runtime spec, which container
CLI is used, the start error's advice, the MCP refusal and the prompt's environment line."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click
import pytest

from xum.cli.options import RuntimeSpec
from xum.context.environment import environment_block
from xum.core.errors import XumError
from xum.engine.events import Advisory, Event
from xum.runtime.container import (
    READ_ONLY_USER,
    ContainerError,
    ContainerRuntime,
    container_cli,
    start_error,
)
from xum.workspaces.mcp.manager import McpManager
from xum.workspaces.mcp.paths import global_path
from xum.workspaces.runtime_spec import format_runtime, parse_runtime


def test_docker_specs_name_an_image_and_nothing_an_option() -> None:
    assert parse_runtime("docker node:20") == ("docker", "node:20")
    assert parse_runtime("docker ghcr.io/org/app:1.2") == ("docker", "ghcr.io/org/app:1.2")
    for spec in ("docker", "docker -v/:/host", "docker a b", "docker ;rm"):
        with pytest.raises(XumError):
            parse_runtime(spec)
    assert format_runtime(*parse_runtime("docker node:20")) == "docker node:20"
    assert RuntimeSpec().convert("docker  node:20", None, None) == "docker node:20"
    with pytest.raises(click.BadParameter):
        RuntimeSpec().convert("docker", None, None)


def fake_cli(directory: Path, name: str, answers: bool) -> None:
    """An executable that stands for a container CLI: `version` succeeds or fails."""
    path = directory / name
    path.write_text(f"#!/bin/sh\nexit {0 if answers else 1}\n")
    path.chmod(0o755)


def test_the_cli_is_forced_recorded_or_docker_when_its_engine_answers_else_podman(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))
    monkeypatch.delenv("XUM_CONTAINER_CLI", raising=False)
    with pytest.raises(ContainerError) as none:
        container_cli()
    assert "neither docker nor podman" in none.value.message
    fake_cli(tmp_path, "podman", answers=True)
    assert container_cli() == "podman"
    fake_cli(tmp_path, "docker", answers=False)  # a client without a daemon
    assert container_cli() == "podman"
    fake_cli(tmp_path, "docker", answers=True)
    assert container_cli() == "docker"
    assert container_cli(recorded="podman") == "podman"  # the CLI a workspace was made with
    monkeypatch.setenv("XUM_CONTAINER_CLI", "podman")
    assert container_cli(recorded="docker") == "podman"
    monkeypatch.setenv("XUM_CONTAINER_CLI", "nerdctl")
    with pytest.raises(ContainerError) as missing:
        container_cli()
    assert "XUM_CONTAINER_CLI=nerdctl" in missing.value.message


def test_a_container_that_cannot_start_for_its_limits_names_what_to_set() -> None:
    text = (
        b"Error: runc: runc create failed: unable to start container process: error during "
        b"container init: error setting rlimits for ready process: operation not permitted"
    )
    err = start_error("podman", text)
    assert "could not start the container" in err.message and "rlimits" in err.message
    assert err.hint is not None and "CONTAINERS_CONF" in err.hint
    assert "default_ulimits = []" in err.hint
    other = start_error("docker", b"Error: something else")
    assert other.hint is not None and "CONTAINERS_CONF" not in other.hint


def test_commands_run_as_the_read_only_user_with_the_container_scratch_dir() -> None:
    runtime = ContainerRuntime("podman", "xum-abc", scratch_dir="/tmp/xum-scratch/abc")
    argv = runtime._argv("true")
    assert argv[:3] == ["podman", "exec", "-i"] and "--user" not in argv
    reader = runtime.as_user(READ_ONLY_USER)
    assert reader._argv("true")[3:5] == ["--user", READ_ONLY_USER]
    env = reader._remote_env({"XUM_SCRATCH_DIR": "/home/me/.xum/scratch/abc", "A": "b"})
    assert env["XUM_SCRATCH_DIR"] == "/tmp/xum-scratch/abc" and env["A"] == "b"
    assert env["GIT_CONFIG_KEY_0"] == "safe.directory"
    assert runtime.kind == "docker" and not runtime.sees_local_files


def test_docker_workspaces_run_no_mcp_servers_and_say_so(tmp_path: Path) -> None:
    path = global_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"servers": {"a": "x"}}')
    told: list[Event] = []
    manager = McpManager(
        workspace_id="w",
        workspace_path=str(tmp_path),
        checkout_root=str(tmp_path),
        runtime_kind="docker",
        env=dict,
        mask=lambda text: text,
        trusted=lambda: True,
        emit=told.append,
    )
    assert asyncio.run(manager.snapshot()) is None
    (advisory,) = told
    assert isinstance(advisory, Advisory) and advisory.kind == "mcp-unsupported-runtime"
    assert "Docker workspaces" in advisory.message and "in the container" in advisory.message


def test_the_prompt_says_the_agent_works_in_a_container() -> None:
    block = environment_block("docker", is_git=True)
    assert "Docker container" in block and "/src" in block
