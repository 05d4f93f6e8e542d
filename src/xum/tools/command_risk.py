"""How risky a bash script is: the approval layer's reading of a command before it runs.

The script is parsed with a real shell grammar (`shell_parse`, tree-sitter-bash) and walked
whole: every simple command in lists, pipelines, subshells, groups, `if`/`for`/`while`/`case` and
function bodies, and inside command and process substitutions. Wrappers are taken off (`sudo`,
`env -S`, `timeout`, `xargs`, ...) and the text handed to a shell (`bash -c`, `eval`, a heredoc
or a pipe into `sh`) is read again as a script, up to 8 levels deep (`shell_words`). This is a
reading, not an interpreter: anything it cannot follow counts against the script, never for it.

* Critical (always needs a person, in every permission mode; `command_rules`, `git_risk`): `rm`
  that is recursive and forced on a path outside the checkout (or only known at run time) or
  recursive on a broad path (`/`, `~`, `/etc`), `find -delete` outside the checkout, making file
  systems, writing to a disk device, `chmod`/`chown -R` on broad paths, fork bombs, force pushes
  (`-f`, `--force*`, `--mirror`, `+refspec`), git aliases or program-running settings set with
  `-c`, `git config` or `GIT_CONFIG_*`; and what cannot be read before it runs: a command name
  from a variable or a substitution, `bash -c "$x"`, `eval "$x"`, a fetched or decoded payload
  piped into a shell or an interpreter, a script that does not parse and mentions anything risky.
* Allowlisted (runs without asking in the `ask` mode): every simple command is a read-only
  built-in one (`ls`, `cat`, `git status`, `rg`, ...) or starts with a prefix the user chose to
  always allow in this project, and nothing writes through a redirection.
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from xum.tools.command_rules import (
    DISK,
    HARMLESS_TARGETS,
    critical_reasons,
    git_config_file,
    outside,
    unparsed_reasons,
)
from xum.tools.shell_handoff import file_runs, files_written, handoffs
from xum.tools.shell_parse import SimpleCommand, Word, parse_script
from xum.tools.shell_words import Inner, find_exec_commands, inner_scripts, program, unwrap

MAX_DEPTH = 8  # `bash -c` inside `eval` inside ...: deeper than this needs a person

# Commands that only read (with no option that makes them write or run something).
READ_ONLY_COMMANDS = frozenset(
    {
        "ls", "cat", "head", "tail", "wc", "grep", "egrep", "fgrep", "rg", "pwd", "echo",
        "printf", "which", "type", "file", "stat", "tree", "diff", "cmp", "du", "df", "date",
        "whoami", "id", "uname", "env", "printenv", "basename", "dirname", "realpath",
        "readlink", "sort", "uniq", "cut", "tr", "nl", "less", "more", "true", "false", "test",
        "[", "jq", "sha256sum", "md5sum", "hostname",
    }
)  # fmt: skip
READ_ONLY_GIT = frozenset(
    {
        "status", "log", "diff", "show", "blame", "ls-files", "grep", "rev-parse", "describe",
        "shortlog", "reflog", "ls-tree", "cat-file", "merge-base", "for-each-ref", "whatchanged",
    }
)  # fmt: skip


@dataclass(frozen=True, slots=True)
class CommandRisk:
    critical: tuple[str, ...]  # why a person must approve (empty: not critical)
    allowlisted: bool  # every part is read-only or matches a remembered prefix
    prefix: str | None  # what "always allow" would remember (None: nothing one prefix covers)
    understood: bool  # the whole script was read (it parsed; every command name is known)


@dataclass(slots=True)
class _Reading:
    reasons: list[str] = field(default_factory=list)
    unlisted: list[list[str]] = field(default_factory=list)  # commands outside the allowlist
    written: bool = False  # a redirection writes somewhere that matters
    wrapped: bool = False  # a wrapped command (`sudo make`) is never remembered as a prefix
    understood: bool = True


def _is_read_only(words: list[str]) -> bool:
    if not words:
        return True
    name = posixpath.basename(words[0])
    if name == "git":
        i = 1
        while i < len(words) and words[i].startswith("-"):
            i += 2 if words[i] in ("-C", "-c") else 1
        return (
            i < len(words)
            and words[i] in READ_ONLY_GIT
            and not any(w.startswith("--output") for w in words)
        )
    if name == "find":
        return not any(w in _FIND_ACTIONS for w in words)
    if name == "sed":
        return not any(w.startswith(("-i", "--in-place")) for w in words[1:])
    if name == "sort":
        return not any(w.startswith(("-o", "--output")) for w in words[1:])
    if name in ("env", "printenv"):
        return all(w.startswith("-") or "=" in w for w in words[1:])
    return name in READ_ONLY_COMMANDS


_FIND_ACTIONS = frozenset(
    {"-exec", "-execdir", "-delete", "-ok", "-okdir", "-fprint", "-fprint0", "-fprintf", "-fls"}
)


def _strings(words: Sequence[Word]) -> list[str]:
    return [w.text for w in words]


def command_prefix(words: list[str]) -> str:
    """What "always allow" remembers for one simple command: its program and, when the second
    word is a subcommand (not an option or a path), that too (`npm test`, `cargo build`)."""
    stripped = _strings(unwrap([Word(w) for w in words]).words) or words
    head = [posixpath.basename(stripped[0])]
    if len(stripped) > 1 and re.fullmatch(r"[a-z][a-z0-9_:-]*", stripped[1]):
        head.append(stripped[1])
    return " ".join(head)


def matches_prefix(words: list[str], prefixes: Sequence[str]) -> bool:
    stripped = _strings(unwrap([Word(w) for w in words]).words)
    if not stripped:
        return False
    normal = [posixpath.basename(stripped[0]), *stripped[1:]]
    return any(p.split() and normal[: len(p.split())] == p.split() for p in prefixes)


def assess(script: str, *, workspace: str, allowed_prefixes: Sequence[str] = ()) -> CommandRisk:
    """The approval layer's reading of `script`, run in `workspace`."""
    reading = _Reading()
    _read(script, workspace, allowed_prefixes, 0, reading)
    if "\\\n" in script:
        # bash joins a backslash-newline even inside a word (`rm -r\<newline>f`), which the
        # grammar splits: read it both ways and keep the worse of the two.
        _read(script.replace("\\\n", ""), workspace, allowed_prefixes, 0, reading)
    prefixes = {command_prefix(words) for words in reading.unlisted}
    one = len(prefixes) == 1 and reading.understood and not reading.written
    return CommandRisk(
        critical=tuple(dict.fromkeys(reading.reasons)),
        allowlisted=reading.understood and not reading.unlisted and not reading.written,
        prefix=prefixes.pop() if one and not reading.wrapped else None,
        understood=reading.understood,
    )


