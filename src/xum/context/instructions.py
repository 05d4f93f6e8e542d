"""Instruction files (AGENTS.md and friends): where they are, what they say, what applies now.

Layers, most general first: the user's global `$XUM_ROOT/AGENTS.md` (+ `AGENTS.local.md`), then
every directory from the checkout root down to the workspace's working directory. In each
directory: the first of `AGENTS.md`, `AGENT.md`, `CLAUDE.md` (a *shared* file, which other tools
read too), plus `AGENTS.local.md` when a shared file exists; and `.xum/AGENTS.md` (+
`.xum/AGENTS.local.md`), which only xum reads (*dedicated*). The global files are dedicated.

HTML comments are removed. Scoped sections are cut out of the general text:

* `Model: <regex>` and `Mode: <mode>` in dedicated files only (in shared files such headings
  stay ordinary Markdown), gathered across files and injected in their own tags;
* `Tool: <name>` in every file, appended to that tool's description;
* `Agent:` sections in dedicated files are dropped (custom agents replaced them).

Scoped sections are gathered in precedence order: the agent definition first (the assembler adds
it), then the project's files from the working directory up to the root, then the global files.

Bounds (a repository decides how big these files are): at most `MAX_FILES` files, each cut at
`MAX_FILE_BYTES`, all together at most `MAX_TOTAL_BYTES`, the budget going to the most specific
files first. Whatever is cut or left out leaves a marker in the prompt naming the file and why.
At most `MAX_DIR_LEVELS` directories are searched: the checkout root and the ones nearest the
working directory (directories in between are not looked at).
Project files are read through the workspace runtime; a symlink leaving the checkout is refused.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from xum.context.files import FileView, Found, decode, find_file, racy, trusted
from xum.context.markup import ScopedSection, escape_untrusted, split_scoped, strip_html_comments
from xum.core.pathtext import is_within

SHARED_FILES = ("AGENTS.md", "AGENT.md", "CLAUDE.md")
LOCAL_FILE = "AGENTS.local.md"
DEDICATED_FILE = ".xum/AGENTS.md"
DEDICATED_LOCAL_FILE = ".xum/AGENTS.local.md"

MAX_FILES = 24
MAX_FILE_BYTES = 64 * 1024
MAX_TOTAL_BYTES = 128 * 1024
MAX_DIR_LEVELS = 16  # directories from the checkout root to the working directory

DEDICATED_KINDS = frozenset({"model", "mode", "tool", "agent"})
SHARED_KINDS = frozenset({"tool"})

MAX_MODEL_PATTERN = 256
# A quantified group that itself holds a quantifier ("(a+)+", "(.*)*"): the shape behind
# catastrophic backtracking. Such patterns come from repository files, so they are refused.
# Compiled (by `re`'s cache) with the first scoped `Model:` section, not at start-up.
_NESTED_QUANTIFIER = r"\((?:[^()\\]|\\.)*[*+}](?:[^()\\]|\\.)*\)\s*[*+{]"
_REGEX_FLAGS = {"i": re.IGNORECASE, "m": re.MULTILINE, "s": re.DOTALL, "x": re.VERBOSE}


@dataclass(frozen=True, slots=True)
class InstructionFile:
    """One instruction file (AGENTS.md and the like), read and split."""

    label: str  # how the prompt names it: "global: AGENTS.md", "project: pkg/.xum/AGENTS.md"
    dedicated: bool
    general: str  # the text outside scoped sections (comments removed)
    sections: tuple[ScopedSection, ...]
    note: str = ""  # a marker when the file was cut or left out


@dataclass(frozen=True)
class Instructions:
    """Every instruction file that applies to a workspace."""

    files: tuple[InstructionFile, ...] = ()  # most general first
    # Scoped sections in precedence order (most specific file first), with their file's label.
    scoped: tuple[tuple[ScopedSection, str], ...] = ()
    diagnostics: tuple[str, ...] = ()
    _model_cache: dict[str, str] = field(default_factory=dict, compare=False, repr=False)

    def general_block(self) -> str:
        """The `<custom-instructions>` block (empty when there is nothing to say)."""
        parts = []
        for file in self.files:
            text = "\n\n".join(p for p in (escape_untrusted(file.general), file.note) if p)
            if text:
                parts.append(f"--- {file.label} ---\n{text}")
        if not parts:
            return ""
        return (
            "<custom-instructions>\n"
            "Guidance from the user's and the project's instruction files, the most general "
            "first; where two disagree, the later (more specific) one wins.\n\n"
            + "\n\n".join(parts)
            + "\n</custom-instructions>"
        )

    def model_text(self, model_string: str) -> str:
        """Every `Model:` section whose pattern matches the model, concatenated."""
        cached = self._model_cache.get(model_string)
        if cached is None:
            cached = join_sections(
                s
                for s, _ in self.scoped
                if s.kind == "model" and model_matches(s.key, model_string)
            )
            self._model_cache[model_string] = cached
        return cached

    def mode_text(self, mode: str, agent_id: str) -> str:
        keys = {mode.lower(), agent_id.lower()}
        return join_sections(
            s for s, _ in self.scoped if s.kind == "mode" and s.key.strip().lower() in keys
        )

    def tool_texts(self) -> dict[str, str]:
        """Tool name (lowercase) -> its `Tool:` sections, concatenated."""
        grouped: dict[str, list[ScopedSection]] = {}
        for section, _ in self.scoped:
            if section.kind == "tool":
                grouped.setdefault(section.key.strip().lower(), []).append(section)
        return {name: join_sections(sections) for name, sections in grouped.items()}


def join_sections(sections: Any) -> str:
    return "\n\n".join(s.body for s in sections if s.body)


def model_matches(key: str, model_string: str) -> bool:
    """`Model:` keys are regexes searched in the model string, case-insensitive unless written
    as `/pattern/flags`. Invalid or risky patterns never match."""
    key = key.strip()
    flags = re.IGNORECASE
    pattern = key
    if key.startswith("/") and key.rfind("/") > 0:
        end = key.rfind("/")
        letters = key[end + 1 :]
        if all(ch in _REGEX_FLAGS or ch == "u" for ch in letters):
            pattern = key[1:end]
            flags = re.NOFLAG
            for ch in letters:
                flags |= _REGEX_FLAGS.get(ch, re.NOFLAG)
    compiled = _compile_model_pattern(pattern, flags)
    return compiled is not None and compiled.search(model_string) is not None


_PATTERNS: dict[tuple[str, int], re.Pattern[str] | None] = {}


def _compile_model_pattern(pattern: str, flags: int) -> re.Pattern[str] | None:
    key = (pattern, flags)
    if key not in _PATTERNS:
        compiled: re.Pattern[str] | None = None
        if len(pattern) <= MAX_MODEL_PATTERN and not re.search(_NESTED_QUANTIFIER, pattern):
            try:
                compiled = re.compile(pattern, flags)
            except re.error:
                compiled = None
        if len(_PATTERNS) > 1024:
            _PATTERNS.clear()
        _PATTERNS[key] = compiled
    return _PATTERNS[key]


# Discovery -------------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class _Candidate:
    """An instruction file found during discovery, before it is read."""

    view: FileView
    found: Found
    label: str
    dedicated: bool
    rank: int  # precedence for scoped sections: lower = more specific
    order: int  # reading order for the general block: lower = more general


def layer_dirs(checkout_root: str, cwd: str) -> list[str]:
    """Directories from the checkout root down to `cwd` (just `cwd` when it is outside)."""
    root = checkout_root.rstrip("/") or "/"
    cwd = cwd.rstrip("/") or "/"
    if not is_within(cwd, root):
        return [cwd]
    dirs = [root]
    rest = cwd[len(root) :].strip("/")
    if rest:
        current = root
        for part in rest.split("/"):
            current = f"{current.rstrip('/')}/{part}"
            dirs.append(current)
    if len(dirs) > MAX_DIR_LEVELS:
        dirs = [dirs[0], *dirs[-(MAX_DIR_LEVELS - 1) :]]
    return dirs


class InstructionsLoader:
    """Finds and reads the instruction files; re-reads only files whose signature moved."""

    def __init__(
        self,
        *,
        project: FileView,
        checkout_root: str,
        cwd: str,
        local: FileView,
        xum_root: str,
    ) -> None:
        self.project = project
        self.checkout_root = checkout_root
        self.dirs = layer_dirs(checkout_root, cwd)
        self.local = local
        self.xum_root = xum_root
        self._sig: tuple[Any, ...] | None = None
        self._value = Instructions()
        self._texts: dict[str, tuple[Any, str, int]] = {}  # path -> (sig, text, full size)

    async def load(self) -> tuple[Instructions, tuple[Any, ...]]:
        candidates, sig, problems = await self._discover()
        if sig == self._sig and not any(racy(c.found.sig) for c in candidates):
            return self._value, sig
        value = await self._read(candidates, problems)
        self._sig, self._value = sig, value
        return value, sig

    async def _discover(self) -> tuple[list[_Candidate], tuple[Any, ...], list[str]]:
        candidates: list[_Candidate] = []
        sig: list[Any] = []
        problems: list[str] = []

        async def probe(
            view: FileView, path: str, label: str, dedicated: bool, slot: int, fence: str | None
        ) -> bool:
            found = await find_file(view, path, fence)
            if isinstance(found, str):
                problems.append(found)
                sig.append((path, found))
                return False
            sig.append((path, found.sig if found else None))
            if found is None:
                return False
            # Scoped precedence: nearer directories first, dedicated files before shared
            # ones, the global files last. Reading order: the reverse of the directories.
            level, within = divmod(slot, 4)
            rank = (len(self.dirs) + 1 - level) * 4 + (within + 2) % 4
            candidates.append(_Candidate(view, found, label, dedicated, rank, slot))
            return True

        root = self.xum_root.rstrip("/")
        if await probe(self.local, f"{root}/AGENTS.md", "global: AGENTS.md", True, 2, None):
            await probe(self.local, f"{root}/{LOCAL_FILE}", f"global: {LOCAL_FILE}", True, 3, None)
        fence = self.checkout_root
        for depth, directory in enumerate(self.dirs, 1):
            rel = directory[len(fence) :].strip("/") if is_within(directory, fence) else ""
            prefix = f"project: {rel}/" if rel else "project: "
            slot = depth * 4
            for name in SHARED_FILES:
                if await probe(
                    self.project, f"{directory}/{name}", prefix + name, False, slot, fence
                ):
                    await probe(
                        self.project,
                        f"{directory}/{LOCAL_FILE}",
                        prefix + LOCAL_FILE,
                        False,
                        slot + 1,
                        fence,
                    )
                    break
            if await probe(
                self.project,
                f"{directory}/{DEDICATED_FILE}",
                prefix + DEDICATED_FILE,
                True,
                slot + 2,
                fence,
            ):
                await probe(
                    self.project,
                    f"{directory}/{DEDICATED_LOCAL_FILE}",
                    prefix + DEDICATED_LOCAL_FILE,
                    True,
                    slot + 3,
                    fence,
                )
        candidates.sort(key=lambda c: c.order)
        return candidates, tuple(sig), problems

    async def _read(self, candidates: list[_Candidate], problems: list[str]) -> Instructions:
        notes: dict[int, str] = {}
        texts: dict[int, str] = {}
        # Budgets go to the most specific files first (they are read last).
        kept = list(range(len(candidates)))
        if len(kept) > MAX_FILES:
            for index in kept[: len(kept) - MAX_FILES]:
                notes[index] = (
                    f"[xum: {candidates[index].label} left out: more than {MAX_FILES} "
                    "instruction files]"
                )
            kept = kept[len(kept) - MAX_FILES :]
        remaining = MAX_TOTAL_BYTES
        fresh: dict[str, tuple[Any, str, int]] = {}
        for index in reversed(kept):
            candidate = candidates[index]
            text, size, problem = await self._text(candidate, fresh)
            if problem:
                problems.append(problem)
                notes[index] = f"[xum: {candidate.label} could not be read]"
                continue
            note = ""
            if size > MAX_FILE_BYTES:
                note = (
                    f"[xum: {candidate.label} cut: it is {size:,} bytes, only the first "
                    f"{MAX_FILE_BYTES:,} are included]"
                )
            cost = len(text.encode("utf-8", errors="replace"))
            if cost > remaining:
                notes[index] = (
                    f"[xum: {candidate.label} left out: the instruction files together exceed "
                    f"{MAX_TOTAL_BYTES:,} bytes]"
                )
                continue
            remaining -= cost
            texts[index] = text
            if note:
                notes[index] = note
        self._texts = fresh

        files: list[InstructionFile] = []
        scoped: list[tuple[int, int, ScopedSection, str]] = []
        for index, candidate in enumerate(candidates):
            text = strip_html_comments(texts.get(index, ""))
            kinds = DEDICATED_KINDS if candidate.dedicated else SHARED_KINDS
            general, sections = split_scoped(text, kinds)
            kept_sections = tuple(s for s in sections if s.kind != "agent")
            for order, section in enumerate(kept_sections):
                scoped.append((candidate.rank, order, section, candidate.label))
            files.append(
                InstructionFile(
                    candidate.label,
                    candidate.dedicated,
                    general,
                    kept_sections,
                    notes.get(index, ""),
                )
            )
        scoped.sort(key=lambda item: (item[0], item[1]))
        return Instructions(
            files=tuple(files),
            scoped=tuple((s, label) for _, _, s, label in scoped),
            diagnostics=tuple(problems),
        )

    async def _text(
        self, candidate: _Candidate, fresh: dict[str, tuple[Any, str, int]]
    ) -> tuple[str, int, str]:
        path = candidate.found.path
        cached = self._texts.get(path)
        if cached is not None and trusted(cached[0], candidate.found.sig):
            fresh[path] = cached
            return cached[1], cached[2], ""
        try:
            data = await candidate.view.read_bytes(path, limit=MAX_FILE_BYTES + 1)
        except OSError as exc:
            return "", 0, f"{candidate.label}: cannot be read ({exc.strerror or exc})"
        size = max(candidate.found.sig.size, len(data))
        if len(data) > MAX_FILE_BYTES:
            data = data[:MAX_FILE_BYTES]
            cut = data.rfind(b"\n")
            if cut > 0:
                data = data[:cut]
        text = decode(data)
        fresh[path] = (candidate.found.sig, text, size)
        return text, size, ""
