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


def _named(items: list[str]) -> str:
    """`items` joined, at most MAX_NAMED of them, then how many more."""
    shown = items[:MAX_NAMED]
    if len(items) > MAX_NAMED:
        shown.append(f"and {len(items) - MAX_NAMED} more")
    return "; ".join(shown)


def _holder_text(holder: dict[str, object]) -> str:
    from xum.core.lock import describe_holder

    return describe_holder(holder)


def check_sandbox() -> tuple[list[Check], dict[str, Any]]:
    """The command sandbox: the mode config.json asks for and whether its backend works here
    (one `bwrap ... true`, which writes nothing)."""
    from xum.runtime.sandbox import local_backend
    from xum.workspaces.safety.choice import SafetyChoice, SafetyConfigError, sandbox_settings

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
    """Every session log's health (the store's read-only inspection): frames, damage, missing
    sequence numbers, unpublished tail bytes, a turn left open, who holds the writer lock, and
    logs that cannot be read at all. Nothing is locked, written or repaired."""
    from xum.store import sessions as session_files

    summary: dict[str, Any] = {
        "count": 0,
        "frames": 0,
        "damaged_frames": 0,
        "damaged": [],
        "open_turns": [],
        "unpublished_tail_bytes": 0,
        "tails": [],
        "in_use": [],
        "unreadable": [],
        "each": [],
    }
    found = session_files.reports()
    if not found:
        return [Check("sessions", "ok", "no sessions yet")], summary
    damage, unreadable, interrupted, in_use = [], [], [], []
    for name, report in found:
        if not report.exists:
            continue
        summary["count"] += 1
        summary["frames"] += report.frames
        summary["each"].append(
            {
                "session": name,
                "frames": report.frames,
                "last_seq": report.last_seq,
                "damaged_seqs": report.damaged_seqs,
                "missing": report.missing,
                "manifest": report.manifest,
                "unpublished_tail_bytes": report.unpublished_tail_bytes,
                "open_turn": report.open_turn,
                "writer": report.writer,
                "problem": report.problem,
            }
        )
        if report.writer is not None:
            summary["in_use"].append({"session": name, **report.writer})
            in_use.append(f"{name} by {_holder_text(report.writer)}")
        if report.manifest == "unreadable":
            summary["unreadable"].append({"session": name, "problem": report.problem})
            unreadable.append(f"{name}: {report.problem}")
            continue
        if report.damaged or report.missing or report.manifest in ("invalid", "stale"):
            summary["damaged_frames"] += report.damaged
            summary["damaged"].append(
                {
                    "session": name,
                    "damaged_seqs": report.damaged_seqs,
                    "missing": report.missing,
                    "manifest": report.manifest,
                    "problem": report.problem,
                }
            )
            damage.append(
                f"{name}: {report.damaged} damaged frame(s)"
                + (f", missing seqs {report.missing}" if report.missing else "")
                + (
                    f", manifest {report.manifest}"
                    + (f" ({report.problem})" if report.problem else "")
                    if report.manifest in ("invalid", "stale")
                    else ""
                )
            )
        # A turn left open and bytes past the boundary are what a killed writer leaves; the next
        # writer closes the turn and cuts the tail. Unless that writer is running right now.
        busy = report.writer is not None
        if report.open_turn and not busy:
            summary["open_turns"].append({"session": name, "turn_id": report.open_turn})
        if report.unpublished_tail_bytes and not busy:
            summary["unpublished_tail_bytes"] += report.unpublished_tail_bytes
            summary["tails"].append({"session": name, "bytes": report.unpublished_tail_bytes})
        if (report.open_turn or report.unpublished_tail_bytes) and not busy:
            parts = [f"turn {report.open_turn} left open"] if report.open_turn else []
            if report.unpublished_tail_bytes:
                parts.append(f"{report.unpublished_tail_bytes} unpublished tail byte(s)")
            interrupted.append(f"{name}: {', '.join(parts)}")
    checks = []
    detail = f"{summary['count']} sessions, {summary['frames']} frames"
    if damage:
        checks.append(
            Check(
                "sessions",
                "warn",
                f"{detail}; quarantined damage (kept on disk, left out of requests, shown in "
                "the transcript): " + _named(damage),
            )
        )
    else:
        checks.append(Check("sessions", "ok", f"{detail}, no damaged frames"))
    if unreadable:
        checks.append(
            Check(
                "unreadable sessions",
                "fail",
                "cannot be read (listed as damaged; move the file named out of the way): "
                + _named(unreadable),
            )
        )
    if interrupted:
        checks.append(
            Check(
                "interrupted sessions",
                "warn",
                "a writer stopped mid-turn (the next turn in the session closes the turn as "
                "interrupted and drops the unpublished bytes): " + _named(interrupted),
            )
        )
    if in_use:
        checks.append(Check("sessions in use", "ok", "writer lock held: " + _named(in_use)))
    return checks, summary