def _read(
    script: str, workspace: str, prefixes: Sequence[str], depth: int, reading: _Reading
) -> None:
    parsed = parse_script(script)
    if parsed.errors:
        reading.understood = False
        reading.reasons += unparsed_reasons(script)
    cwd_known = True
    files = dict(parsed.files)
    for command in parsed.commands:
        unwrapped = unwrap(command.words, command.assignments)
        plain = unwrapped.words
        if plain and plain[0].static and plain[0].text in ("cd", "pushd", "popd"):
            moved_to = [w for w in plain[1:] if not w.text.startswith("-")]
            inside = bool(moved_to) and not outside(moved_to[0], workspace, True)
            cwd_known = cwd_known and inside and plain[0].text != "popd"
            continue
        here = cwd_known and not unwrapped.moved
        reading.reasons += critical_reasons(command, unwrapped, workspace, here)
        for found in find_exec_commands(plain[1:]) if _named(plain, "find") else []:
            if found:
                _read_words(found, command, workspace, prefixes, depth, here, reading)
        files.update(files_written(unwrapped, command))
        inners = [
            *inner_scripts(unwrapped, command),
            *handoffs(unwrapped, command),
            *file_runs(unwrapped, files, command.stdin_file),
        ]
        _read_inner(inners, workspace, prefixes, depth, reading)
        _list(command, unwrapped.words, unwrapped.wrappers, parsed.functions, prefixes, reading)
    for alias in parsed.aliases:
        if depth < MAX_DEPTH:
            _read(alias, workspace, prefixes, depth + 1, reading)
    written = [w for w in parsed.written if w.text not in HARMLESS_TARGETS]
    reading.written |= bool(written)
    reading.reasons += [f"a redirection writes to the device {w.text}" for w in written
                        if DISK.match(w.text)]  # fmt: skip
    if any(git_config_file(w) for w in written):
        reading.reasons.append("writes a git config file, where an alias can hide any command")


def _read_words(
    words: list[Word],
    command: SimpleCommand,
    workspace: str,
    prefixes: Sequence[str],
    depth: int,
    cwd_known: bool,
    reading: _Reading,
) -> None:
    """A command that another one runs (`find -exec CMD`), read like one of the script's."""
    inner = SimpleCommand(words, function=command.function)
    unwrapped = unwrap(words)
    reading.reasons += critical_reasons(inner, unwrapped, workspace, cwd_known)
    nested = [*inner_scripts(unwrapped, inner), *handoffs(unwrapped, inner)]
    _read_inner(nested, workspace, prefixes, depth, reading)


def _read_inner(
    inners: list[Inner], workspace: str, prefixes: Sequence[str], depth: int, reading: _Reading
) -> None:
    """Read the shell text commands hand on, one level deeper."""
    for inner in inners:
        if inner.text is None:
            reading.reasons.append(inner.why)
        elif depth >= MAX_DEPTH:
            reading.reasons.append("shell text nested more than 8 levels deep")
        elif inner.guess:
            # Only maybe a command: its critical parts count, nothing else.
            scratch = _Reading()
            _read(inner.text, workspace, prefixes, depth + 1, scratch)
            reading.reasons += [r for r in scratch.reasons if not r.startswith("xum could not")]
        else:
            _read(inner.text, workspace, prefixes, depth + 1, reading)


def _named(words: list[Word], name: str) -> bool:
    return bool(words) and words[0].static and program(words[0]) == name


def _list(
    command: SimpleCommand,
    plain: list[Word],
    wrappers: list[str],
    functions: set[str],
    prefixes: Sequence[str],
    reading: _Reading,
) -> None:
    """Whether one command keeps the script on the allowlist."""
    if not plain:
        if wrappers or not command.words:
            return  # `A=1` alone, or `command -v x`
    elif not plain[0].static or plain[0].pattern:
        reading.understood = False
    # `sudo ls` is not `ls`; `time`, `command` and assignments change nothing that matters.
    wrapped = bool(set(wrappers) - {"time", "command"})
    reading.wrapped |= wrapped
    texts = _strings(command.words)
    if plain and plain[0].static and plain[0].text in functions:
        return  # a call to a function of the script: its body was read like the rest
    if wrapped or not (_is_read_only(_strings(plain)) or matches_prefix(texts, prefixes)):
        reading.unlisted.append(texts)
