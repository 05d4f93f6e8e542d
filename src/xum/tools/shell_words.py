"""What a simple command really runs: wrappers taken off, and the shell text it hands on.

`unwrap` takes off the words that run the rest of the line as a command (`sudo`, `env`, `env -S`,
`timeout 5`, `nice -n 5`, `nohup`, `xargs`, `command`, `exec`, `stdbuf -oL`, `/usr/bin/timeout`,
...). `inner_scripts` finds the text a command hands to a shell (`bash -c`, `sh -c`, `eval`,
`su -c`, `watch`, `trap`, a heredoc or a pipe into `sh`), which the caller reads again as a script;
text that is only known when it runs comes back as `None` with the reason a person must look.
`find_exec_commands` finds the commands `find -exec` runs.
"""

from __future__ import annotations

import posixpath
import re
import shlex
from dataclasses import dataclass, field

from xum.tools.shell_parse import SimpleCommand, Word, printed_text

# Wrappers and their options that take a value (`-n 5`), plus how many plain words they take
# before the command (`timeout DURATION cmd`, `chroot DIR cmd`, `flock FILE cmd`).
_WRAPPERS: dict[str, tuple[frozenset[str], int]] = {
    "sudo": (frozenset({"-u", "-g", "-C", "-h", "-p", "-U", "-r", "-t", "-D", "-T", "-R"}), 0),
    "doas": (frozenset({"-u", "-C"}), 0),
    "nice": (frozenset({"-n", "--adjustment"}), 0),
    "ionice": (frozenset({"-c", "-n", "-p", "-P", "-u", "--class", "--classdata"}), 0),
    "timeout": (frozenset({"-s", "-k", "--signal", "--kill-after"}), 1),
    "stdbuf": (frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}), 0),
    "xargs": (
        frozenset({"-I", "-n", "-P", "-d", "-L", "-s", "-E", "-a", "--arg-file", "--delimiter",
                   "--max-args", "--max-procs", "--max-lines", "--max-chars", "--process-slot-var"}),
        0,
    ),
    "env": (frozenset({"-u", "-C", "--unset", "--chdir"}), 0),
    "nohup": (frozenset(), 0),
    "time": (frozenset({"-f", "-o", "--format", "--output"}), 0),
    "command": (frozenset(), 0),
    "builtin": (frozenset(), 0),
    "exec": (frozenset({"-a"}), 0),
    "setsid": (frozenset(), 0),
    "chrt": (frozenset(), 1),
    "taskset": (frozenset({"-c", "--cpu-list"}), 1),
    "flock": (frozenset({"-w", "-E", "--timeout", "--conflict-exit-code"}), 1),
    "chroot": (frozenset({"--userspec", "--groups"}), 1),
    "unshare": (frozenset({"-S", "-G", "--setuid", "--setgid", "--root", "--wd"}), 0),
    "strace": (frozenset({"-o", "-e", "-p", "-s", "-u", "-E", "-a", "-P", "-I", "-b"}), 0),
    "ltrace": (frozenset({"-o", "-e", "-p", "-s", "-u", "-n", "-a"}), 0),
    "busybox": (frozenset(), 0),
    "toybox": (frozenset(), 0),
    "catchsegv": (frozenset(), 0),
    "fakeroot": (frozenset({"-l", "-s", "-i", "--lib", "--faked"}), 0),
    "dbus-run-session": (frozenset({"--config-file", "--dbus-daemon"}), 0),
    "coproc": (frozenset(), 0),
    "sg": (frozenset(), 1),
    "faketime": (frozenset({"-m", "-f"}), 1),
    "unbuffer": (frozenset(), 0),
    "proxychains": (frozenset({"-f"}), 0),
    "proxychains4": (frozenset({"-f"}), 0),
    "parallel": (frozenset({"-j", "-S", "-a", "--jobs", "--sshlogin", "--arg-file", "-I"}), 0),
}  # fmt: skip
_RESERVED = frozenset(
    {"{", "}", "!", "if", "then", "else", "elif", "fi", "do", "done", "while", "until", "(", ")"}
)
# Options that change the directory the wrapped command runs in.
_CHDIR = frozenset({"-C", "--chdir", "-D"})
SHELLS = frozenset(
    {
        "sh",
        "bash",
        "zsh",
        "dash",
        "ksh",
        "mksh",
        "ash",
        "rbash",
        "yash",
        "pdksh",
        "posh",
        "ksh93",
        "fish",
        "csh",
        "tcsh",
    }
)
_NAME_VALUE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=.*", re.DOTALL)
_DURATION = re.compile(r"[\d.]+[smhd]?")
_STDIN_PATHS = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"})


