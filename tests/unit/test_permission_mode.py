"""Which permission mode a call runs in: an approval policy may turn `ask` into `auto` (nobody
would answer), but nothing but the mode itself lifts `read-only`."""

from __future__ import annotations

import json

import pytest

from xum.core.paths import config_path
from xum.workspaces.safety.choice import (
    ApprovalPolicy,
    PermissionMode,
    SafetyChoice,
    permission_mode,
)


def store_mode(mode: str) -> None:
    path = config_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"workspaces": {"ws1": {"permissions": mode}}}))


@pytest.mark.parametrize("approval", ["never", "deny", None])
def test_read_only_stays_read_only_whatever_the_approval_policy(
    approval: ApprovalPolicy | None,
) -> None:
    assert permission_mode(SafetyChoice(permissions="read-only", approval=approval), "ws1") == (
        "read-only"
    )
    store_mode("read-only")  # the workspace's own mode (the browser's picker)
    assert permission_mode(SafetyChoice(approval=approval), "ws1") == "read-only"


@pytest.mark.parametrize(
    ("given", "approval", "expected"),
    [
        ("ask", "never", "auto"),  # nobody would answer: runs unprompted, as documented
        ("ask", "deny", "ask"),
        ("ask", None, "ask"),
        ("auto", "never", "auto"),
    ],
)
def test_never_only_turns_ask_into_auto(
    given: PermissionMode, approval: ApprovalPolicy | None, expected: PermissionMode
) -> None:
    assert permission_mode(SafetyChoice(permissions=given, approval=approval), "ws1") == expected
    store_mode(given)
    assert permission_mode(SafetyChoice(approval=approval), "ws1") == expected
