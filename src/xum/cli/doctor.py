"""`xum doctor`: a read-only health report. No network I/O, never repairs, never writes."""

from __future__ import annotations

import os
import shlex
import stat
import sys
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, Literal

import click
import orjson

from xum.core.errors import ConfigError
from xum.core.paths import (
    DIR_MODE,
    FILE_MODE,
    config_path,
    providers_path,
    secrets_path,
    xum_root,
)

Status = Literal["ok", "warn", "fail"]


@dataclass
class Check:
    name: str
    status: Status
    detail: str


# The standard subdirectories whose contents xum writes, and how many levels of them are xum's
# own (scratch/<workspace-id>/ holds whatever the agent's commands put there; src/ holds checkouts).
PRIVATE_TREES = {"sessions": 2, "logs": 2, "plans": 2, "scratch": 1}
MAX_NAMED = 8


def _entries(directory: Path, depth: int) -> list[Path]:
    """`directory`'s entries down to `depth` levels, without following symlinks."""
    found: list[Path] = []
    try:
        with os.scandir(directory) as scan:
            children = list(scan)
    except OSError:
        return found
    for entry in children:
        found.append(Path(entry.path))
        if depth > 1 and entry.is_dir(follow_symlinks=False):
            found += _entries(Path(entry.path), depth - 1)
    return found


def _loose(root: Path) -> list[tuple[Path, int]]:
    """Paths under `root` that other users can reach: the root, its direct entries and the
    standard subdirectories' contents."""
    paths = [root, *_entries(root, 1)]
    for name, depth in PRIVATE_TREES.items():
        if (root / name).is_dir() and not (root / name).is_symlink():
            paths += _entries(root / name, depth)
    loose = []
    for path in paths:
        try:
            info = path.lstat()
        except OSError:
            continue
        if stat.S_ISLNK(info.st_mode) or (stat.S_ISREG(info.st_mode) and path.suffix == ".lock"):
            continue
        wanted = DIR_MODE if stat.S_ISDIR(info.st_mode) else FILE_MODE
        if stat.S_IMODE(info.st_mode) & ~wanted & 0o077:
            loose.append((path, stat.S_IMODE(info.st_mode)))
    return loose


def check_root(root: Path) -> list[Check]:
    if not root.exists():
        return [Check("root", "ok", f"{root} does not exist yet; xum creates it on first use")]
    if not root.is_dir():
        return [Check("root", "fail", f"{root} is not a directory; move it away or set XUM_ROOT")]
    checks = [Check("root", "ok", str(root))]
    loose = _loose(root)
    if not loose:
        checks.append(Check("permissions", "ok", "directories 0700, files 0600"))
        return checks
    named = [f"{p.relative_to(root).as_posix() if p != root else p} is {oct(m)}" for p, m in loose]
    if len(named) > MAX_NAMED:
        named[MAX_NAMED:] = [f"and {len(named) - MAX_NAMED} more"]
    fixes = [f"chmod go-rwx {shlex.quote(str(root))}"] if loose[0][0] == root else []
    tops = sorted({p.relative_to(root).parts[0] for p, _ in loose if p != root})
    if tops:
        fixes.append("chmod -R go-rwx " + " ".join(shlex.quote(str(root / t)) for t in tops))
    checks.append(
        Check(
            "permissions",
            "warn",
            "readable by other users: " + ", ".join(named) + f" (run: {' && '.join(fixes)})",
        )
    )
    return checks


def check_config() -> list[Check]:
    from xum.store.config import load_config

    path = config_path()
    if not path.exists():
        return [Check("config", "ok", f"{path} not present (defaults apply)")]
    try:
        load_config(path)
    except ConfigError as exc:
        return [Check("config", "fail", exc.message)]
    return [Check("config", "ok", f"{path} parses")]


def check_secrets() -> list[Check]:
    from xum.core.jsonfile import read_json_object

    path = secrets_path()
    if not path.exists():
        return []
    try:
        data = read_json_object(path, top_level="the top level must be an object")
    except ConfigError as exc:
        return [Check("secrets", "fail", exc.message)]
    return [Check("secrets", "ok", f"{path} parses ({len(data)} project entries)")]


def check_providers() -> tuple[list[Check], list[dict[str, Any]]]:
    from xum.engine.endpoints import find_credential, missing_key_hint, needs_key
    from xum.store.providers import load_providers

    path = providers_path()
    try:
        config = load_providers(path)
    except ConfigError as exc:
        return [Check("providers.jsonc", "fail", exc.message)], []
    checks = [
        Check(
            "providers.jsonc",
            "ok",
            f"{path} parses" if path.exists() else f"{path} not present (environment only)",
        )
    ]
    rows: list[dict[str, Any]] = []
    usable = 0
    for pid in config.all_ids():
        entry = config.get(pid)
        assert entry is not None
        if entry.unknown_keys:
            checks.append(
                Check(
                    f"provider:{pid}",
                    "warn",
                    f"ignored unknown keys: {', '.join(entry.unknown_keys)}",
                )
            )
        row: dict[str, Any] = {"provider": pid, "custom": entry.is_custom}
        try:
            credential = find_credential(entry, os.environ)
        except ConfigError as exc:
            row.update(usable=False, source=None, problem=exc.message)
            checks.append(Check(f"provider:{pid}", "fail", exc.message))
            rows.append(row)
            continue
        if credential.value is not None:
            row.update(usable=True, source=credential.source)
        elif not needs_key(entry):
            if pid in config.entries:
                row.update(usable=True, source="none needed")
            else:
                row.update(
                    usable=False,
                    source=None,
                    problem=f'not set up: add "{pid}": {{}} to providers.jsonc (no key needed)',
                )
        else:
            row.update(usable=False, source=None, problem=missing_key_hint(entry))
        usable += bool(row["usable"])
        rows.append(row)
    if usable == 0:
        checks.append(
            Check(
                "credentials",
                "warn",
                "no provider has a usable credential: set ANTHROPIC_API_KEY or OPENAI_API_KEY "
                "(or another provider's key), or add a provider to providers.jsonc",
            )
        )
    else:
        names = ", ".join(f"{r['provider']} ({r['source']})" for r in rows if r["usable"])
        checks.append(Check("credentials", "ok", f"usable: {names}"))
    return checks, rows


