"""The MCP config files (parsing, merging, trust, overrides), tool naming, and tool search."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from xum.engine.events import Event
from xum.llm.types import ToolSpec
from xum.tools.mcp_names import MAX_NAME, public_names
from xum.tools.tool_catalog_search import rank
from xum.workspaces.mcp.config import ConfigLoader
from xum.workspaces.mcp.manager import McpManager
from xum.workspaces.mcp.paths import global_path, local_path, repo_path


def loader(tmp_path: Path, trusted: bool = True) -> ConfigLoader:
    return ConfigLoader(
        checkout_root=str(tmp_path), workspace_path=str(tmp_path), trusted=lambda: trusted
    )


def write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_jsonc_errors_name_file_line_and_column(tmp_path: Path) -> None:
    write(global_path(), '{\n  "servers": {\n    "a": "cmd",,\n  }\n}\n')
    config = loader(tmp_path).load()
    assert config.servers == ()
    (problem,) = config.problems
    assert problem.startswith(f"{global_path()}:3:")
    assert "cannot parse" in problem


def test_entry_forms_and_bad_entries(tmp_path: Path) -> None:
    write(
        global_path(),
        """{
          // comments and trailing commas are fine
          "servers": {
            "plain": "npx -y some-server",
            "withenv": {"command": "run-it", "env": {"A": "1"}, "timeoutSecs": 5},
            "web": {"url": "https://example.test/mcp", "headers": {"X": "y"}},
            "bad name": "x",
            "empty": "",
            "both": {"command": "x", "url": "http://h"},
            "typo": {"comand": "x"},
            "wrongenv": {"command": "x", "env": {"A": 1}},
          },
          "toolSearch": false,
          "enabledPluginServers": [],
        }""",
    )
    config = loader(tmp_path).load()
    by_name = {s.name: s for s in config.servers}
    assert sorted(by_name) == ["plain", "web", "withenv"]
    assert by_name["plain"].command == "npx -y some-server"
    assert by_name["withenv"].env == (("A", "1"),) and by_name["withenv"].timeout_s == 5
    assert by_name["web"].url == "https://example.test/mcp"
    assert by_name["web"].headers == (("X", "y"),)
    assert config.tool_search is False
    problems = "\n".join(config.problems)
    for name in ("bad name", "empty", "both", "typo", "wrongenv"):
        assert f"servers.{name}" in problems


def test_repo_servers_need_trust_and_replace_global_ones(tmp_path: Path) -> None:
    write(global_path(), '{"servers": {"a": "global-a", "b": "global-b"}}')
    write(repo_path(tmp_path), '{"servers": {"a": "repo-a", "c": "repo-c"}}')
    untrusted = loader(tmp_path, trusted=False).load()
    assert {s.name: s.command for s in untrusted.servers} == {"a": "global-a", "b": "global-b"}
    assert untrusted.withheld == ("a", "c")
    trusted = loader(tmp_path, trusted=True).load()
    assert {s.name: (s.command, s.scope) for s in trusted.servers} == {
        "a": ("repo-a", "repo"),
        "b": ("global-b", "global"),
        "c": ("repo-c", "repo"),
    }


def test_local_overrides_and_reload_on_change(tmp_path: Path) -> None:
    write(global_path(), '{"servers": {"a": "x", "b": "y"}}')
    load = loader(tmp_path)
    first = load.load()
    assert load.load() is first  # nothing changed: the same object, nothing parsed
    write(
        local_path(tmp_path), '{"servers": {"a": {"enabled": false}, "b": {"allowedTools": ["t"]}}}'
    )
    second = load.load()
    assert [s.name for s in second.servers] == ["b"]
    assert [s.name for s in second.disabled] == ["a"]
    assert second.overrides["b"].allowed_tools == ("t",)


def test_public_names_are_safe_unique_and_stable() -> None:
    pairs = [("my server", "do.it"), ("a_", "_b"), ("a", "__b"), ("s", "x" * 80)]
    names = public_names(pairs)
    assert names[("my server", "do.it")] == "mcp__my_server__do_it"
    assert len(set(names.values())) == len(pairs)
    assert names[("a_", "_b")] != names[("a", "__b")]
    assert all(len(n) <= MAX_NAME for n in names.values())
    assert all(n.replace("_", "").replace("-", "").isalnum() for n in names.values())
    assert public_names(reversed(pairs)) == names


def test_search_ranks_name_matches_first() -> None:
    catalog = (
        ToolSpec("mcp__gh__create_issue", "Open an issue in a repository.", {}),
        ToolSpec("mcp__gh__list_issues", "List issues, newest first.", {}),
        ToolSpec("mcp__fs__read_file", "Read a file; can create a report of issues.", {}),
    )
    assert [s.name for s in rank(catalog, "create issue")][:1] == ["mcp__gh__create_issue"]
    assert [s.name for s in rank(catalog, "read")] == ["mcp__fs__read_file"]
    assert rank(catalog, "nothing-like-this") == []
    assert len(rank(catalog, "*")) == 3


def test_ssh_workspaces_run_no_servers_and_say_so(tmp_path: Path) -> None:
    write(global_path(), '{"servers": {"a": "x"}}')
    told: list[Event] = []
    manager = McpManager(
        workspace_id="w",
        workspace_path=str(tmp_path),
        checkout_root=str(tmp_path),
        runtime_kind="ssh",
        env=dict,
        mask=lambda text: text,
        trusted=lambda: True,
        emit=told.append,
    )

    async def twice() -> None:
        for _ in range(2):
            assert await manager.snapshot() is None

    asyncio.run(twice())
    (advisory,) = told
    assert advisory.kind == "mcp-unsupported-runtime"
    assert "SSH" in advisory.message


@pytest.mark.parametrize("text", ["[]", '{"servers": []}', '{"toolSearch": "no"}'])
def test_wrong_shapes_are_problems_not_crashes(tmp_path: Path, text: str) -> None:
    write(global_path(), text)
    config = loader(tmp_path).load()
    assert config.problems and config.servers == ()
