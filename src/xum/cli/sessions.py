"""`xum sessions` and `xum session`: list and replay recorded sessions, read-only."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import click
import orjson

from xum.core.clock import iso_from_ms
from xum.core.errors import XumError
from xum.store import frame_types as ev
from xum.store import sessions as session_files
from xum.store.frames import damage_reason
from xum.store.registry import WorkspaceRecord, list_workspaces

DEFAULT_LIMIT = 20
MAX_LIMIT = 500


@dataclass
class SessionRow:
    record: WorkspaceRecord
    updated_ms: int
    turns: int
    last_reason: str | None
    cost_usd: float | None
    damaged: int
    problem: str | None = None  # why the log cannot be read (the row is listed all the same)
    # Each damaged frame: `line` (1-based, in chat.jsonl), `seq` (None when it cannot be told),
    # `why` it was quarantined.
    damaged_list: list[dict[str, Any]] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        r = self.record
        return {
            "id": r.id,
            "name": r.name,
            "title": r.title,
            "project": r.project_path,
            "runtime": r.runtime,
            "path": r.path,
            "model": r.model,
            "created": iso_from_ms(r.created_at),
            "updated": iso_from_ms(self.updated_ms),
            "turns": self.turns,
            "last_turn": self.last_reason,
            "cost_usd": self.cost_usd,
            "damaged_frames": self.damaged,
            "damaged": self.damaged_list,
            "problem": self.problem,
        }


def _row(record: WorkspaceRecord) -> SessionRow:
    from xum.store.sessionlog import SessionLog

    try:
        log = SessionLog.open(record.id)
    except (XumError, OSError) as exc:
        # One unreadable session is reported as damaged; it never hides the others.
        problem = exc.message if isinstance(exc, XumError) else f"cannot read: {exc}"
        return SessionRow(record, record.created_at, 0, None, None, 0, problem)
    turns, last_reason, cost, known = 0, None, 0.0, True
    for frame in log.frames:
        if frame.type == ev.TURN_END:
            turns += 1
            last_reason = ev.payload(frame, ev.TURN_END).get("reason")
        elif frame.type == ev.ASSISTANT_MESSAGE:
            value = ev.payload(frame, ev.ASSISTANT_MESSAGE).get("cost_usd")
            if value is None:
                known = False
            else:
                cost += float(value)
    updated = max([record.created_at] + [f.ts for f in log.frames[-1:]])
    damaged = [
        {"line": line, "seq": frame.seq, "why": damage_reason(frame.raw or b"")}
        for line, frame in log.damaged_lines()
    ]
    return SessionRow(
        record,
        updated,
        turns,
        last_reason,
        cost if known else None,
        len(damaged),
        damaged_list=damaged,
    )


def current_project() -> str:
    from xum.workspaces.checkouts.shared import project_root

    return str(project_root(Path.cwd()))


def session_rows(all_projects: bool) -> list[SessionRow]:
    records = list_workspaces(None if all_projects else current_project())
    rows = [_row(r) for r in records if session_files.has_log(r.id)]
    rows.sort(key=lambda row: (row.updated_ms, row.record.created_at), reverse=True)
    return rows


@click.command()
@click.option("--json", "as_json", is_flag=True, help="One JSON object per line.")
@click.option("--all", "all_projects", is_flag=True, help="Every project, not just this one.")
@click.option(
    "--limit", type=click.IntRange(1, MAX_LIMIT), default=DEFAULT_LIMIT, show_default=True
)
def sessions(as_json: bool, all_projects: bool, limit: int) -> None:
    """List recorded sessions, newest first (this project unless --all)."""
    rows = session_rows(all_projects)[:limit]
    if as_json:
        for row in rows:
            sys.stdout.write(orjson.dumps(row.to_dict()).decode() + "\n")
        return
    if not rows:
        scope = "anywhere" if all_projects else f"for {current_project()} (try --all)"
        click.echo(f"no sessions {scope}")
        return
    for row in rows:
        cost = "?" if row.cost_usd is None else f"${row.cost_usd:.4f}"
        title = row.record.title or row.record.name
        head = f"{row.record.id}  {iso_from_ms(row.updated_ms)[:19]}  {row.record.name:<28} "
        if row.problem is not None:
            click.echo(f"{head}DAMAGED: {row.problem}")
            continue
        click.echo(
            f"{head}{row.turns} turn(s) {row.last_reason or '-':<11} {cost:>9}  {title[:60]}"
        )
        if row.damaged_list:
            click.echo(f"    {row.damaged} damaged frame(s), quarantined (xum doctor):")
        for item in row.damaged_list:
            seq = "?" if item["seq"] is None else item["seq"]
            click.echo(f"    line {item['line']}, seq {seq}: {item['why']}")


def _resolve(ident: str) -> WorkspaceRecord:
    if ident == "last":
        rows = session_rows(False) or session_rows(True)
        if not rows:
            raise XumError("there are no sessions yet", hint='start one with xum run "..."')
        return rows[0].record
    for record in list_workspaces(None):
        if record.id == ident or record.name == ident:
            return record
    raise XumError(f"no session '{ident}'", hint="`xum sessions --all` lists them")


@click.command()
@click.argument("ident", metavar="ID|last")
@click.option("--json", "as_json", is_flag=True, help="The session as NDJSON events.")
def session(ident: str, as_json: bool) -> None:
    """Replay one session (by workspace id or name, or `last`), read-only."""
    from xum.engine.derive import replay_events
    from xum.store.sessionlog import SessionLog

    try:
        record = _resolve(ident)
        log = SessionLog.open(record.id)
    except XumError as exc:
        click.echo(f"error: {exc.message}", err=True)
        if exc.hint:
            click.echo(f"  hint: {exc.hint}", err=True)
        sys.exit(1)
    if as_json:
        for event in replay_events(log.frames):
            sys.stdout.write(orjson.dumps(event.to_dict()).decode() + "\n")
        return
    click.echo(f"{record.name} ({record.id}) · {record.runtime} · {record.path}")
    for event in replay_events(log.frames):
        _print_event(event.to_dict())


def _print_event(event: dict[str, Any]) -> None:
    kind = event["type"]
    if kind == "turn-start":
        click.echo(f"\n── turn {event['turn_id']} ──")
    elif kind == "user-message":
        prefix = "(xum)" if event.get("synthetic") else ">"
        click.echo(f"{prefix} {event['text']}")
    elif kind == "assistant-message":
        from xum.engine.display import strip_controls

        for search in event.get("web_searches") or ():
            # The provider's own searches: the query only (results are in `--json`).
            query = strip_controls(str(search.get("query", "")))[:100]
            click.echo(f"  ⌕ searched: {query} ({len(search.get('results') or ())} results)")
        if event["text"]:
            click.echo(event["text"])
        for call in event["tool_calls"]:
            click.echo(f"  → {call['name']} {call['arguments'][:100]}")
    elif kind == "tool-result":
        mark = "✗" if event["is_error"] else "✓"
        first = event["output"].strip().splitlines()[:1]
        click.echo(f"  {mark} {event['name']}: {first[0][:100] if first else ''}")
    elif kind == "turn-end":
        click.echo(f"── {event.get('reason')} ──")
    elif kind == "damaged-frame":
        click.echo(f"[frame {event['seq'] or '?'} is damaged and was quarantined]")
    elif kind == "compaction":
        click.echo("[context compacted]")
    elif kind == "context-reset":
        click.echo("[context reset]")
