"""Agent skills: `<root>/<name>/SKILL.md` playbooks the model loads when a task calls for one.

Roots, highest precedence first:

1. for each directory from the working directory up to the checkout root (never above it):
   `<dir>/.xum/skills`, then `<dir>/.agents/skills`, then (Claude compatibility on)
   `<dir>/.claude/skills` (nearer directories win);
2. `$XUM_ROOT/skills` (the user's xum skills);
3. `~/.agents/skills` (skills shared with other agent tools);
4. `~/.claude/skills` (Claude compatibility on);
5. xum's built-in skills.

The Claude Code roots are read only when config.json has `experiments.claudeCompatibility`
(`xum.context.experiments`); the switch is read on every load, so turning it on or off takes
effect at the next request. They are read-only: the skill tools never write or delete there.

A skill is a directory whose name matches `^[a-z0-9]+(?:-[a-z0-9]+)*$` (1-64 characters) holding
a `SKILL.md` of at most 1 MB that starts with YAML frontmatter naming it (`name` equal to the
directory) and describing it (`description`). A skill that breaks these rules is reported and
skipped; it never hides the other skills, and a broken skill does not shadow a valid one of the
same name further down the list.

Project roots are read through the workspace runtime (remote for SSH); a project skill whose
SKILL.md is a symlink leaving the checkout is refused.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from xum.context import builtin, frontmatter
from xum.context.files import (
    MISSING,
    FileView,
    LocalFiles,
    Sig,
    decode,
    dir_sig,
    find_file,
    racy,
    trusted,
)
from xum.context.markup import escape_untrusted, one_line
from xum.core.pathtext import is_within

SKILL_NAME_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
MAX_NAME_CHARS = 64
MAX_SKILL_BYTES = 1024 * 1024
SKILL_FILE = "SKILL.md"
# How much of a skill body reaches the model in one piece (slash invocation, agent_skill_read);
# beyond it a marker says how to page through the rest with agent_skill_read_file.
MAX_BODY_CHARS = 64 * 1024
MAX_INDEX_DESCRIPTION = 1024
MAX_INDEX_WHEN = 512

SCOPES = ("project", "global", "universal", "builtin")
# Claude Code's skill directories (Claude compatibility): the lowest precedence at their level.
CLAUDE_ROOT = ".claude/skills"


def valid_skill_name(name: str) -> bool:
    return 0 < len(name) <= MAX_NAME_CHARS and SKILL_NAME_RE.match(name) is not None


@dataclass(frozen=True, slots=True)
class Skill:
    """One skill: its SKILL.md frontmatter and where it lives."""

    name: str
    description: str
    scope: str  # "project", "global", "universal" or "builtin"
    root_label: str  # e.g. ".xum/skills", "pkg/.agents/skills", "~/.agents/skills"
    directory: str  # the skill's directory, in its view's namespace
    view: FileView
    fence: str | None  # symlinks inside the skill must stay within this tree
    body: str  # SKILL.md without its frontmatter
    advertised: bool = True
    user_invocable: bool = True
    argument_hint: str = ""
    when_to_use: str = ""
    body_line: int = 1  # the line of SKILL.md where `body` starts (after the frontmatter)
    # The skill tools may change it: a project `.xum/skills` or the global `$XUM_ROOT/skills`
    # skill (never `.agents`, `.claude` or a built-in one).
    writable: bool = False


@dataclass(frozen=True, slots=True)
class SkillProblem:
    """A skill that could not be loaded, and why."""

    where: str
    message: str

    def __str__(self) -> str:
        return f"{self.where}: {self.message}"


@dataclass
class SkillCatalog:
    """The skills a workspace sees, and the problems found on the way."""

    skills: dict[str, Skill] = field(default_factory=dict)  # by name, the winners only
    problems: list[SkillProblem] = field(default_factory=list)

    def get(self, name: str) -> Skill | None:
        return self.skills.get(name)

    def advertised(self) -> list[Skill]:
        return sorted((s for s in self.skills.values() if s.advertised), key=lambda s: s.name)

    def user_invocable(self) -> list[Skill]:
        return sorted((s for s in self.skills.values() if s.user_invocable), key=lambda s: s.name)

    def index_block(self) -> str:
        """The `<agent-skills>` block of the system prompt; empty when no skill is advertised."""
        entries = self.advertised()
        if not entries:
            return ""
        lines = [
            "<agent-skills>",
            "Skills are playbooks kept as files. When a task matches one of these, load it with "
            "agent_skill_read before you start and follow it; files it mentions can be read with "
            "agent_skill_read_file.",
            "",
        ]
        for skill in entries:
            line = f"- {skill.name}: {escape_untrusted(one_line(skill.description, MAX_INDEX_DESCRIPTION))}"
            if skill.when_to_use:
                when = escape_untrusted(one_line(skill.when_to_use, MAX_INDEX_WHEN))
                line += f" When to use: {when}"
            lines.append(line)
        lines.append("</agent-skills>")
        return "\n".join(lines)


def bounded_body(skill: Skill) -> str:
    body = skill.body.strip("\n")
    if len(body) <= MAX_BODY_CHARS:
        return body
    head = body[:MAX_BODY_CHARS]
    cut = head.rfind("\n")
    head = head[:cut] if cut > 0 else head
    shown = head.count("\n") + 1
    return (
        f"{head}\n[xum: the skill continues beyond this point; read the rest with "
        f"agent_skill_read_file(name={skill.name!r}, filePath='SKILL.md', "
        f"offset={skill.body_line + shown})]"
    )


# Arguments -------------------------------------------------------------------------------------

_PLACEHOLDER = re.compile(r"\$(ARGUMENTS|[1-9])")


def substitute_arguments(body: str, arguments: str) -> tuple[str, bool]:
    """Replace `$ARGUMENTS` (the whole argument text) and `$1`..`$9` (its whitespace-separated
    words; a missing one is empty). Only one digit is read, so `$10` is `$1` followed by "0".
    Returns the new body and whether any placeholder was there."""
    words = arguments.split()

    def value(match: re.Match[str]) -> str:
        token = match.group(1)
        if token == "ARGUMENTS":
            return arguments
        index = int(token)
        return words[index - 1] if index <= len(words) else ""

    result, count = _PLACEHOLDER.subn(value, body)
    return result, count > 0


def invocation_message(skill: Skill, arguments: str) -> str:
    """The user message a `/<skill> args` invocation becomes."""
    arguments = arguments.strip()
    body, substituted = substitute_arguments(bounded_body(skill), arguments)
    return invocation_text(skill.name, body, arguments, substituted)


def invocation_text(name: str, body: str, arguments: str, substituted: bool) -> str:
    """The invocation message around `body` (arguments already substituted, directives run):
    the arguments stay visible when no placeholder took them."""
    arguments = arguments.strip()
    tail = f"Using skill {name}"
    tail += f": {arguments}" if arguments and not substituted else "."
    return f'<skill name="{name}">\n{escape_untrusted(body)}\n</skill>\n\n{tail}'


# Discovery -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Root:
    """A directory skills are looked up in."""

    view: FileView
    path: str
    scope: str
    label: str
    fence: str | None
    writable: bool = False  # a root the skill tools write to (`.xum/skills`, `$XUM_ROOT/skills`)
    claude: bool = False  # a Claude Code root, read only with Claude compatibility on


@dataclass
class _RootCache:
    """What a skills directory held when last read."""

    sig: Sig = MISSING
    names: list[str] = field(default_factory=list)


class SkillLoader:
    """Finds the skills; re-reads a SKILL.md only when its signature moved."""

    def __init__(
        self,
        *,
        project: FileView,
        checkout_root: str,
        cwd: str,
        local: FileView,
        xum_root: str,
        home: str,
        include_builtin: bool = True,
    ) -> None:
        roots: list[_Root] = []
        root = checkout_root.rstrip("/") or "/"
        current = cwd.rstrip("/") or "/"
        walk = [current]
        if is_within(current, root):
            while current != root:
                current = os.path.dirname(current)
                walk.append(current)
        for directory in walk:
            rel = directory[len(root) :].strip("/") if is_within(directory, root) else ""
            prefix = f"{rel}/" if rel else ""
            for sub in (".xum/skills", ".agents/skills", CLAUDE_ROOT):
                roots.append(
                    _Root(
                        project,
                        f"{directory}/{sub}",
                        "project",
                        prefix + sub,
                        root,
                        writable=sub == ".xum/skills",
                        claude=sub == CLAUDE_ROOT,
                    )
                )
        roots.append(
            _Root(
                local,
                f"{xum_root.rstrip('/')}/skills",
                "global",
                "~/.xum/skills",
                None,
                writable=True,
            )
        )
        home = home.rstrip("/")
        roots.append(_Root(local, f"{home}/.agents/skills", "universal", "~/.agents/skills", None))
        roots.append(
            _Root(
                local, f"{home}/{CLAUDE_ROOT}", "universal", f"~/{CLAUDE_ROOT}", None, claude=True
            )
        )
        self.roots = roots
        self.include_builtin = include_builtin
        self._listings: dict[str, _RootCache] = {}
        self._parsed: dict[str, tuple[Sig, Skill | SkillProblem]] = {}
        self._sig: tuple[Any, ...] | None = None
        self._value = SkillCatalog()

    async def load(self) -> tuple[SkillCatalog, tuple[Any, ...]]:
        from xum.context.experiments import claude_compatibility

        entries: list[tuple[_Root, str, str, Sig | str | None]] = []
        claude = claude_compatibility()
        sig: list[Any] = [claude]
        for root in self.roots:
            if root.claude and not claude:
                continue
            names = await self._names(root)
            sig.append((root.path, self._listings[root.path].sig))
            for name in names:
                skill_path = f"{root.path}/{name}/{SKILL_FILE}"
                found = await find_file(root.view, skill_path, root.fence)
                state = found if found is None or isinstance(found, str) else found.sig
                entries.append((root, name, skill_path, state))
                sig.append((skill_path, state))
        frozen_sig = tuple(sig)
        fresh = any(isinstance(state, Sig) and racy(state) for _, _, _, state in entries)
        if frozen_sig == self._sig and not fresh:
            return self._value, frozen_sig
        self._value = await self._build(entries)
        self._sig = frozen_sig
        return self._value, frozen_sig

    async def _names(self, root: _Root) -> list[str]:
        cache = self._listings.setdefault(root.path, _RootCache())
        sig = await dir_sig(root.view, root.path)
        if not trusted(cache.sig, sig):
            names = await root.view.list_dir(root.path) if sig.exists else []
            cache.names = [n for n in (names or []) if not n.startswith(".")]
            cache.sig = sig
        return cache.names

    async def _build(self, entries: list[tuple[_Root, str, str, Sig | str | None]]) -> SkillCatalog:
        catalog = SkillCatalog()
        parsed: dict[str, tuple[Sig, Skill | SkillProblem]] = {}
        for root, name, skill_path, state in entries:
            where = f"{root.label}/{name}"
            if not valid_skill_name(name):
                if state is not None:
                    catalog.problems.append(
                        SkillProblem(
                            where,
                            "the directory name is not a valid skill name (lowercase letters and "
                            "digits in words joined by single hyphens, at most 64 characters)",
                        )
                    )
                continue
            if state is None:
                continue  # a directory without SKILL.md (or a stray file): not a skill
            if isinstance(state, str):
                catalog.problems.append(SkillProblem(where, state))
                continue
            cached = self._parsed.get(skill_path)
            if cached is not None and trusted(cached[0], state):
                result = cached[1]
            else:
                result = await self._parse(root, name, skill_path, state, where)
            parsed[skill_path] = (state, result)
            if isinstance(result, SkillProblem):
                catalog.problems.append(result)
            elif name not in catalog.skills:
                catalog.skills[name] = result
        self._parsed = parsed
        if self.include_builtin:
            for skill in builtin_skills():
                catalog.skills.setdefault(skill.name, skill)
        return catalog

    async def _parse(
        self, root: _Root, name: str, skill_path: str, state: Sig, where: str
    ) -> Skill | SkillProblem:
        if state.size > MAX_SKILL_BYTES:
            return SkillProblem(where, f"SKILL.md is {state.size:,} bytes, over the 1 MB limit")
        try:
            real = await root.view.realpath(skill_path)
            text = decode(await root.view.read_bytes(real, limit=MAX_SKILL_BYTES + 1))
        except OSError as exc:
            return SkillProblem(where, f"SKILL.md cannot be read ({exc.strerror or exc})")
        try:
            source, body = frontmatter.split_frontmatter(text)
            if source is None:
                return SkillProblem(where, "SKILL.md must start with YAML frontmatter (--- lines)")
            data = frontmatter.parse_yaml_mapping(source)
        except frontmatter.FrontmatterError as exc:
            return SkillProblem(where, str(exc))
        return skill_from_data(
            name,
            data,
            body,
            root.scope,
            root.label,
            f"{root.path}/{name}",
            root.view,
            root.fence,
            where,
            _body_line(text, body),
            writable=root.writable,
        )


def skill_from_data(
    name: str,
    data: dict[str, Any],
    body: str,
    scope: str,
    root_label: str,
    directory: str,
    view: FileView,
    fence: str | None,
    where: str,
    body_line: int,
    *,
    writable: bool = False,
) -> Skill | SkillProblem:
    declared = data.get("name")
    if declared != name:
        return SkillProblem(
            where, f"frontmatter `name` must equal the directory name {name!r} (got {declared!r})"
        )
    description = data.get("description")
    if not isinstance(description, str) or not description.strip():
        return SkillProblem(where, "frontmatter needs a non-empty `description`")
    for key in ("disable-model-invocation", "advertise", "user-invocable"):
        if key in data and not isinstance(data[key], bool):
            return SkillProblem(where, f"frontmatter `{key}` must be true or false")
    when = data.get("when_to_use")
    if when is None:
        when = data.get("when-to-use")
    hint = data.get("argument-hint")
    # Either opt-out keeps the skill out of the model's list; the opt-out wins over `true`.
    advertised = (
        data.get("disable-model-invocation") is not True and data.get("advertise") is not False
    )
    return Skill(
        name=name,
        description=description.strip(),
        scope=scope,
        root_label=root_label,
        directory=directory,
        view=view,
        fence=fence,
        body=body.strip("\n"),
        advertised=advertised,
        user_invocable=data.get("user-invocable") is not False,
        argument_hint=hint.strip() if isinstance(hint, str) else "",
        when_to_use=when.strip() if isinstance(when, str) else "",
        body_line=body_line,
        writable=writable,
    )


def _body_line(text: str, body: str) -> int:
    """The 1-based line of SKILL.md at which the stripped body begins."""
    stripped = body.lstrip("\n")
    before = text.replace("\r\n", "\n")
    start = len(before) - len(body) + (len(body) - len(stripped))
    return before.count("\n", 0, max(start, 0)) + 1


_BUILTIN: list[Skill] | None = None


def builtin_skills() -> list[Skill]:
    """xum's own skills, from the prebuilt index (bodies read once, on first use)."""
    global _BUILTIN
    if _BUILTIN is None:
        view = LocalFiles()
        skills: list[Skill] = []
        for entry in builtin.builtin_index()["skills"]:
            directory = builtin.skill_dir(entry["name"])
            with open(f"{directory}/{SKILL_FILE}", encoding="utf-8") as handle:
                text = handle.read()
            _source, body = frontmatter.split_frontmatter(text)
            result = skill_from_data(
                entry["name"],
                entry["data"],
                body,
                "builtin",
                "built-in",
                directory,
                view,
                directory,
                f"built-in/{entry['name']}",
                _body_line(text, body),
            )
            if isinstance(result, Skill):
                skills.append(result)
        _BUILTIN = skills
    return _BUILTIN


