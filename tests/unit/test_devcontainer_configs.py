"""The Dev Container runtime's pieces that need no container engine: where configs are found
and which one a workspace uses, the runtime spec, the CLI lookup's error, and the runtime's
translation of paths between the worktree here and the container."""

from __future__ import annotations

import asyncio
from pathlib import Path

import click
import pytest

from tests.support.tools import make_ctx
from xum.cli.options import RuntimeSpec
from xum.context.environment import environment_block
from xum.core.errors import XumError
from xum.engine.events import Advisory, Event
from xum.runtime.container import READ_ONLY_USER
from xum.runtime.devcontainer import DevcontainerRuntime
from xum.runtime.sandbox import SandboxSettings
from xum.tools.base import ToolContext, ToolResult
from xum.workspaces.checkouts.devcontainer_ops import CLI_ENV, devcontainer_cli
from xum.workspaces.devcontainer_configs import (
    DevcontainerConfig,
    DevcontainerConfigError,
    choose_config,
    find_configs,
)
from xum.workspaces.mcp.manager import McpManager
from xum.workspaces.mcp.paths import global_path
from xum.workspaces.runtime_spec import format_runtime, origin_target, parse_runtime
from xum.workspaces.safety.container_sandbox import container_call

CONFIG = '{"image": "example"}\n'


def _write(root: Path, *paths: str) -> Path:
    for relative in paths:
        (root / relative).parent.mkdir(parents=True, exist_ok=True)
        (root / relative).write_text(CONFIG)
    return root


def test_each_of_the_three_locations_is_found(tmp_path: Path) -> None:
    assert find_configs(_write(tmp_path / "a", ".devcontainer.json")) == [
        DevcontainerConfig(None, ".devcontainer.json")
    ]
    assert find_configs(_write(tmp_path / "b", ".devcontainer/devcontainer.json")) == [
        DevcontainerConfig(None, ".devcontainer/devcontainer.json")
    ]
    assert find_configs(_write(tmp_path / "c", ".devcontainer/py/devcontainer.json")) == [
        DevcontainerConfig("py", ".devcontainer/py/devcontainer.json")
    ]
    assert find_configs(tmp_path / "none") == []


def test_the_unnamed_config_comes_first_then_the_named_ones_by_name(tmp_path: Path) -> None:
    root = _write(
        tmp_path,
        ".devcontainer.json",
        ".devcontainer/devcontainer.json",  # the CLI's first choice of the two
        ".devcontainer/web/devcontainer.json",
        ".devcontainer/api/devcontainer.json",
    )
    (root / ".devcontainer" / "empty").mkdir()  # a folder without a config is no config
    assert [(c.name, c.path) for c in find_configs(root)] == [
        (None, ".devcontainer/devcontainer.json"),
        ("api", ".devcontainer/api/devcontainer.json"),
        ("web", ".devcontainer/web/devcontainer.json"),
    ]
    assert choose_config(root, None).path == ".devcontainer/devcontainer.json"
    assert choose_config(root, "web").path == ".devcontainer/web/devcontainer.json"


def test_choosing_a_config_says_what_exists(tmp_path: Path) -> None:
    with pytest.raises(DevcontainerConfigError, match=r"no devcontainer\.json"):
        choose_config(tmp_path, None)
    root = _write(tmp_path, ".devcontainer/web/devcontainer.json")
    # The only config, named: used without naming it.
    assert choose_config(root, None).name == "web"
    with pytest.raises(DevcontainerConfigError, match=r"named 'api' \(named configs: web\)"):
        choose_config(root, "api")
    _write(root, ".devcontainer/api/devcontainer.json")
    with pytest.raises(DevcontainerConfigError, match="none unnamed: api, web") as caught:
        choose_config(root, None)
    assert caught.value.hint is not None and "devcontainer <name>" in caught.value.hint


def test_devcontainer_specs() -> None:
    assert parse_runtime("devcontainer") == ("devcontainer", None)
    assert parse_runtime("devcontainer web") == ("devcontainer", "web")
    assert format_runtime("devcontainer", "web") == "devcontainer web"
    assert origin_target("devcontainer", "web") == {"devcontainer_config": "web"}
    for bad in ("devcontainer --config=x", "devcontainer ../up", "devcontainer a b"):
        with pytest.raises(XumError):
            parse_runtime(bad)
    assert RuntimeSpec().convert("devcontainer  web", None, None) == "devcontainer web"
    with pytest.raises(click.BadParameter):
        RuntimeSpec().convert("devcontainer -x", None, None)


