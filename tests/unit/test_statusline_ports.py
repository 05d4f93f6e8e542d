"""The terminal UI's status line names the workspace's port block when the whole line has room,
and leaves it out before the cost would be cut."""

from __future__ import annotations

from xum.core.portblock import PortBlock
from xum.store.registry import WorkspaceRecord
from xum.tui.runner import Workspace
from xum.tui.statusline import status_line


def workspace(ports: PortBlock | None) -> Workspace:
    record = WorkspaceRecord(
        id="w1", name="fix-login-k3x9", project_path="/p", runtime="local", path="/p", ports=ports
    )
    return Workspace(record)


def test_the_block_is_shown_when_it_fits() -> None:
    line = status_line(workspace(PortBlock(20010, 10)), 120).plain
    assert "ports 20010-20019" in line
    assert "ports" not in status_line(workspace(None), 120).plain


def test_a_narrow_line_keeps_the_cost_rather_than_the_block() -> None:
    line = status_line(workspace(PortBlock(20010, 10)), 50).plain
    assert "ports" not in line and "$0.0000" in line
