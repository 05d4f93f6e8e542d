"""Work a server with many sessions does per step, kept off its event loop or kept small
(issue 24: one server holding hundreds of paced sessions, `bench/bench_fleet.py`)."""

from __future__ import annotations

import os
import threading
from pathlib import Path

import pytest

from tests.support.engine import engine_session
from xum.engine import events as E
from xum.engine.route import resolve_route
from xum.host.inbox import Inbox, InboxItem, WorkspaceRef
from xum.host.listener import NullListener
from xum.host.pending import Approvals, Questions
from xum.llm.client import open_client
from xum.store import registry
from xum.store import sessions as session_files
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


async def test_a_turn_lets_go_of_the_writer_lock_off_the_event_loop(
    fake_llm: FakeLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Taking and letting go of the writer lock truncates its holder file: a metadata write
    that can wait on the disk, so neither may run on the loop every session shares. The lock is
    still let go by the time the turn returns."""
    loop_thread = threading.current_thread()
    on_loop: list[int] = []
    real_ftruncate = os.ftruncate

    def ftruncate(fd: int, length: int) -> None:
        if threading.current_thread() is loop_thread:
            on_loop.append(fd)
        real_ftruncate(fd, length)

    monkeypatch.setattr(os, "ftruncate", ftruncate)
    env = {"ANTHROPIC_API_KEY": "k", "ANTHROPIC_BASE_URL": fake_llm.url}
    route = resolve_route("anthropic:claude-sonnet-5-5", env=env, config={})
    client = open_client(route.endpoint)
    session = engine_session(tmp_path, route, client, ws_id="ws-fleet-lock")
    try:
        fake_llm.script(fakellm.text("one"), fakellm.text("two"))
        for text in ("first", "second"):
            result = await session.run_turn(text)
            assert result.reason == "completed"
            assert not session_files.is_busy("ws-fleet-lock")
    finally:
        await session.aclose()
        session.log.close()
        await client.aclose()
    assert on_loop == []


def test_listing_a_projects_workspaces_builds_only_that_projects_records(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asked on every tool step of a local workspace (are its siblings streaming?): with a
    fleet registered, building every record of every project each time was a visible share of
    a server's step."""
    mine, other = tmp_path / "mine", tmp_path / "other"
    made = {}
    for project, count in ((mine, 2), (other, 30)):
        project.mkdir()
        for i in range(count):
            record = registry.create_workspace(
                project_path=str(project), runtime="local", name_hint=f"w{i}"
            )
            made.setdefault(project, []).append(record.id)
    built: list[str] = []
    original = registry.WorkspaceRecord.from_dict.__func__  # type: ignore[attr-defined]

    def counting(cls: type[registry.WorkspaceRecord], data: dict[str, object]) -> object:
        built.append(str(data.get("id")))
        return original(cls, data)

    monkeypatch.setattr(registry.WorkspaceRecord, "from_dict", classmethod(counting))
    listed = registry.list_workspaces(str(mine))
    assert sorted(r.id for r in listed) == sorted(made[mine])
    assert sorted(built) == sorted(made[mine])
    assert len(registry.list_workspaces()) == 32  # every project's, unchanged


class _CountingItems(dict[str, InboxItem]):
    """The inbox's item table, counting walks over every item."""

    walks = 0

    def values(self):  # type: ignore[no-untyped-def,override]
        _CountingItems.walks += 1
        return super().values()


def test_a_workspaces_status_change_does_not_walk_the_fleets_inbox_items() -> None:
    """A status change (several per step of every running workspace) mirrors that workspace's
    pending requests into the inbox: with hundreds of finished workspaces waiting to be read,
    walking every item each time made each step cost more as the fleet grew."""
    refs = {f"ws-{i}": WorkspaceRef(f"w{i}", "/p/app") for i in range(200)}
    inbox = Inbox(Questions(NullListener()), Approvals(NullListener()), describe=refs.get)
    for i, ws in enumerate(refs):
        inbox.event(ws, E.TurnStart(ts=0, seq=1, turn_id=f"t{i}"))
        inbox.event(ws, E.TurnEnd(ts=0, seq=2, turn_id=f"t{i}", reason="completed"))
        inbox.drive_ended(ws)
    assert len(inbox) == 200
    counted = _CountingItems(inbox._items)
    inbox._items = counted
    _CountingItems.walks = 0
    inbox.pending_changed("ws-7")
    inbox.read("ws-8", 2)  # its notice leaves
    inbox.event("ws-9", E.TurnStart(ts=0, seq=3, turn_id="again"))  # a new turn clears it
    assert _CountingItems.walks == 0
    left = {item.workspace_id for item in inbox.items()}
    assert len(left) == 198 and "ws-8" not in left and "ws-9" not in left and "ws-7" in left