# Tool access -----------------------------------------------------------------------------------


class SkillNotFound(LookupError):
    pass


async def read_skill_file(skill: Skill, file_path: str, *, limit: int) -> bytes:
    """Bytes of a file inside the skill's directory. ValueError when the path leaves it (after
    resolving symlinks) or is not a regular file; FileNotFoundError when it does not exist."""
    if not file_path.strip() or "\0" in file_path:
        raise ValueError("filePath must be a relative path inside the skill directory")
    if file_path.startswith(("/", "~")):
        raise ValueError("filePath must be relative to the skill directory, not absolute")
    view = skill.view
    base = await view.realpath(skill.directory)
    target = await view.realpath(os.path.normpath(f"{skill.directory}/{file_path}"))
    if not is_within(target, base) or target == base:
        raise ValueError(f"{file_path} is outside the skill directory of {skill.name}")
    if _in_xum_own_files(target):
        raise ValueError(
            f"{file_path} resolves into xum's own directory ($XUM_ROOT) outside its skills; "
            "agents cannot read it"
        )
    st = await view.stat(target)
    if not st.exists:
        raise FileNotFoundError(file_path)
    if not st.is_file:
        raise ValueError(f"{file_path} is not a regular file")
    return await view.read_bytes(target, limit=limit)


def _in_xum_own_files(target: str) -> bool:
    """Whether `target` (resolved) is in `$XUM_ROOT` but neither in its global skills nor in a
    checkout under `src/`: a skill directory that is a symlink into xum's configuration or
    credentials must not make them readable (the file tools refuse them too,
    `xum.tools.paths`)."""
    from xum.core.paths import src_dir, xum_root

    root = os.path.realpath(xum_root())
    if not is_within(target, root):
        return False
    open_places = (os.path.join(root, "skills"), os.path.realpath(src_dir()))
    return not any(is_within(target, place) for place in open_places)