def check_sandbox() -> tuple[list[Check], dict[str, Any]]:
    """The command sandbox: the mode config.json asks for and whether its backend works here
    (one `bwrap ... true`, which writes nothing)."""
    from xum.runtime.sandbox import local_backend
    from xum.workspaces.safety import SafetyChoice, SafetyConfigError, sandbox_settings

    try:
        settings = sandbox_settings(SafetyChoice())
    except (SafetyConfigError, ConfigError) as exc:
        return [Check("sandbox", "fail", exc.message)], {"mode": None}
    backend = local_backend()
    mode = settings.mode
    effective: str = mode
    if mode == "auto":
        effective = "workspace-write" if backend.ok else "off"
    elif mode != "off" and not backend.ok:
        effective = "refused"
    summary = {
        "mode": mode,
        "effective": effective,
        "egress": settings.egress,
        "writable": list(settings.writable),
        "backend": backend.detail,
        "backend_ok": backend.ok,
    }
    remote = "SSH workspaces use the remote host's bubblewrap when present"
    if mode == "off":
        return [
            Check("sandbox", "ok", f"off (config.json): commands run as you; {remote}")
        ], summary
    if backend.ok:
        egress = "no network but its own loopback" if settings.egress == "off" else "network shared"
        detail = f"{effective}{' (auto)' if mode == 'auto' else ''} with {backend.detail}; {egress}"
        return [Check("sandbox", "ok", f"{detail}; {remote}")], summary
    if mode == "auto":
        return [
            Check("sandbox", "warn", f"commands run without a sandbox, as you: {backend.detail}")
        ], summary
    return [
        Check("sandbox", "fail", f"mode {mode} needs a sandbox, so bash refuses: {backend.detail}")
    ], summary


def check_sessions() -> tuple[list[Check], dict[str, Any]]:
    """Count session logs and report damage. Uses the store's read-only inspection."""
    from xum.store import sessions as session_files

    summary: dict[str, Any] = {"count": 0, "damaged_frames": 0, "damaged": []}
    found = session_files.reports()
    if not found:
        return [Check("sessions", "ok", "no sessions yet")], summary
    problems = []
    for name, report in found:
        if not report.exists:
            continue
        summary["count"] += 1
        if report.damaged or report.missing or report.manifest in ("invalid", "stale"):
            summary["damaged_frames"] += report.damaged
            summary["damaged"].append(
                {
                    "session": name,
                    "damaged_seqs": report.damaged_seqs,
                    "missing": report.missing,
                    "manifest": report.manifest,
                }
            )
            problems.append(
                f"{name}: {report.damaged} damaged frame(s)"
                + (f", missing seqs {report.missing}" if report.missing else "")
                + (
                    f", manifest {report.manifest}"
                    if report.manifest in ("invalid", "stale")
                    else ""
                )
            )
    if problems:
        return [
            Check(
                "sessions",
                "warn",
                f"{summary['count']} sessions; quarantined damage (kept on disk, left out of "
                "requests, shown in the transcript): " + "; ".join(problems),
            )
        ], summary
    return [Check("sessions", "ok", f"{summary['count']} sessions, no damaged frames")], summary


def run_checks() -> dict[str, Any]:
    root = xum_root()
    checks = check_root(root)
    if root.is_dir():
        checks += check_config()
        checks += check_secrets()
    provider_checks, providers = check_providers()
    checks += provider_checks
    sandbox_checks, sandbox = check_sandbox()
    checks += sandbox_checks
    session_checks, sessions = check_sessions()
    checks += session_checks
    return {
        "ok": not any(c.status == "fail" for c in checks),
        "root": str(root),
        "checks": [asdict(c) for c in checks],
        "providers": providers,
        "sandbox": sandbox,
        "sessions": sessions,
    }


_MARK = {"ok": "ok  ", "warn": "WARN", "fail": "FAIL"}


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
def doctor(as_json: bool) -> None:
    """Check xum's home, config files, providers, the sandbox and sessions (read-only, offline)."""
    report = run_checks()
    if as_json:
        sys.stdout.write(orjson.dumps(report).decode() + "\n")
    else:
        for check in report["checks"]:
            click.echo(f"[{_MARK[check['status']]}] {check['name']}: {check['detail']}")
        click.echo("all good" if report["ok"] else "problems found: see FAIL lines above")
    sys.exit(0 if report["ok"] else 1)
