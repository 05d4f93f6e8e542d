"""`xum doctor` on a repository's MCP file says whether its servers run: only in a trusted
project, and whether this one is. The real CLI, a real git repository, the real trust registry."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e.cli import run_xum
from tests.gitrepo import APP_FILES, make_repo


def mcp_checks(project: Path, env: dict[str, str] | None = None) -> dict[str, tuple[str, str]]:
    result = run_xum("doctor", "--json", cwd=project, env=env)
    checks = json.loads(result.stdout)["checks"]
    return {c["name"]: (c["status"], c["detail"]) for c in checks if "mcp" in c["name"]}


def test_doctor_says_whether_the_repository_servers_run(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "proj", APP_FILES)
    (project / ".xum").mkdir()
    (project / ".xum" / "mcp.jsonc").write_text('{"servers": {"docs": "docs-mcp"}}')

    checks = mcp_checks(project)
    assert checks["repo mcp.jsonc"][0] == "ok"  # the file itself is fine
    status, detail = checks["repo mcp trust"]
    assert status == "warn"
    assert "run only in a trusted project" in detail
    assert f"{project.resolve()} is not trusted" in detail and "xum trust" in detail

    trusted = run_xum("trust", cwd=project)
    assert trusted.returncode == 0, trusted.stderr
    status, detail = mcp_checks(project)["repo mcp trust"]
    assert status == "ok" and "is trusted, so they run" in detail

    status, detail = mcp_checks(project, {"XUM_DISABLE_PROJECT_AUTOMATION": "1"})["repo mcp trust"]
    assert status == "warn" and "XUM_DISABLE_PROJECT_AUTOMATION=1" in detail


def test_without_a_repository_file_nothing_is_said_about_trust(tmp_path: Path) -> None:
    project = make_repo(tmp_path / "proj", APP_FILES)
    assert "repo mcp trust" not in mcp_checks(project)
