"""The rules for critical commands: what needs a person in every permission mode.

Each rule reads one simple command after its wrappers are taken off (`shell_words.unwrap`):
recursive removal outside the checkout, making file systems and writing to disk devices,
recursive permission changes on broad paths, fork bombs, force pushes (`git_risk`), and what
cannot be read before it runs (a command name from a variable or a substitution, a fetched or
decoded payload fed to an interpreter). A word only known at run time counts against the
command, never for it.
"""

from __future__ import annotations

import posixpath
import re

from xum.tools.git_risk import config_env_reasons, git_reasons
from xum.tools.shell_parse import SimpleCommand, Word
from xum.tools.shell_words import SHELLS, Unwrapped, find_roots, program

_MKFS = re.compile(r"^(mkfs(\.\w+)?|mke2fs|mkswap|wipefs|mkdosfs|mkntfs|mkfs_\w+)$")
_PARTITIONERS = frozenset({"fdisk", "sfdisk", "cfdisk", "parted", "sgdisk", "gdisk", "blkdiscard"})
DISK = re.compile(
    r"^(/dev/(sd|hd|vd|xvd|nvme|mmcblk|disk|md|dm-|loop|sr|mapper/|root|mem|kmem|port)"
    r"|/proc/sysrq-trigger)"
)
HARMLESS_TARGETS = frozenset(
    {"/dev/null", "/dev/stdout", "/dev/stderr", "/dev/tty", "/dev/zero", "1", "2", "-"}
)
# Interpreters that run code they read from standard input, and what fetches or decodes it.
_INTERPRETERS = frozenset(
    {"python", "python2", "python3", "perl", "ruby", "node", "php", "lua", "tclsh", "osascript"}
)
_PAYLOAD_SOURCES = frozenset(
    {"curl", "wget", "base64", "base32", "xxd", "openssl", "gunzip", "zcat", "gzip", "nc",
     "ncat", "socat", "fetch", "aria2c", "http", "xh", "rev", "uudecode", "bzcat", "xzcat"}
)  # fmt: skip
_POWER = frozenset({"shutdown", "reboot", "poweroff", "halt", "kexec"})
_CHANGES_MODE = frozenset({"chmod", "chown", "chgrp", "setfacl"})
# Top-level directories whose recursive removal or permission change breaks the machine.
_SYSTEM_DIRS = frozenset(
    {"/", "/bin", "/boot", "/dev", "/etc", "/home", "/lib", "/lib64", "/opt", "/proc", "/root",
     "/sbin", "/srv", "/sys", "/usr", "/var", "/Users", "/System", "/Library"}
)  # fmt: skip


def outside(word: Word, workspace: str, cwd_known: bool) -> bool:
    """Whether a path may lie outside the checkout, or be the checkout itself."""
    path = word.text
    if not word.static or not path or any(ch in path for ch in "$~`"):
        return True  # only known at run time
    if not posixpath.isabs(path):
        if not cwd_known:
            return True
        path = posixpath.join(workspace, path)
    root = posixpath.normpath(workspace)
    return not posixpath.normpath(path).startswith(root.rstrip("/") + "/")


def broad(word: Word) -> bool:
    """A home directory, the root, a top-level system directory, a glob over one of them, or a
    path only known at run time (`"$DIR"` may be any of those)."""
    text = word.text
    if not word.static:  # `"$DIR"` may be `/`; `build/$name` stays under build/
        return text.startswith(("$", "`", "~", "/", "{")) or ".." in text
    if text.startswith("~"):
        return "/" not in text.strip("/*")  # `~`, `~/`, `~/*`, `~user`; not `~/project`
    if not posixpath.isabs(text):
        return False
    normal = posixpath.normpath(text.rstrip("*") or "/")
    return normal.strip("/") == "" or normal in _SYSTEM_DIRS


def critical_reasons(
    command: SimpleCommand, unwrapped: Unwrapped, workspace: str, cwd_known: bool
) -> list[str]:
    """Why one simple command needs a person whatever the mode (empty: it does not)."""
    reasons = config_env_reasons([*unwrapped.assignments, *command.words])
    if unwrapped.unreadable:
        return [*reasons, unwrapped.unreadable]
    words = unwrapped.words
    if not words:
        return reasons
    head = words[0]
    if not head.static or head.pattern:
        return [*reasons, f"the command name is only known when it runs ({head.text})"]
    if unwrapped.from_stdin and "{}" in head.text:
        return [*reasons, "xargs takes the command name from its input"]
    reasons += words_reasons(words, workspace, cwd_known, from_stdin=unwrapped.from_stdin)
    name = program(head)
    if command.function is not None and name == command.function and command.forks:
        reasons.append("a function that starts copies of itself (a fork bomb)")
    if name in _INTERPRETERS and command.upstream and command.stdin_text is None:
        sources = {program(s.words[0]) for s in command.upstream if s.words}
        if sources & _PAYLOAD_SOURCES or any(
            s.words and not s.words[0].static for s in command.upstream
        ):
            reasons.append(f"{name} runs code fetched or decoded in a pipe")
    return reasons