def program(word: Word) -> str:
    """The program a command-name word names (`/usr/bin/timeout` -> `timeout`)."""
    return posixpath.basename(word.text.rstrip("/")) or word.text


@dataclass(slots=True)
class Unwrapped:
    words: list[Word]  # the command the wrappers run (may be empty)
    wrappers: list[str] = field(default_factory=list)
    assignments: list[Word] = field(default_factory=list)  # `env A=1`, `A=1 cmd`
    from_stdin: bool = False  # xargs: arguments (or all of the command) come from its input
    moved: bool = False  # runs in another directory (`env -C /`, `sudo -D /`, `chroot`)
    shell_wrapped: bool = False  # `sudo -s`/`-i`: the words are handed to a shell as text
    unreadable: str | None = None  # why the wrapped command cannot be read (`env -S "$x"`)


def unwrap(words: list[Word], assignments: list[Word] | None = None) -> Unwrapped:
    out = Unwrapped([], assignments=list(assignments or []))
    placeholders: list[str] = []
    i = 0
    while i < len(words):
        word = words[i]
        if out.wrappers and word.static and _NAME_VALUE.fullmatch(word.text):
            out.assignments.append(word)  # `env A=1 cmd`
            i += 1
            continue
        if word.static and word.text in _RESERVED:
            # The grammar reads `time { rm -rf ~; }` as the command `time { rm -rf ~`.
            i += 1
            continue
        name = program(word) if word.static and not word.pattern else ""
        if name == "coproc" and i + 2 < len(words) and words[i + 2].text == "{":
            i += 2  # `coproc NAME { ...; }`
            continue
        spec = _WRAPPERS.get(name)
        if spec is None:
            break
        valued, positional = spec
        if name == "command" and any(w.text in ("-v", "-V") for w in words[i + 1 : i + 2]):
            return Unwrapped([], [*out.wrappers, name], out.assignments)  # only looks it up
        out.wrappers.append(name)
        i += 1
        while i < len(words) and words[i].text.startswith("-") and words[i].text != "--":
            option = words[i]
            text = option.text
            split = _split_string(text, words[i + 1] if i + 1 < len(words) else None, name)
            if split is not None:
                taken, inserted = split
                if inserted is None:
                    out.unreadable = "env -S with text only known when it runs"
                    return out
                # The split words are read as if written here (they may hold more options).
                words = [*words[:i], *inserted, *words[i + taken :]]
                continue
            if name in ("xargs", "parallel"):
                placeholder = _placeholder_option(
                    text, words[i + 1] if i + 1 < len(words) else None
                )
                placeholder = placeholder or ("{}" if name == "parallel" else None)
                if placeholder:
                    placeholders.append(placeholder)
            out.moved |= text.split("=", 1)[0] in _CHDIR and name in ("env", "sudo")
            out.shell_wrapped |= name == "sudo" and (
                text in ("--shell", "--login")
                or re.fullmatch(r"-[A-Za-z]*[si][A-Za-z]*", text) is not None
            )
            i += 2 if text in valued else 1
        if i < len(words) and words[i].text == "--":
            i += 1
        for _ in range(positional):
            if i < len(words) and (name != "timeout" or _DURATION.fullmatch(words[i].text)):
                i += 1
        if name in ("xargs", "parallel"):
            out.from_stdin = True
            placeholders.append("{}" if name == "parallel" else "")
        out.moved |= name == "chroot"
    # What xargs puts in for its replace-string is only known when it runs.
    marks = [p for p in placeholders if p]
    out.words = [
        Word(w.text, static=False, pattern=w.pattern) if any(m in w.text for m in marks) else w
        for w in words[i:]
    ]
    return out


