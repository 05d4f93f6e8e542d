"""How risky a bash script is: the approval layer's reading of a command before it runs.

The script is split into simple commands (at `;`, `&&`, `||`, `|`, `&`, newlines and
parentheses) and each is read word by word with shell quoting rules. This is a reading, not an
interpreter: anything it cannot follow (unbalanced quotes, `$(...)`, backticks, `eval`, a word
that is only known at run time) counts against the script, never for it.

* Critical (always needs a person, in every permission mode): `rm` that is both recursive and
  forced on a path outside the checkout (or one only known at run time: `$HOME`, `~`, globs
  from `/`), making file systems (`mkfs*`, `mke2fs`, `mkswap`, `wipefs`), `dd` writing to a
  device (`of=/dev/...`), a redirection into a disk device, and force pushes (`git push -f`,
  `--force`, `--force-with-lease`, `--force-if-includes`, `--mirror`, a `+refspec`).
* Allowlisted (runs without asking in the `ask` mode): every simple command is a read-only
  built-in one (`ls`, `cat`, `git status`, `rg`, ...) or starts with a prefix the user chose to
  always allow in this project, and nothing writes through a redirection.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from collections.abc import Sequence
from dataclasses import dataclass

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
# Words that run the rest of the line as a command, with their options that take a value.
_WRAPPERS: dict[str, frozenset[str]] = {
    "sudo": frozenset({"-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t", "-D"}),
    "doas": frozenset({"-u", "-C"}),
    "nice": frozenset({"-n"}),
    "ionice": frozenset({"-c", "-n", "-p"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "stdbuf": frozenset({"-i", "-o", "-e"}),
    "xargs": frozenset({"-I", "-n", "-P", "-d", "-L", "-s", "-E", "-a"}),
    "env": frozenset({"-u", "-C", "-S"}),
    "nohup": frozenset(),
    "time": frozenset(),
    "command": frozenset(),
    "builtin": frozenset(),
    "exec": frozenset({"-a"}),
    "setsid": frozenset(),
}
_MKFS = re.compile(r"^(mkfs(\.\w+)?|mke2fs|mkswap|wipefs|mkdosfs|mkntfs)$")
_DISK = re.compile(r"^/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-|loop|sr)")
_PUNCTUATION = ";&|()<>\n"
_REDIRECT = re.compile(r"^[0-9]*(>|>>|>\||&>|&>>|<>|>&)$")
_HARMLESS_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "1", "2", "-"})


@dataclass(frozen=True, slots=True)
class CommandRisk:
    critical: tuple[str, ...]  # why a person must approve (empty: not critical)
    allowlisted: bool  # every part is read-only or matches a remembered prefix
    prefix: str | None  # what "always allow" would remember (None: nothing one prefix covers)
    understood: bool  # the whole script was read (no quoting error, no substitution)


@dataclass(frozen=True, slots=True)
class Parsed:
    commands: list[list[str]]  # the simple commands, redirections taken out
    written: list[str]  # where output redirections write
    understood: bool


def parse(script: str) -> Parsed:
    """The simple commands of `script` as word lists, where its redirections write, and
    whether all of it could be read."""
    lexer = shlex.shlex(script, posix=True, punctuation_chars=_PUNCTUATION)
    lexer.whitespace = " \t\r"
    lexer.whitespace_split = True  # a word ends only at whitespace or an operator
    understood = not any(mark in script for mark in ("$(", "`", "<(", ">("))
    try:
        tokens = list(lexer)
    except ValueError:  # unbalanced quotes
        return Parsed([], [], False)
    commands: list[list[str]] = [[]]
    written: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        # A digit glued to a redirection (`2>`) arrives as a word and then the operator.
        if token.isdigit() and i + 1 < len(tokens) and _REDIRECT.match(tokens[i + 1]):
            i += 1
            continue
        if _REDIRECT.match(token):
            duplicated = token.endswith("&") and i + 1 < len(tokens) and tokens[i + 1].isdigit()
            if i + 1 < len(tokens) and not duplicated:
                written.append(tokens[i + 1])
            i += 2
            continue
        if token in ("<", "<<", "<<<"):
            i += 2
            continue
        if set(token) <= set(_PUNCTUATION):
            if commands[-1]:
                commands.append([])
        else:
            commands[-1].append(token)
        i += 1
    return Parsed([c for c in commands if c], written, understood)


def _strip_wrappers(words: list[str]) -> tuple[list[str], set[str]]:
    """`sudo -u x env A=1 nice rm -rf /` -> (`rm -rf /`, {"sudo", "env", "nice"}): the command
    the wrappers run, and which wrappers (assignments before it are not wrappers)."""
    i = 0
    wrappers: set[str] = set()
    while i < len(words):
        word = words[i]
        if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*=.*", word):
            i += 1  # an assignment before the command
            continue
        valued = _WRAPPERS.get(posixpath.basename(word))
        if valued is None:
            break
        wrappers.add(posixpath.basename(word))
        i += 1
        while i < len(words) and words[i].startswith("-") and words[i] != "--":
            i += 2 if words[i] in valued else 1
        if i < len(words) and words[i] == "--":
            i += 1
        if word == "timeout" and i < len(words) and re.fullmatch(r"[\d.]+[smhd]?", words[i]):
            i += 1
    return words[i:], wrappers


def _outside(path: str, workspace: str, cwd_known: bool) -> bool:
    """Whether a path may lie outside the checkout, or be the checkout itself."""
    if not path or any(ch in path for ch in "$~`"):
        return True  # only known at run time
    if not posixpath.isabs(path):
        if not cwd_known:
            return True
        path = posixpath.join(workspace, path)
    root = posixpath.normpath(workspace)
    return not posixpath.normpath(path).startswith(root.rstrip("/") + "/")


def _rm_flags(words: Sequence[str]) -> tuple[bool, bool, list[str]]:
    recursive = forced = False
    targets: list[str] = []
    options_done = False
    for word in words:
        if not options_done and word == "--":
            options_done = True
        elif not options_done and word.startswith("--"):
            recursive |= word == "--recursive"
            forced |= word == "--force"
        elif not options_done and word.startswith("-") and len(word) > 1:
            recursive |= "r" in word or "R" in word
            forced |= "f" in word
        else:
            targets.append(word)
    return recursive, forced, targets


def _git_push_force(words: Sequence[str]) -> bool:
    """`git [-C dir] [-c k=v] push ...` with a forcing option or a `+refspec`."""
    i = 1
    while i < len(words) and words[i].startswith("-"):
        i += 2 if words[i] in ("-C", "-c", "--git-dir", "--work-tree", "--namespace") else 1
    if i >= len(words) or words[i] != "push":
        return False
    for word in words[i + 1 :]:
        if word in ("--force", "--mirror") or word.startswith(
            ("--force-with-lease", "--force-if-includes")
        ):
            return True
        if word.startswith("-") and not word.startswith("--") and "f" in word[1:]:
            return True
        if word.startswith("+") and len(word) > 1:
            return True
    return False


def critical_reasons(words: list[str], workspace: str, cwd_known: bool) -> list[str]:
    """Why one simple command needs a person whatever the mode (empty: it does not)."""
    words, wrappers = _strip_wrappers(words)
    via_xargs = "xargs" in wrappers  # its arguments are only known when it runs
    if not words:
        return []
    name = posixpath.basename(words[0])
    if name == "rm":
        recursive, forced, targets = _rm_flags(words[1:])
        outside = [t for t in targets if _outside(t, workspace, cwd_known)]
        if recursive and forced and (outside or via_xargs or not targets):
            where = outside[0] if outside else "paths only known when it runs"
            return [f"rm -rf on a path outside the checkout or the checkout itself ({where})"]
    elif _MKFS.match(name):
        return [f"{name} makes a file system"]
    elif name == "dd" and any(w.startswith("of=/dev/") and w != "of=/dev/null" for w in words):
        return ["dd writes to a device"]
    elif name == "git" and _git_push_force(words):
        return ["a force push rewrites the remote's history"]
    elif name in ("bash", "sh", "zsh", "dash") and "-c" in words[1:-1]:
        nested = assess(words[words.index("-c") + 1], workspace=workspace)
        return list(nested.critical)
    return []


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


def command_prefix(words: list[str]) -> str:
    """What "always allow" remembers for one simple command: its program and, when the second
    word is a subcommand (not an option or a path), that too (`npm test`, `cargo build`)."""
    stripped = _strip_wrappers(words)[0] or words
    head = [posixpath.basename(stripped[0])]
    if len(stripped) > 1 and re.fullmatch(r"[a-z][a-z0-9_:-]*", stripped[1]):
        head.append(stripped[1])
    return " ".join(head)


def matches_prefix(words: list[str], prefixes: Sequence[str]) -> bool:
    stripped = _strip_wrappers(words)[0]
    if not stripped:
        return False
    normal = [posixpath.basename(stripped[0]), *stripped[1:]]
    return any(p.split() and normal[: len(p.split())] == p.split() for p in prefixes)


def assess(script: str, *, workspace: str, allowed_prefixes: Sequence[str] = ()) -> CommandRisk:
    """The approval layer's reading of `script`, run in `workspace`."""
    parsed = parse(script)
    reasons: list[str] = []
    cwd_known = True
    unlisted: list[list[str]] = []
    wrapped_any = False  # a wrapped command (`sudo make`) is never remembered as a prefix
    for words in parsed.commands:
        plain = _strip_wrappers(words)[0]
        if plain[:1] == ["cd"]:
            cwd_known = cwd_known and len(plain) > 1 and not _outside(plain[1], workspace, True)
            continue
        reasons += critical_reasons(words, workspace, cwd_known)
        # `sudo ls` is not `ls`; `time`, `command` and assignments change nothing that matters.
        wrapped = bool(_strip_wrappers(words)[1] - {"time", "command"})
        wrapped_any |= wrapped
        if (
            plain[:1] == ["eval"]
            or wrapped
            or not (_is_read_only(plain) or matches_prefix(words, allowed_prefixes))
        ):
            unlisted.append(words)
    written = [t for t in parsed.written if t not in _HARMLESS_TARGETS]
    reasons += [f"a redirection writes to the device {t}" for t in written if _DISK.match(t)]
    prefixes = {command_prefix(words) for words in unlisted}
    one = len(prefixes) == 1 and parsed.understood and not written and not wrapped_any
    return CommandRisk(
        critical=tuple(dict.fromkeys(reasons)),
        allowlisted=parsed.understood and not unlisted and not written,
        prefix=prefixes.pop() if one else None,
        understood=parsed.understood,
    )
