"""`xum doctor`: read-only, offline, names problems precisely, never prints a key."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.e2e.cli import run_xum


def tree(root: Path) -> dict[str, tuple[int, float]]:
    return (
        {str(p.relative_to(root)): (p.stat().st_size, p.stat().st_mtime) for p in root.rglob("*")}
        if root.exists()
        else {}
    )


def test_doctor_on_a_fresh_machine_writes_nothing(xum_root: Path) -> None:
    result = run_xum("doctor", "--json")
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["ok"] is True
    assert not xum_root.exists()


def test_doctor_reports_key_source_never_value(xum_root: Path) -> None:
    secret = "sk-ant-THIS-MUST-NOT-PRINT"
    result = run_xum("doctor", "--json", env={"ANTHROPIC_API_KEY": secret})
    assert secret not in result.stdout + result.stderr
    report = json.loads(result.stdout)
    anthropic = next(p for p in report["providers"] if p["provider"] == "anthropic")
    assert anthropic == {
        "provider": "anthropic",
        "custom": False,
        "usable": True,
        "source": "env:ANTHROPIC_API_KEY",
    }
    human = run_xum("doctor", env={"ANTHROPIC_API_KEY": secret})
    assert "anthropic (env:ANTHROPIC_API_KEY)" in human.stdout
    assert secret not in human.stdout


def test_doctor_names_file_line_column_of_a_broken_config(xum_root: Path) -> None:
    xum_root.mkdir(mode=0o700)
    providers = xum_root / "providers.jsonc"
    providers.write_text('{\n  "openai": { "apiKey": "k" }\n  "x": 1\n}\n')
    os.chmod(providers, 0o600)
    config = xum_root / "config.json"
    config.write_text('{"a": [1, 2}')
    os.chmod(config, 0o600)
    before = tree(xum_root)
    result = run_xum("doctor", "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    failed = {c["name"]: c["detail"] for c in report["checks"] if c["status"] == "fail"}
    assert f"{providers}:3:" in failed["providers.jsonc"]
    assert f"{config}:1:" in failed["config"]
    assert tree(xum_root) == before


def test_doctor_warns_about_loose_permissions(xum_root: Path) -> None:
    xum_root.mkdir(mode=0o755)
    os.chmod(xum_root, 0o755)
    (xum_root / "secrets.json").write_text("{}")
    os.chmod(xum_root / "secrets.json", 0o644)
    result = run_xum("doctor", "--json")
    report = json.loads(result.stdout)
    perms = next(c for c in report["checks"] if c["name"] == "permissions")
    assert perms["status"] == "warn"
    assert "secrets.json" in perms["detail"]
    assert oct(os.stat(xum_root).st_mode & 0o777) == "0o755"  # reported, not repaired


def test_doctor_flags_unreadable_key_file(xum_root: Path) -> None:
    xum_root.mkdir(mode=0o700)
    (xum_root / "providers.jsonc").write_text('{"deepseek": {"apiKeyFile": "~/nope.key"}}')
    result = run_xum("doctor", "--json")
    assert result.returncode == 1
    report = json.loads(result.stdout)
    assert any(c["name"] == "provider:deepseek" and c["status"] == "fail" for c in report["checks"])


def test_doctor_looks_inside_the_standard_subdirectories(xum_root: Path) -> None:
    for sub in ("sessions/abc", "logs/init", "plans/proj", "scratch/abc"):
        (xum_root / sub).mkdir(parents=True)
    for directory, _, _ in os.walk(xum_root):
        os.chmod(directory, 0o700)
    (xum_root / "logs" / "init" / "abc.log").write_text("out\n")
    os.chmod(xum_root / "logs" / "init" / "abc.log", 0o644)
    os.chmod(xum_root / "sessions" / "abc", 0o755)
    os.chmod(xum_root / "plans" / "proj", 0o750)
    (xum_root / "scratch" / "abc" / "agent-output.txt").write_text("the agent's own file")
    os.chmod(xum_root / "scratch" / "abc" / "agent-output.txt", 0o644)
    before = tree(xum_root)
    report = json.loads(run_xum("doctor", "--json").stdout)
    perms = next(c for c in report["checks"] if c["name"] == "permissions")
    assert perms["status"] == "warn"
    for named in ("logs/init/abc.log is 0o644", "sessions/abc is 0o755", "plans/proj is 0o750"):
        assert named in perms["detail"]
    assert "agent-output.txt" not in perms["detail"]  # inside a private workspace scratch dir
    assert (
        f"chmod -R go-rwx {xum_root}/logs {xum_root}/plans {xum_root}/sessions" in perms["detail"]
    )
    assert tree(xum_root) == before
    assert os.stat(xum_root / "sessions" / "abc").st_mode & 0o777 == 0o755  # never repaired


def test_doctor_reports_mcp_config_errors_by_file_line_and_column(
    xum_root: Path, tmp_path: Path
) -> None:
    xum_root.mkdir(parents=True, exist_ok=True)
    (xum_root / "mcp.jsonc").write_text('{"servers": {\n  "a": "run --token SECRET-ARG",,\n}}')
    project = tmp_path / "proj"
    (project / ".git").mkdir(parents=True)
    (project / ".xum").mkdir()
    (project / ".xum" / "mcp.jsonc").write_text('{"servers": {"ok": "x", "bad": 3}}')
    result = run_xum("doctor", "--json", cwd=project)
    assert result.returncode == 1
    checks = {(c["name"], c["status"]): c["detail"] for c in json.loads(result.stdout)["checks"]}
    assert checks[("mcp.jsonc", "fail")].startswith(f"{xum_root / 'mcp.jsonc'}:2:")
    assert "servers.bad" in checks[("repo mcp.jsonc", "warn")]
    assert "SECRET-ARG" not in result.stdout


def _bin_without_bwrap(tmp_path: Path) -> str:
    """A PATH directory with what doctor's subprocesses need, but no bwrap."""
    import shutil

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("git", "bash"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    return str(bin_dir)


def _sandbox_check(report: dict[str, object]) -> dict[str, str]:
    checks = report["checks"]
    assert isinstance(checks, list)
    return next(c for c in checks if c["name"] == "sandbox")


def test_doctor_reports_the_sandbox_backend(xum_root: Path, tmp_path: Path) -> None:
    import shutil

    report = json.loads(run_xum("doctor", "--json").stdout)
    sandbox = report["sandbox"]
    assert sandbox["mode"] == "auto"
    if shutil.which("bwrap") is not None and sandbox["backend_ok"]:
        assert sandbox["effective"] == "workspace-write"
        assert _sandbox_check(report)["status"] == "ok"
        assert "bubblewrap" in _sandbox_check(report)["detail"]
    # Without bubblewrap: auto warns (and still passes), an explicit mode fails, naming the fix.
    path = _bin_without_bwrap(tmp_path)
    auto = json.loads(run_xum("doctor", "--json", env={"PATH": path}).stdout)
    assert auto["ok"] is True
    assert auto["sandbox"]["effective"] == "off"
    assert _sandbox_check(auto)["status"] == "warn"
    assert "apt-get install bubblewrap" in _sandbox_check(auto)["detail"]
    xum_root.mkdir(mode=0o700, exist_ok=True)
    (xum_root / "config.json").write_text('{"sandbox": {"mode": "read-only"}}')
    os.chmod(xum_root / "config.json", 0o600)
    strict = run_xum("doctor", "--json", env={"PATH": path})
    assert strict.returncode == 1
    report = json.loads(strict.stdout)
    assert report["sandbox"]["effective"] == "refused"
    check = _sandbox_check(report)
    assert check["status"] == "fail" and "bash refuses" in check["detail"]
