"""The masker learns the server tokens a `xum server` left in `$XUM_ROOT` (its kept
`server/auth-token`, the token in `server.lock`), and takes them again before every call, so a
process that never held the token (`xum run` beside the server) still masks it."""

from __future__ import annotations

import json
from pathlib import Path

from xum.core.ownsecrets import LOCK_TOKEN_SECRET, STORED_TOKEN_SECRET, server_tokens_on_disk
from xum.core.paths import xum_root
from xum.engine.extensions import ToolCall
from xum.runtime.local import LocalRuntime
from xum.tools.base import ToolContext
from xum.workspaces.middleware import LiveOutputMasking
from xum.workspaces.safety.masking import SecretMasker

STORED = "stored-token-0123456789abcdefghijklmnopq"
LOCKED = "locked-token-0123456789abcdefghijklmnopq"


def leave_tokens(root: Path) -> None:
    (root / "server").mkdir(parents=True, exist_ok=True)
    (root / "server" / "auth-token").write_text(STORED + "\n")
    (root / "server.lock").write_text(json.dumps({"url": "http://127.0.0.1:1", "token": LOCKED}))


def test_the_tokens_on_disk_are_read_in_their_formats() -> None:
    root = xum_root()
    assert server_tokens_on_disk() == {}
    leave_tokens(root)
    assert server_tokens_on_disk() == {STORED_TOKEN_SECRET: STORED, LOCK_TOKEN_SECRET: LOCKED}
    # --no-auth writes a null token; a damaged lock contributes nothing and raises nothing.
    (root / "server.lock").write_text(json.dumps({"token": None}))
    assert server_tokens_on_disk() == {STORED_TOKEN_SECRET: STORED}
    (root / "server.lock").write_text("{not json")
    assert server_tokens_on_disk() == {STORED_TOKEN_SECRET: STORED}


async def test_a_masker_made_before_the_server_started_masks_its_token_from_the_next_call(
    tmp_path: Path,
) -> None:
    masker = SecretMasker.for_project({"PROJECT_TOKEN": "project-secret-value"})
    assert STORED in masker.mask(f"x {STORED} x")  # nothing on disk yet
    leave_tokens(xum_root())
    ctx = ToolContext(
        call_id="c1",
        runtime=LocalRuntime(str(tmp_path)),
        workspace_id="abc123",
        workspace_name="ws",
        project_path=str(tmp_path),
        scratch_dir=str(tmp_path),
        env={},
    )
    await LiveOutputMasking(masker).before_tool(ToolCall(id="c1", name="bash", arguments="{}"), ctx)
    said = masker.mask(f"{STORED} {LOCKED} project-secret-value")
    assert said == (
        f"[secret:{STORED_TOKEN_SECRET}] [secret:{LOCK_TOKEN_SECRET}] [secret:PROJECT_TOKEN]"
    )
    # A masker for fixed values (not a project's) keeps its set.
    fixed = SecretMasker({"ONLY": "only-this-value"})
    fixed.refresh()
    assert STORED in fixed.mask(STORED)