def test_a_missing_cli_says_how_to_install_it(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv(CLI_ENV, str(tmp_path / "no-such-devcontainer"))
    with pytest.raises(XumError) as caught:
        devcontainer_cli()
    assert caught.value.hint is not None and "@devcontainers/cli" in caught.value.hint


def test_paths_under_the_worktree_are_the_container_folder_and_others_stay() -> None:
    runtime = DevcontainerRuntime(
        "podman", "c0ffee", workspace_path="/workspaces/ws", host_path="/home/u/.xum/src/p/ws"
    )
    assert runtime.resolve("app.py") == "/workspaces/ws/app.py"
    assert runtime.resolve("/home/u/.xum/src/p/ws") == "/workspaces/ws"
    assert runtime.resolve("/home/u/.xum/src/p/ws/pkg/a.py") == "/workspaces/ws/pkg/a.py"
    assert runtime.resolve("/home/u/.xum/src/p/ws2/a.py") == "/home/u/.xum/src/p/ws2/a.py"
    assert runtime.resolve("/etc/os-release") == "/etc/os-release"
    assert runtime.resolve("~/x") == "/root/x"
    assert runtime.to_host("/workspaces/ws/pkg/a.py") == "/home/u/.xum/src/p/ws/pkg/a.py"
    assert runtime.to_host("/workspaces/wsx") == "/workspaces/wsx"
    # The same path on both sides (a config that mounts the worktree where it is here).
    same = DevcontainerRuntime("podman", "c", workspace_path="/w/ws", host_path="/w/ws")
    assert same.resolve("/w/ws/a") == "/w/ws/a"
    # The read-only sandbox's user keeps the translation and the agent socket variable.
    other = DevcontainerRuntime(
        "podman", "c", workspace_path="/workspaces/ws", host_path="/h/ws",
        base_env={"SSH_AUTH_SOCK": "/run/x.sock"},
    ).as_user("65534:65534")  # fmt: skip
    assert isinstance(other, DevcontainerRuntime) and other.resolve("/h/ws/a") == "/workspaces/ws/a"
    assert other._remote_env({"A": "1"})["SSH_AUTH_SOCK"] == "/run/x.sock"
    assert other.kind == "devcontainer"
    asyncio.run(other.close())


def test_dev_container_workspaces_run_no_mcp_servers_and_say_so(tmp_path: Path) -> None:
    path = global_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"servers": {"a": "x"}}')
    told: list[Event] = []
    manager = McpManager(
        workspace_id="w",
        workspace_path=str(tmp_path),
        checkout_root=str(tmp_path),
        runtime_kind="devcontainer",
        env=dict,
        mask=lambda text: text,
        trusted=lambda: True,
        emit=told.append,
    )
    assert asyncio.run(manager.snapshot()) is None
    (advisory,) = told
    assert isinstance(advisory, Advisory) and advisory.kind == "mcp-unsupported-runtime"
    assert "Dev Container workspaces" in advisory.message


def test_the_prompt_says_the_agent_works_in_a_dev_container() -> None:
    assert "Dev Container" in environment_block("devcontainer", is_git=True)


def test_the_sandbox_maps_onto_the_dev_container(tmp_path: Path) -> None:
    runtime = DevcontainerRuntime(
        "podman", "c0ffee", workspace_path="/workspaces/ws", host_path=str(tmp_path / "ws")
    )
    ctx = make_ctx(tmp_path, runtime=runtime)
    assert container_call(ctx, SandboxSettings(mode="workspace-write")) is None
    read_only = container_call(ctx, SandboxSettings(mode="read-only"))
    assert isinstance(read_only, ToolContext)
    assert isinstance(read_only.runtime, DevcontainerRuntime)
    assert read_only.runtime.user == READ_ONLY_USER
    assert read_only.runtime.resolve(str(tmp_path / "ws" / "a")) == "/workspaces/ws/a"
    refused = container_call(ctx, SandboxSettings(egress="off"))
    assert isinstance(refused, ToolResult) and refused.is_error
    assert "Dev Container workspace's network" in refused.output