def words_reasons(
    words: list[Word], workspace: str, cwd_known: bool, *, from_stdin: bool = False
) -> list[str]:
    """The rules that read only the words of the unwrapped command."""
    name = program(words[0])
    args = words[1:]
    if name == "rm":
        return _rm(args, workspace, cwd_known, from_stdin)
    if name == "find":
        return _find(args, workspace, cwd_known)
    if _MKFS.match(name):
        return [f"{name} makes a file system"]
    if name in _PARTITIONERS and any(DISK.match(w.text) for w in args):
        return [f"{name} changes a disk's partitions"]
    if name == "dd":
        for word in args:
            if word.text.startswith("of="):
                target = word.text[3:]
                if (not word.static and "/dev/" in target) or DISK.match(target):
                    return ["dd writes to a device"]
        return []
    if name in ("tee", "cp", "shred", "truncate", "install", "mv"):
        device = next((w.text for w in args if DISK.match(w.text)), None)
        if device:
            return [f"{name} writes to the device {device}"]
    if name in _CHANGES_MODE:
        recursive = any(w.text == "--recursive" or re.fullmatch(r"-[a-zA-Z]*R[a-zA-Z]*", w.text)
                        for w in args)  # fmt: skip
        targets = [w for w in args if not w.text.startswith("-")][1:]
        if recursive and any(broad(w) for w in targets):
            return [f"{name} -R on a broad path changes permissions across the system"]
        return []
    if name == "git":
        return git_reasons(args)
    if name in _POWER or (name == "systemctl" and any(w.text in _POWER for w in args)):
        return [f"{name} stops or restarts the machine"]
    if name in ("init", "telinit") and any(w.text in ("0", "6") for w in args):
        return [f"{name} stops or restarts the machine"]
    if name == "kill" and len(args) >= 2 and args[-1].text == "-1":
        return ["kill -1 signals every process it may"]
    if name == "mv":
        sources = [w for w in args if not w.text.startswith("-")][:-1]
        wide = next((w for w in sources if broad(w)), None)
        return [f"mv moves a broad path away ({wide.text})"] if wide else []
    if name == "rsync" and any(w.text.startswith(("--delete", "--remove-source")) for w in args):
        paths = [w for w in args if not w.text.startswith("-")]
        if paths and broad(paths[-1]):
            return [f"rsync --delete into a broad path ({paths[-1].text})"]
        return []
    if name == "tee" and any(git_config_file(w) for w in args):
        return ["writes a git config file, where an alias can hide any command"]
    return []


def git_config_file(word: Word) -> bool:
    """`~/.gitconfig`, `.git/config`, `~/.config/git/config`: where git aliases live."""
    text = posixpath.normpath(word.text) if word.text else ""
    return (
        text.endswith(".gitconfig")
        or text.endswith(("/.git/config", "/git/config"))
        or (text == ".git/config")
    )


def _rm(args: list[Word], workspace: str, cwd_known: bool, from_stdin: bool) -> list[str]:
    recursive = forced = no_preserve = False
    targets: list[Word] = []
    options_done = False
    for word in args:
        text = word.text
        if not options_done and text == "--":
            options_done = True
        elif not options_done and text.startswith("--"):
            recursive |= text == "--recursive"
            forced |= text == "--force"
            no_preserve |= text == "--no-preserve-root"
        elif not options_done and text.startswith("-") and len(text) > 1:
            recursive |= "r" in text or "R" in text
            forced |= "f" in text
        else:
            targets.append(word)
    if no_preserve:
        return ["rm --no-preserve-root"]
    if not recursive:
        return []
    far = [t for t in targets if outside(t, workspace, cwd_known)]
    if forced and (far or from_stdin or not targets):
        where = far[0].text if far else "paths only known when it runs"
        return [f"rm -rf on a path outside the checkout or the checkout itself ({where})"]
    wide = next((t for t in targets if broad(t)), None)
    if wide is not None:
        return [f"rm -r on a broad path ({wide.text})"]
    return []


def _find(args: list[Word], workspace: str, cwd_known: bool) -> list[str]:
    if not any(w.text == "-delete" for w in args):
        return []
    # What it deletes lies under its roots (`find . -delete` empties `.`, not the parent).
    under = [Word(posixpath.join(r.text, "_found_"), r.static) for r in find_roots(args)]
    far = [r for r in under if outside(r, workspace, cwd_known)]
    if far:
        return [f"find -delete on a path outside the checkout ({posixpath.dirname(far[0].text)})"]
    return []


def is_shell(word: Word) -> bool:
    return word.static and program(word) in SHELLS


def unparsed_reasons(script: str) -> list[str]:
    """A script the grammar could not read whole: anything that looks risky needs a person
    (bash runs the lines before a syntax error, and may read the rest differently)."""
    found = _RISKY.search(script)
    if found is None:
        return []
    return [f"xum could not parse this script, and it mentions `{found.group(0).strip()}`"]


_RISKY = re.compile(
    r"(\brm\b|\bdd\b|\bmkfs|\bwipefs|\bmkswap|\bshred\b|\beval\b|\bexec\b|\bsource\b|(^|[;&|\s])\.\s"
    r"|\b(ba|z|da|k)?sh\b|\bxargs\b|\bfind\b|\bchmod\b|\bchown\b|\bpush\b|\balias\b|\bconfig\b"
    r"|\bbase64\b|\bcurl\b|\bwget\b|/dev/|\$|`|\{|\\|\bsudo\b|\benv\b|\btrap\b|:\s*\(\))"
)
