"""The git commands that need a person: force pushes, and aliases or settings that make a
harmless-looking git command run something else.

`git -c alias.p='push -f' p origin main` is a force push that no word of it spells; an alias or a
setting that runs a program (`core.fsmonitor`, `core.hooksPath`) set on the
command line, with `git config`, or through `GIT_CONFIG_*` variables cannot be judged from the
command that uses it, so setting one needs a person.
"""

from __future__ import annotations

import re

from xum.tools.shell_parse import Word

# Global options of `git` (before the subcommand) that take a separate value.
_VALUED = frozenset(
    {"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--config-env", "--super-prefix",
     "--list-cmds", "--exec-path"}
)  # fmt: skip
# Settings that run a program or rewrite what a command does.
# (Settings whose value is shell text, like core.sshCommand, are read as a script instead:
# xum.tools.shell_handoff.)
_RUNS_PROGRAM = frozenset({"core.fsmonitor", "core.hookspath"})
_FORCING = ("--force", "--force-with-lease", "--force-if-includes", "--mirror")
FORCE = "a force push rewrites the remote's history"
_CONFIG_VAR = re.compile(r"^GIT_CONFIG_(PARAMETERS|KEY_\d+|VALUE_\d+)=(.*)$", re.DOTALL)


def _setting_reason(key: str, value: str, *, static: bool, how: str) -> str | None:
    key = key.strip().lower()
    if not static:
        return f"{how} sets git options only known when it runs"
    if key.startswith("alias."):
        return f"{how} defines a git alias, which can run any command ({key})"
    if key in _RUNS_PROGRAM:
        return f"{how} sets {key}, which runs a program"
    if re.fullmatch(r"remote\..+\.(push|mirror)", key) and (
        value.startswith("+") or value.lower() in ("true", "yes", "on", "1")
    ):
        return f"{how} makes pushes force or mirror ({key})"
    return None


def git_reasons(args: list[Word]) -> list[str]:
    """Why `git ARGS` needs a person (empty: it does not)."""
    reasons: list[str] = []
    i = 0
    while i < len(args) and args[i].text.startswith("-"):
        word = args[i]
        text = word.text
        value: Word | None = None
        if text in _VALUED:
            value = args[i + 1] if i + 1 < len(args) else None
            i += 2
        else:
            if "=" in text and text.startswith("--config-env"):
                value = Word(text.split("=", 1)[1], word.static)
                text = "--config-env"
            elif text.startswith("-c") and len(text) > 2:
                value, text = Word(text[2:], word.static), "-c"
            i += 1
        if value is not None and text in ("-c", "--config-env"):
            key, _, setting = value.text.partition("=")
            known = value.static or not any(ch in key for ch in "$`")
            why = _setting_reason(key, setting, static=known, how=f"git {text}")
            if why:
                reasons.append(why)
    if i >= len(args):
        return reasons
    sub = args[i]
    rest = args[i + 1 :]
    if not sub.static:
        return [*reasons, f"the git subcommand is only known when it runs ({sub.text})"]
    if sub.text == "push":
        reasons += _push(rest)
    elif sub.text == "config":
        reasons += _config(rest)
    return reasons


def _push(words: list[Word]) -> list[str]:
    """`git push` with a forcing option or a `+refspec`, or arguments only known at run time."""
    skip = False
    for word in words:
        text = word.text
        if skip:
            skip = False
            continue
        if text in ("-o", "--push-option", "--repo", "--receive-pack", "--exec"):
            skip = True
            continue
        # git takes a long option by any unambiguous prefix (`--forc`, `--force-w`, `--mirr`).
        head = text.split("=", 1)[0]
        if head.startswith("--") and len(head) >= 4 and any(o.startswith(head) for o in _FORCING):
            return [FORCE]
        if not word.static and not text.startswith("$(git "):
            # `git push $FLAGS`: may be `-f` or a `+refspec` when it runs.
            return [f"git push with an argument only known when it runs ({text})"]
        if text.startswith("-") and not text.startswith("--") and "f" in text[1:]:
            return [FORCE]
        if text.startswith("+") and len(text) > 1:
            return [FORCE]
    return []


def _config(words: list[Word]) -> list[str]:
    """`git config [scope] [set|--add] KEY VALUE`: the setting it writes, if one needs a person."""
    plain: list[Word] = []
    skip = False
    for word in words:
        if skip:
            skip = False
        elif word.text in ("-f", "--file", "--blob", "--type", "--default", "--comment"):
            skip = True
        elif not word.text.startswith("-"):
            plain.append(word)
    if plain and plain[0].text in ("set", "add"):
        plain = plain[1:]
    if len(plain) < 2 or plain[0].text in ("get", "list", "unset", "get-regexp", "edit"):
        return []
    key, value = plain[0], plain[1]
    why = _setting_reason(key.text, value.text, static=key.static, how="git config")
    return [why] if why else []


def config_env_reasons(words: list[Word]) -> list[str]:
    """`GIT_CONFIG_KEY_0=alias.p` (or `GIT_CONFIG_PARAMETERS`) as an assignment or an `export`:
    git options set through the environment."""
    for word in words:
        found = _CONFIG_VAR.match(word.text)
        if found is None:
            continue
        value = found.group(2)
        if (
            not word.static
            or "alias." in value.lower()
            or any(k in value.lower() for k in _RUNS_PROGRAM)
        ):
            return ["GIT_CONFIG_* variables define git aliases or settings that run programs"]
    return []
