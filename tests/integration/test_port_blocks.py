"""Port blocks: laid out from config.json `ports`, disjoint across live workspaces (also when two
processes create workspaces at the same moment), stable across reopening, freed on delete and
kept on archive, shared by a sub-agent that works in its parent's checkout, and given lazily to
a workspace recorded before the feature."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
from pathlib import Path

import pytest

from tests.gitrepo import make_repo
from xum.core.errors import ConfigError
from xum.core.portblock import PortBlock
from xum.store import registry
from xum.store.config import load_config, update_config
from xum.store.port_alloc import PortSettings, allocate, port_settings
from xum.workspaces import lifecycle
from xum.workspaces.checkouts.factory import checkout_for
from xum.workspaces.checkouts.protocol import NewWorkspace
from xum.workspaces.env import lifecycle_env
from xum.workspaces.ports import block_for, ensure_block


def set_ports(**settings: object) -> None:
    update_config(lambda config: config.__setitem__("ports", settings))


def test_the_block_gives_its_ports_and_environment() -> None:
    block = PortBlock(20010, 10)
    assert list(block.ports) == list(range(20010, 20020))
    assert block.env() == {"XUM_PORT": "20010", "XUM_PORTS": "20010-20019"}
    assert PortBlock.from_json(block.to_json()) == block
    for junk in (None, {"first": "20010", "count": 10}, {"first": 65530, "count": 10}, []):
        assert PortBlock.from_json(junk) is None


def test_allocation_takes_the_lowest_free_block_of_the_layout() -> None:
    settings = PortSettings(base=20000, size=10)
    assert allocate(settings, []) == PortBlock(20000, 10)
    taken = [PortBlock(20000, 10), PortBlock(20020, 10)]
    assert allocate(settings, taken) == PortBlock(20010, 10)
    # A block of another size (made before `size` changed) is stepped over, never overlapped.
    odd = [PortBlock(20000, 25)]
    assert allocate(settings, odd) == PortBlock(20030, 10)
    assert allocate(PortSettings(enabled=False), []) is None
    # Every block up to 65535 in use: the workspace runs without one.
    full = PortSettings(base=65530, size=6)
    assert allocate(full, [PortBlock(65530, 6)]) is None


def test_bad_settings_name_the_key() -> None:
    assert port_settings({}) == PortSettings(enabled=True, base=20000, size=10)
    bad: list[tuple[object, str]] = [
        ("on", '"ports" must be an object'),
        ({"enabled": "yes"}, '"ports.enabled"'),
        ({"base": 80}, '"ports.base"'),
        ({"size": 0}, '"ports.size"'),
        ({"base": 65530, "size": 10}, "within port 65535"),
    ]
    for value, words in bad:
        with pytest.raises(ConfigError) as info:
            port_settings({"ports": value})
        assert words in info.value.message


def _create(repo: Path, runtime: str = "worktree", **fields: object) -> registry.WorkspaceRecord:
    created = asyncio.run(
        lifecycle.create_workspace(repo, runtime, name_hint="w", run_init=False, **fields)
    )
    asyncio.run(created.runtime.close())
    return created.record


def test_blocks_are_disjoint_stable_freed_on_delete_and_kept_on_archive(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    set_ports(base=30000, size=5)
    a, b, c = (_create(repo), _create(repo, "local"), _create(repo))
    assert (a.ports, b.ports, c.ports) == (
        PortBlock(30000, 5),
        PortBlock(30005, 5),
        PortBlock(30010, 5),
    )
    # Stored: reading, renaming and archiving keep the block.
    assert registry.get_workspace(a.id).ports == a.ports  # type: ignore[union-attr]
    renamed = asyncio.run(lifecycle.rename_workspace(a.id, "renamed"))
    assert renamed.ports == a.ports
    archived = asyncio.run(lifecycle.archive_workspace(c.id))
    assert archived.ports == PortBlock(30010, 5)
    # Deleting b frees its block for the next workspace; archived c still holds its own.
    asyncio.run(lifecycle.delete_workspace(b.id))
    assert _create(repo).ports == PortBlock(30005, 5)
    assert _create(repo).ports == PortBlock(30015, 5)
    # A fork is a workspace of its own.
    fork = asyncio.run(lifecycle.fork_workspace(a.id, run_init=False))
    asyncio.run(fork.runtime.close())
    assert fork.record.ports == PortBlock(30020, 5)
    assert load_config()["workspaces"][a.id]["ports"] == {"first": 30000, "count": 5}


def _create_many(root: str, project: str, n: int) -> None:
    os.environ["XUM_ROOT"] = root
    for _ in range(n):
        registry.create_workspace(project_path=project, runtime="local", name_hint="p")


def test_two_processes_creating_at_once_get_disjoint_blocks(tmp_path: Path) -> None:
    project = str(make_repo(tmp_path / "repo"))
    ctx = multiprocessing.get_context("spawn")
    procs = [
        ctx.Process(target=_create_many, args=(os.environ["XUM_ROOT"], project, 8))
        for _ in range(2)
    ]
    for p in procs:
        p.start()
    for p in procs:
        p.join(120)
        assert p.exitcode == 0
    blocks = [r.ports for r in registry.list_workspaces()]
    assert len(blocks) == 16 and None not in blocks
    firsts = sorted(b.first for b in blocks if b is not None)
    # Ten-port blocks from 20000, none shared, none overlapping: the lowest sixteen slots.
    assert firsts == [20000 + 10 * i for i in range(16)]


def test_switched_off_no_block_is_given_or_shown(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    kept = _create(repo, "local")
    set_ports(enabled=False)
    off = _create(repo, "local")
    assert off.ports is None and ensure_block(off).ports is None
    assert block_for(kept) is None  # kept on the record, not given to commands
    assert "XUM_PORT" not in lifecycle_env(kept, {})
    set_ports(enabled=True)
    assert block_for(kept) == PortBlock(20000, 10)
    assert lifecycle_env(kept, {})["XUM_PORTS"] == "20000-20009"


def test_an_old_workspace_gets_a_block_when_opened_and_keeps_it(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    old = _create(repo, "local")

    def forget(config: dict[str, dict[str, dict[str, object]]]) -> None:
        del config["workspaces"][old.id]["ports"]  # as a record from before the feature

    update_config(forget)  # type: ignore[arg-type]
    bare = registry.get_workspace(old.id)
    assert bare is not None and bare.ports is None
    given = ensure_block(bare)
    assert given.ports == PortBlock(20000, 10)
    assert ensure_block(given) == given
    assert registry.get_workspace(old.id).ports == given.ports  # type: ignore[union-attr]


def test_a_child_in_its_parents_checkout_shares_the_block(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    parent = _create(repo)
    checkout = checkout_for(parent)
    runtime = checkout.open_runtime()
    try:
        child = checkout.share(
            NewWorkspace("child", "child", None, {"parent_id": parent.id}), runtime
        )
    finally:
        asyncio.run(runtime.close())
    assert child.record.ports == parent.ports
    # A record that lost its block takes the parent's again, not a new one.
    registry.update_workspace(child.record.id, ports=None)
    assert registry.assign_ports(child.record.id).ports == parent.ports
    # Its own fork gets a block of its own.
    assert _create(repo).ports == PortBlock(20010, 10)


def test_a_bad_setting_stops_new_blocks_but_not_the_ones_given(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    kept = _create(repo, "local")
    set_ports(size="ten")
    with pytest.raises(ConfigError) as info:
        _create(repo, "local")
    assert '"ports.size"' in info.value.message
    assert block_for(kept) == PortBlock(20000, 10)
    set_ports(size="ten", enabled=False)
    assert block_for(kept) is None