def _placeholder_option(text: str, following: Word | None) -> str | None:
    """The replace-string of `xargs -I R`, `-IR`, `--replace=R`, `-i` (`{}`) or `-iR`."""
    if text == "-I":
        return following.text if following is not None else None
    if text.startswith("-I"):
        return text[2:]
    if text in ("-i", "--replace"):
        return "{}"
    if text.startswith("--replace="):
        return text.split("=", 1)[1] or "{}"
    if text.startswith("-i"):
        return text[2:]
    return None


def _split_string(
    text: str, following: Word | None, name: str
) -> tuple[int, list[Word] | None] | None:
    """`env -S 'rm -rf ~'`: (how many words the option took, the words its string splits into,
    or None when the string is only known at run time). None when this is not such an option."""
    if name != "env":
        return None
    if text in ("-S", "--split-string"):
        if following is None:
            return 1, []
        value, taken = following, 2
    elif text.startswith("--split-string="):
        value, taken = Word(text.split("=", 1)[1]), 1
    elif text.startswith("-S"):
        value, taken = Word(text[2:]), 1
    else:
        return None
    if not value.static:
        return taken, None
    try:
        return taken, [Word(part) for part in shlex.split(value.text)]
    except ValueError:
        return taken, None


@dataclass(frozen=True, slots=True)
class Inner:
    text: str | None  # shell text the command runs; None: only known when it runs
    why: str = ""  # why a person must look, when text is None
    guess: bool = False  # text that may be a command (a string in `python -c` code): its
    # critical commands count, but it does not change what the allowlist sees


def inner_scripts(unwrapped: Unwrapped, command: SimpleCommand) -> list[Inner]:
    """The shell text this command hands on to be run."""
    words = unwrapped.words
    if not words or not words[0].static:
        return []
    name = program(words[0])
    args = words[1:]
    if name in SHELLS:
        return _shell(args, unwrapped, command)
    if name == "eval":
        args = args[1:] if args and args[0].text == "--" else args
        return [_joined(args, "eval of text only known when it runs")]
    if unwrapped.shell_wrapped:  # `sudo -s CMD`, `sudo -i CMD`: a shell runs CMD as text
        return [_joined(words, "sudo -s with a command only known when it runs")]
    if name in ("source", "."):
        if args and args[0].text.startswith("<("):
            return [Inner(None, f"{name} runs the output of a process substitution")]
        if args and args[0].text in _STDIN_PATHS:
            return [_piped(command, name)]
        return []
    if name in ("su", "runuser", "sg", "script", "flock"):
        for i, word in enumerate(args):
            cluster = re.fullmatch(r"-[A-Za-z]*c", word.text) is not None
            if (cluster or word.text == "--command") and i + 1 < len(args):
                return [
                    _joined(args[i + 1 : i + 2], f"{name} -c with text only known when it runs")
                ]
            if word.text.startswith("--command="):
                return [_joined([Word(word.text.split("=", 1)[1], word.static)], name)]
        return []
    if name == "watch":
        rest = _skip_options(args, frozenset({"-n", "-d", "--interval", "--differences"}))
        return [_joined(rest, "watch with a command only known when it runs")] if rest else []
    if name == "trap" and args and not args[0].text.startswith("-"):
        return [_joined(args[:1], "trap with an action only known when it runs")]
    return []


def shell_options(args: list[Word]) -> tuple[bool, bool, list[Word]]:
    """A shell's arguments: (runs a string `-c`, reads its script from stdin, what follows the
    options: the string or script file, then its arguments)."""
    run_string = reads_stdin = False
    i = 0
    while i < len(args):
        text = args[i].text
        if text == "--" or text == "-":
            reads_stdin |= text == "-"
            i += 1
            break
        if text.startswith("--"):
            i += 2 if text in ("--rcfile", "--init-file") else 1
            continue
        if text.startswith(("-", "+")) and len(text) > 1:
            run_string |= text.startswith("-") and "c" in text
            reads_stdin |= text.startswith("-") and "s" in text
            i += 2 if text in ("-o", "+o", "-O", "+O") else 1
            continue
        break
    return run_string, reads_stdin, args[i:]


