"""The periodic "another local workspace is streaming" check of many local sessions of one
project shares one recent scan of the project (`streaming_local_siblings(max_age_s=...)`), while
a plain call (and a session's first check) still scans afresh."""

from __future__ import annotations

from pathlib import Path

from tests.gitrepo import make_repo
from tests.support.workspaces import turn_in_other_process
from xum.workspaces import lifecycle
from xum.workspaces.busy import scan_count, streaming_local_siblings


async def test_sessions_of_one_project_share_a_recent_scan(tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    made = [
        await lifecycle.create_workspace(repo, "local", name_hint=f"w{k}", run_init=False)
        for k in range(3)
    ]
    busy, first, second = (m.record for m in made)
    try:
        with turn_in_other_process(busy.id):
            before = scan_count()
            assert [w.id for w in streaming_local_siblings(first, max_age_s=60)] == [busy.id]
            # Another session of the project takes that scan: no walk of its own.
            assert [w.id for w in streaming_local_siblings(second, max_age_s=60)] == [busy.id]
            assert streaming_local_siblings(busy, max_age_s=60) == []  # never itself
            assert scan_count() == before + 1
        # The turn ended: a recent scan still says what it saw, a fresh one sees the change.
        assert [w.id for w in streaming_local_siblings(first, max_age_s=60)] == [busy.id]
        assert streaming_local_siblings(first) == []
        assert streaming_local_siblings(second, max_age_s=60) == []  # the fresh scan, shared
        assert scan_count() == before + 2
    finally:
        for m in made:
            await m.runtime.close()
