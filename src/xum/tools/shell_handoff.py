"""Shell text a command hands on less visibly than `bash -c`: the remote command of `ssh`, the
strings in `python -c`/`perl -e` code, variables that git and other tools run as a command
(`GIT_SSH_COMMAND`, `EDITOR`, ...), `git -c core.sshCommand=...`, and files the same script
writes and then runs (`echo ... > x.sh; bash x.sh`, `curl -o x.sh ...; ./x.sh`).
"""

from __future__ import annotations

import posixpath
import re
from collections.abc import Mapping

from xum.tools.shell_parse import SimpleCommand, Word, printed_text
from xum.tools.shell_words import SHELLS, Inner, Unwrapped, program, shell_options

# Variables whose value a tool runs through a shell.
_SHELL_VARS = frozenset(
    {"GIT_SSH_COMMAND", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "GIT_EXTERNAL_DIFF",
     "GIT_ASKPASS", "SSH_ASKPASS", "PAGER", "EDITOR", "VISUAL", "MANPAGER", "BROWSER"}
)  # fmt: skip
# git settings whose value git runs through a shell.
_GIT_SHELL_KEYS = frozenset(
    {"core.sshcommand", "core.pager", "core.editor", "sequence.editor", "diff.external",
     "core.askpass", "credential.helper", "gpg.program"}
)  # fmt: skip
# Options of interpreters that take code on the command line.
_CODE_OPTIONS: dict[str, frozenset[str]] = {
    "python": frozenset({"-c"}),
    "perl": frozenset({"-e", "-E"}),
    "ruby": frozenset({"-e"}),
    "node": frozenset({"-e", "--eval", "-p", "--print"}),
    "php": frozenset({"-r"}),
    "lua": frozenset({"-e"}),
    "awk": frozenset(),  # the program is the first word that is not an option
}
_SSH_VALUED = frozenset(
    [
        "-b",
        "-c",
        "-D",
        "-E",
        "-e",
        "-F",
        "-I",
        "-i",
        "-J",
        "-L",
        "-l",
        "-m",
        "-O",
        "-o",
        "-p",
        "-Q",
        "-R",
        "-S",
        "-W",
        "-w",
        "-B",
    ]
)
_LITERAL = re.compile(r"'((?:[^'\\]|\\.)*)'|\"((?:[^\"\\]|\\.)*)\"", re.DOTALL)


def handoffs(unwrapped: Unwrapped, command: SimpleCommand) -> list[Inner]:
    found = [_variable(word) for word in unwrapped.assignments]
    out = [inner for inner in found if inner is not None]
    words = unwrapped.words
    if not words or not words[0].static:
        return out
    name = program(words[0])
    family = re.sub(r"[\d.]+$", "", name)  # python3.12 -> python
    family = "awk" if family in ("gawk", "mawk", "nawk", "busybox-awk") else family
    if name == "ssh":
        out += _ssh(words[1:])
    elif family in _CODE_OPTIONS:
        out += _code(words[1:], _CODE_OPTIONS[family])
    elif name == "git":
        out += _git_settings(words[1:])
    return out


def _variable(word: Word) -> Inner | None:
    name, _, value = word.text.partition("=")
    if name not in _SHELL_VARS or not value or not word.static:
        return None
    return Inner(value, guess=True)


def _ssh(args: list[Word]) -> list[Inner]:
    """`ssh HOST CMD...`: the remote shell runs the rest (on this machine for `localhost`)."""
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        i += 2 if args[i].text in _SSH_VALUED else 1
    rest = args[i + 1 :]
    if not rest:
        return []
    if not all(w.static for w in rest):
        return [Inner(None, "ssh runs a remote command only known when it runs")]
    return [Inner(" ".join(w.text for w in rest))]


def _code(args: list[Word], options: frozenset[str]) -> list[Inner]:
    """The string literals in `python -c CODE` and the like, read as possible commands
    (`os.system('rm -rf ~')`)."""
    if not options:  # awk: `system("...")` in the program
        program_words: list[Word] = []
        skip = False
        for word in args:
            if skip:
                skip = False
            elif word.text in ("-v", "-F", "-f"):
                skip = True
            elif not word.text.startswith("-"):
                program_words = [word]
                break
        args, options = [Word("-"), *program_words], frozenset({"-"})
    for i, word in enumerate(args):
        if word.text in options and i + 1 < len(args):
            code = args[i + 1].text
            texts = [
                m.group(1) if m.group(1) is not None else m.group(2)
                for m in _LITERAL.finditer(code)
            ]
            return [Inner(t, guess=True) for t in texts if t.strip()]
    return []


def _git_settings(args: list[Word]) -> list[Inner]:
    out: list[Inner] = []
    for i, word in enumerate(args):
        if word.text != "-c" or i + 1 >= len(args):
            continue
        key, _, value = args[i + 1].text.partition("=")
        if key.strip().lower() in _GIT_SHELL_KEYS and value and args[i + 1].static:
            out.append(Inner(value, guess=True))
    return out


def file_runs(
    unwrapped: Unwrapped, files: Mapping[str, str | None], stdin_file: Word | None = None
) -> list[Inner]:
    """A file this script writes and then runs: as a command (`./x.sh`), with a shell
    (`bash x.sh`) or with `source`/`.`. Its text is read like the script's own."""
    words = unwrapped.words
    if not words or not files:
        return []
    name = program(words[0])
    target: Word | None = None
    if "/" in words[0].text:
        target = words[0]
    elif name in SHELLS:
        run_string, reads_stdin, rest = shell_options(words[1:])
        target = rest[0] if rest and not run_string and not reads_stdin else None
        if not run_string and target is None:
            target = stdin_file  # `sh < x.sh`
    elif name in ("source", ".") and len(words) > 1:
        target = words[1]
    if target is None:
        return []
    key = posixpath.normpath(target.text)
    if key not in files:
        return []
    text = files[key]
    if text is None:
        return [Inner(None, f"runs {target.text}, which this script writes with unknown content")]
    return [Inner(text)]


def files_written(unwrapped: Unwrapped, command: SimpleCommand) -> dict[str, str | None]:
    """Files a command writes with content this reading can tell (`echo x | tee f`) or cannot
    (`curl -o f URL`)."""
    words = unwrapped.words
    if not words or not words[0].static:
        return {}
    name = program(words[0])
    out: dict[str, str | None] = {}
    args = words[1:]
    if name == "tee":
        piped = [printed_text(stage) for stage in command.upstream]
        content = None if not piped or None in piped else "".join(p or "" for p in piped)
        for word in args:
            if not word.text.startswith("-") and word.static:
                out[posixpath.normpath(word.text)] = content
    elif name in ("curl", "wget"):
        for i, word in enumerate(args):
            text = word.text
            if text in ("-o", "--output", "--output-document") or (name == "wget" and text == "-O"):
                if i + 1 < len(args):
                    out[posixpath.normpath(args[i + 1].text)] = None
            elif text.startswith(("--output=", "--output-document=")):
                out[posixpath.normpath(text.split("=", 1)[1])] = None
        remote_name = name == "wget" or any(w.text in ("-O", "--remote-name") for w in args)
        for word in args:
            if remote_name and "://" in word.text:  # saved under the URL's last part
                path = word.text.split("://", 1)[1].split("?", 1)[0]
                out[posixpath.basename(path) or "index.html"] = None
    return out