def _shell(args: list[Word], unwrapped: Unwrapped, command: SimpleCommand) -> list[Inner]:
    run_string, reads_stdin, rest = shell_options(args)
    if run_string:
        if rest:
            if unwrapped.from_stdin and _mentions_placeholder(rest[0]):
                return [Inner(None, "xargs hands its input to a shell to run")]
            return [_joined(rest[:1], "a shell runs text only known when it runs")]
        if unwrapped.from_stdin:
            return [Inner(None, "xargs hands its input to a shell to run")]
        return []
    if rest and not reads_stdin and rest[0].text not in _STDIN_PATHS:
        if rest[0].text.startswith(("<(", "$(", "`")) or (
            not rest[0].static and "(" in rest[0].text
        ):
            return [Inner(None, "a shell runs the output of a substitution")]
        return []  # a script file: read when it runs, like any program
    return [_piped(command, "sh")]


def _piped(command: SimpleCommand, name: str) -> Inner:
    """The text a shell reads from its standard input."""
    if command.stdin_text is not None:
        return Inner(command.stdin_text)
    if command.stdin_file is not None:
        if not command.stdin_file.static:
            return Inner(None, f"{name} reads its script from a substitution or a variable")
        return Inner("")  # a file: read when it runs, like `bash FILE` (see shell_handoff)
    if not command.upstream:
        return Inner("")  # the tool's own input: nothing
    printed = _printed(command.upstream)
    if printed is not None:
        return Inner(printed)
    return Inner(None, "a shell runs what a pipe feeds it (output only known when it runs)")


def _printed(upstream: list[SimpleCommand]) -> str | None:
    """What a pipeline of `echo`/`printf` with fixed text (or `cat` of a heredoc) prints."""
    parts = [printed_text(stage) for stage in upstream]
    if any(part is None for part in parts):
        return None
    return "".join(part or "" for part in parts)


def _joined(words: list[Word], why: str) -> Inner:
    if not all(w.static for w in words):
        return Inner(None, why)
    return Inner(" ".join(w.text for w in words))


def _mentions_placeholder(word: Word) -> bool:
    return "{}" in word.text or not word.static


def _skip_options(words: list[Word], valued: frozenset[str]) -> list[Word]:
    i = 0
    while i < len(words) and words[i].text.startswith("-"):
        if words[i].text == "--":
            return words[i + 1 :]
        i += 2 if words[i].text in valued else 1
    return words[i:]


_FIND_EXEC = frozenset({"-exec", "-execdir", "-ok", "-okdir"})


def find_roots(args: list[Word]) -> list[Word]:
    """The paths `find` starts from (`.` when none is given)."""
    roots: list[Word] = []
    for word in args:
        if word.text.startswith(("-", "(", "!")) or word.text in ("(", "!", ","):
            break
        roots.append(word)
    return roots or [Word(".")]


def find_exec_commands(args: list[Word]) -> list[list[Word]]:
    """The commands `find ... -exec CMD {} ;` runs, with `{}` read as a path under each root."""
    roots = find_roots(args)
    found: list[list[Word]] = []
    i = 0
    while i < len(args):
        if args[i].text in _FIND_EXEC:
            j = i + 1
            while j < len(args) and args[j].text not in (";", "+"):
                j += 1
            body = args[i + 1 : j]
            for root in roots:
                found.append([_placeholder(w, root) for w in body])
            i = j
        i += 1
    return found


def _placeholder(word: Word, root: Word) -> Word:
    if "{}" not in word.text:
        return word
    # A found path lies under its root: `find . -exec rm -rf {} +` removes things in `.`.
    inside = posixpath.join(root.text, "_found_")
    return Word(word.text.replace("{}", inside), word.static and root.static)
