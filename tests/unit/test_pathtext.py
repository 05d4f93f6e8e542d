"""Containment on path text: the check every write fence, sandbox mount and denylist rule uses."""

from __future__ import annotations

import pytest

from xum.core.pathtext import checkout_root, is_within


@pytest.mark.parametrize(
    ("path", "root", "expected"),
    [
        ("/work/repo", "/work/repo", True),
        ("/work/repo/src/a.py", "/work/repo", True),
        ("/work/repo/src", "/work/repo/", True),
        ("/work/repository", "/work/repo", False),  # a sibling sharing the prefix
        ("/work", "/work/repo", False),
        ("/etc/passwd", "/", True),
    ],
)
def test_is_within(path: str, root: str, expected: bool) -> None:
    assert is_within(path, root) is expected


def test_checkout_root_is_the_project_only_for_a_workspace_inside_it() -> None:
    assert checkout_root("/p/repo/sub", "/p/repo") == "/p/repo"
    assert checkout_root("/p/repo", "/p/repo") == "/p/repo"
    assert checkout_root("/home/u/.xum/worktrees/w1", "/p/repo") == "/home/u/.xum/worktrees/w1"
    assert checkout_root("/p/repo-2", "/p/repo") == "/p/repo-2"