def check_mcp(directory: Path) -> list[Check]:
    """The global MCP config and, for the project around `directory`, its repo and workspace
    files: parse errors fail, skipped entries warn. Commands and header values are never shown
    (they may carry secrets); only server names and counts."""
    from xum.workspaces.mcp import config as mc
    from xum.workspaces.mcp import paths as mp

    top = next((d for d in (directory, *directory.parents) if (d / ".git").exists()), directory)
    checks: list[Check] = []
    files = [
        ("mcp.jsonc", mp.global_path(), "global"),
        ("repo mcp.jsonc", mp.repo_path(top), "repo"),
        ("mcp.local.jsonc", mp.local_path(top), "local"),
    ]
    for name, path, kind in files:
        if not path.exists():
            if kind == "global":
                checks.append(Check(name, "ok", f"{path} not present (no MCP servers)"))
            continue
        problems: list[str] = []
        data, problem = mc.read_file(path)
        if problem is not None:
            checks.append(Check(name, "fail", problem))
            continue
        if kind == "global":
            servers, _ = mc.parse_global(data, path=str(path), problems=problems)
        elif kind == "repo":
            servers = mc.parse_repo(data, path=str(path), problems=problems)
        else:
            servers = {}
            mc.parse_overrides(data, path=str(path), problems=problems)
        for line in problems:
            checks.append(Check(name, "warn", line))
        if not problems:
            listed = f": {len(servers)} server(s) ({', '.join(sorted(servers))})" if servers else ""
            checks.append(Check(name, "ok", f"{path} parses{listed}"))
        if kind == "repo":
            checks.append(_repo_mcp_trust(top))
    return checks


def _repo_mcp_trust(top: Path) -> Check:
    """Whether the repository's MCP servers run here: only in a trusted project, and not with
    project automation switched off."""
    from xum.workspaces.safety.trust import DISABLE_ENV, automation_disabled, is_trusted, trust_root

    name = "repo mcp trust"
    rule = "a repository's MCP servers run only in a trusted project"
    root = trust_root(top)
    if not is_trusted(root, root=root):
        return Check(
            name,
            "warn",
            f"{rule}, and {root} is not trusted, so they do not run "
            "(review .xum/mcp.jsonc, then run `xum trust` in the project)",
        )
    if automation_disabled():
        return Check(name, "warn", f"{rule}; {root} is trusted, but {DISABLE_ENV}=1 withholds them")
    return Check(name, "ok", f"{rule}, and {root} is trusted, so they run")


def run_checks() -> dict[str, Any]:
    root = xum_root()
    checks = check_root(root)
    if root.is_dir():
        checks += check_config()
        checks += check_secrets()
    checks += check_mcp(Path.cwd())
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
        warnings = sum(check["status"] == "warn" for check in report["checks"])
        if not report["ok"]:
            click.echo("problems found: see FAIL lines above")
        elif warnings:
            click.echo(f"{warnings} warning(s): see WARN lines above (nothing failed)")
        else:
            click.echo("all good")
    sys.exit(0 if report["ok"] else 1)
