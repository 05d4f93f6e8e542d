"""config.json: atomic locked updates; a file that cannot be parsed is never overwritten."""

from __future__ import annotations

import multiprocessing
import os
import stat
from pathlib import Path

import pytest

from xum.core.errors import ConfigError
from xum.store.config import load_config, update_config


def test_update_creates_private_file(xum_root: Path) -> None:
    update_config(lambda c: c.setdefault("defaultModel", "anthropic:x"))
    path = xum_root / "config.json"
    assert load_config() == {"defaultModel": "anthropic:x"}
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(xum_root.stat().st_mode) == 0o700


def test_unparseable_config_is_reported_and_never_overwritten(xum_root: Path) -> None:
    xum_root.mkdir(parents=True)
    path = xum_root / "config.json"
    path.write_text('{\n  "a": 1,\n  "b": \n}\n', encoding="utf-8")
    before = path.read_bytes()
    with pytest.raises(ConfigError) as info:
        load_config()
    assert info.value.line == 4
    with pytest.raises(ConfigError):
        update_config(lambda c: c.update(x=1))
    assert path.read_bytes() == before


def _bump(root: str, n: int) -> None:
    os.environ["XUM_ROOT"] = root

    def inc(c: dict[str, int]) -> None:
        c["count"] = c.get("count", 0) + 1

    for _ in range(n):
        update_config(inc)  # type: ignore[arg-type]


def test_concurrent_processes_do_not_lose_updates(xum_root: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_bump, args=(str(xum_root), 25)) for _ in range(3)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert load_config()["count"] == 75
