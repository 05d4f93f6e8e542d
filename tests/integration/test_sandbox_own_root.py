"""`$XUM_ROOT` in the sandbox, through the real middleware, bash tool and bubblewrap: in every
mode the root is an empty, read-only directory to a command (the server's token, its lock, the
config and secrets are not there), except the workspace's own places: a worktree checkout under
`src/` and the scratch dir stay writable in workspace-write, and the user's global skills are
readable."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import cast

import orjson
import pytest

from tests.gitrepo import make_repo
from tests.support.sandbox_rig import make_rig
from xum.core.paths import xum_root
from xum.runtime.sandbox import SandboxMode, local_backend
from xum.tools.base import ToolResult
from xum.workspaces.safety.choice import SafetyChoice

pytestmark = pytest.mark.skipif(
    not local_backend().ok, reason=f"no working bubblewrap here: {local_backend().detail}"
)

TOKEN = "sandbox-own-root-token-0123456789abcdef"


async def run_bash(workspace: Path, mode: str, script: str) -> ToolResult:
    rig = make_rig(workspace, choice=SafetyChoice(sandbox=cast("SandboxMode", mode)))
    try:
        return await rig.bash(script)
    finally:
        await rig.middleware.aclose()


@pytest.fixture
def worktree(tmp_path: Path) -> Path:
    """A populated root with a worktree checkout under `src/`, as `-r worktree` makes one."""
    root = xum_root()
    (root / "server").mkdir(parents=True)
    (root / "server" / "auth-token").write_text(TOKEN + "\n")
    (root / "server.lock").write_text(orjson.dumps({"token": TOKEN}).decode())
    (root / "config.json").write_text('{"sandbox": {"mode": "workspace-write"}}')
    (root / "skills" / "tidy").mkdir(parents=True)
    (root / "skills" / "tidy" / "SKILL.md").write_text("skill body\n")
    repo = make_repo(tmp_path / "repo")
    tree = root / "src" / "repo" / "ws"
    tree.parent.mkdir(parents=True)
    subprocess.run(["git", "worktree", "add", "-q", "-b", "ws", str(tree)], cwd=repo, check=True)
    return tree


@pytest.mark.parametrize("mode", ["workspace-write", "read-only"])
async def test_the_root_is_empty_and_read_only_to_commands(worktree: Path, mode: str) -> None:
    root = xum_root()
    result = await run_bash(
        worktree,
        mode,
        f"cat {root}/server/auth-token {root}/server.lock {root}/config.json; "
        f"touch {root}/planted; mkdir {root}/sessions; cat {root}/skills/tidy/SKILL.md",
    )
    assert TOKEN not in result.output
    assert result.output.count("No such file") == 3, result.output
    assert result.output.count("Read-only file system") == 2, result.output
    assert "skill body" in result.output  # the global skills, read-only
    assert not (root / "planted").exists()
    assert (root / "config.json").read_text() == '{"sandbox": {"mode": "workspace-write"}}'


async def test_a_worktree_under_the_root_and_the_scratch_dir_stay_writable(
    worktree: Path,
) -> None:
    result = await run_bash(
        worktree,
        "workspace-write",
        'echo w > made.txt && echo s > "$XUM_SCRATCH_DIR/note" && git add made.txt && '
        "git -c user.name=t -c user.email=t@e commit -qm made && echo ok; "
        f"echo x > {xum_root()}/skills/tidy/SKILL.md",
    )
    assert "ok" in result.output, result.output
    assert (worktree / "made.txt").read_text() == "w\n"
    assert (xum_root() / "scratch" / "ws1" / "note").read_text() == "s\n"
    assert (xum_root() / "skills" / "tidy" / "SKILL.md").read_text() == "skill body\n"


async def test_provider_key_files_outside_the_root_cannot_be_read(
    worktree: Path, tmp_path: Path
) -> None:
    key = tmp_path / "openai.key"
    key.write_text("sk-key-file-value-0123456789\n")
    (xum_root() / "providers.jsonc").write_text(
        orjson.dumps({"openai": {"apiKeyFile": str(key)}}).decode()
    )
    result = await run_bash(worktree, "workspace-write", f"cat {key}; echo end")
    # An empty file in its place (unreadable where the mount is nodev, as /tmp often is).
    assert "sk-key-file-value" not in result.output
    assert "end" in result.output and "No such file" not in result.output
