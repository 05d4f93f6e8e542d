"""config.json is parsed once per change: the registry's readers (asked on every step: the
workspace, its siblings, the project's trust) share `read_config`'s snapshot, revalidated by a
stat; the records they return are still the caller's to change."""

from __future__ import annotations

import os
import time
from pathlib import Path

from xum.core.paths import config_path
from xum.store import registry
from xum.store.config import parse_count, update_config


def _settled() -> None:
    """Date the file back past the racy window (a file changed just now is never cached)."""
    past = time.time() - 5
    os.utime(config_path(), (past, past))


def _workspace(tmp_path: Path) -> registry.WorkspaceRecord:
    return registry.create_workspace(
        project_path=str(tmp_path),
        runtime="local",
        name_hint="snap",
        register_project=True,
    )


def test_the_registry_readers_parse_the_file_once_per_change(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)
    _settled()
    before = parse_count()
    for _ in range(3):
        assert registry.get_workspace(ws.id) is not None
        assert [r.id for r in registry.list_workspaces(str(tmp_path))] == [ws.id]
        assert registry.get_project(str(tmp_path)) is not None
    assert parse_count() - before == 1

    registry.update_workspace(ws.id, title="changed")  # one parse under the write lock
    _settled()
    assert registry.get_workspace(ws.id).title == "changed"  # type: ignore[union-attr]
    assert parse_count() - before == 3


def test_a_record_read_from_the_snapshot_is_the_callers_to_change(tmp_path: Path) -> None:
    ws = _workspace(tmp_path)

    def add_extra(config: dict[str, object]) -> None:
        config["workspaces"][ws.id]["futureKey"] = {"nested": [1]}  # type: ignore[index]

    update_config(add_extra)
    _settled()
    first = registry.get_workspace(ws.id)
    assert first is not None and first.extra == {"future_key": {"nested": [1]}}
    first.extra["future_key"]["nested"].append(2)
    first.title = "local change"
    again = registry.get_workspace(ws.id)
    assert again is not None
    assert again.extra == {"future_key": {"nested": [1]}} and again.title == ws.title


def test_a_file_changed_just_now_is_read_again_but_parsed_only_when_its_bytes_differ(
    tmp_path: Path,
) -> None:
    ws = _workspace(tmp_path)  # written just now: inside the racy window
    before = parse_count()
    for _ in range(3):
        assert registry.get_workspace(ws.id) is not None
    assert parse_count() - before == 1
    # A change with the same size and times is still seen: the bytes are compared.
    path = config_path()
    st = path.stat()
    raw = path.read_bytes()
    path.write_bytes(raw.replace(b'"snap-', b'"snaq-'))
    os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    record = registry.get_workspace(ws.id)
    assert record is not None and record.name.startswith("snaq-")
    assert parse_count() - before == 2
