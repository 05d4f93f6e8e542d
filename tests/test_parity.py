"""Reconcile PARITY.md with the program, both ways (see the ledger's header for the rules)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

import click
import pytest

from xum.cli.app import COMMANDS, cli

REPO = Path(__file__).resolve().parents[1]
LEDGER = REPO / "PARITY.md"
STATUSES = {"implemented", "partial", "deferred"}
RECONCILED_KINDS = {"command", "flag", "tool", "slash"}
SOURCE_CHECKED_KINDS = {"env", "config"}


@dataclass(frozen=True)
class Row:
    names: tuple[str, ...]
    kind: str
    status: str
    line: int


def parse_ledger() -> list[Row]:
    rows = []
    for lineno, line in enumerate(LEDGER.read_text(encoding="utf-8").splitlines(), 1):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) < 5 or cells[2] not in STATUSES:
            continue
        names = tuple(re.findall(r"`([^`]+)`", cells[0])) or (cells[0],)
        rows.append(Row(names, cells[1], cells[2], lineno))
    return rows


def advertised_cli_surfaces() -> set[tuple[str, str]]:
    """(kind, name) of every command and flag the real parser exposes (help excluded)."""
    out: set[tuple[str, str]] = set()
    ctx = click.Context(cli)

    def options(command: click.Command, prefix: str) -> None:
        for param in command.params:
            if isinstance(param, click.Option) and param.name != "help":
                longest = max(param.opts, key=len)
                out.add(("flag", f"{prefix}{longest}".strip()))

    options(cli, "")
    for name in COMMANDS:
        command = cli.get_command(ctx, name)
        assert command is not None
        out.add(("command", name))
        options(command, name + " ")
        if isinstance(command, click.Group):
            for sub in command.list_commands(ctx):
                subcommand = command.get_command(ctx, sub)
                assert subcommand is not None
                out.add(("command", f"{name} {sub}"))
                options(subcommand, f"{name} {sub} ")
    return out


def advertised_tools() -> set[str]:
    # No fallback on ImportError: an empty set would quietly switch the reconciliation off.
    from xum.tools.registry import advertised_tool_names

    return set(advertised_tool_names())


def advertised_slash_commands() -> set[str]:
    from xum.context.slash import advertised_slash_names

    return set(advertised_slash_names())


def advertised() -> set[tuple[str, str]]:
    out = advertised_cli_surfaces()
    out |= {("tool", name) for name in advertised_tools()}
    out |= {("slash", name) for name in advertised_slash_commands()}
    return out


ROWS = parse_ledger()


def test_ledger_parses_and_has_rows() -> None:
    assert len(ROWS) > 20
    for row in ROWS:
        assert row.kind, f"PARITY.md:{row.line} has no kind"


def test_no_surface_appears_twice() -> None:
    seen: dict[tuple[str, str], int] = {}
    for row in ROWS:
        for name in row.names:
            key = (row.kind, name)
            assert key not in seen, f"{key} in PARITY.md lines {seen[key]} and {row.line}"
            seen[key] = row.line


def test_every_advertised_surface_has_a_live_row() -> None:
    live = {(r.kind, n) for r in ROWS if r.status != "deferred" for n in r.names}
    missing = sorted(advertised() - live)
    assert not missing, f"advertised but not implemented/partial in PARITY.md: {missing}"


def test_every_live_row_names_something_that_exists() -> None:
    real = advertised()
    ghosts = [
        (r.line, r.kind, n)
        for r in ROWS
        if r.status != "deferred" and r.kind in RECONCILED_KINDS
        for n in r.names
        if (r.kind, n) not in real
    ]
    assert not ghosts, f"PARITY.md claims surfaces the program does not have: {ghosts}"


def test_no_deferred_name_is_advertised() -> None:
    real = advertised()
    leaks = [
        (r.line, r.kind, n)
        for r in ROWS
        if r.status == "deferred"
        for n in r.names
        if (r.kind, n) in real
    ]
    assert not leaks, f"deferred in PARITY.md but advertised: {leaks}"


def _source_text() -> str:
    return "\n".join(p.read_text(encoding="utf-8") for p in (REPO / "src" / "xum").rglob("*.py"))


@pytest.mark.parametrize("kind", sorted(SOURCE_CHECKED_KINDS))
def test_live_env_and_config_rows_are_read_by_the_code(kind: str) -> None:
    source = _source_text()
    unused = [
        (r.line, n)
        for r in ROWS
        if r.kind == kind and r.status != "deferred"
        for n in r.names
        if f'"{n}"' not in source and f"'{n}'" not in source
    ]
    assert not unused, f"{kind} rows marked live but never read in src/xum: {unused}"
