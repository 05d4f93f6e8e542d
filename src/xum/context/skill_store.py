"""Writing and deleting skills for the skill tools (`agent_skill_write`, `agent_skill_delete`).

Two places can be changed, chosen by the tools' `scope`:

* `project` (the default): `<working directory>/.xum/skills/<name>/`, written through the
  workspace's runtime (so an SSH workspace's skills are written on its host). The working
  directory's own `.xum/skills` is the nearest project root, so what is written there wins over
  every other skill of that name.
* `global`: `$XUM_ROOT/skills/<name>/` (`~/.xum/skills`), on this machine.

Nothing else is ever written: `.agents/skills`, `.claude/skills`, `~/.agents/skills`,
`~/.claude/skills` and the built-in skills are read-only here; updating such a skill writes a
copy under `.xum/skills` (or the global root), which then shadows it.

Every path is checked after resolving symlinks: the file must stay inside the skill's directory,
which must stay inside its root's owner (the workspace, or `$XUM_ROOT`); a file that is itself a
symlink is refused. A new or changed `SKILL.md` must pass the same validation discovery applies
(frontmatter, `name` equal to the directory, `description`, 1 MB); a missing `name` is filled in.
"""

from __future__ import annotations

import asyncio
import os
import posixpath
import shlex
import shutil
from typing import Literal

from xum.context import frontmatter
from xum.context.files import LocalFiles, RuntimeFiles
from xum.context.skills import (
    MAX_SKILL_BYTES,
    SKILL_FILE,
    SkillProblem,
    skill_from_data,
    valid_skill_name,
)
from xum.core.pathtext import is_within
from xum.runtime.base import Runtime
from xum.tools.skill_records import SkillChange

Scope = Literal["project", "global"]  # the same as xum.tools.skill_records.SkillScope
# Files other than SKILL.md (references, templates, scripts): what agent_skill_read_file reads.
MAX_OTHER_FILE_BYTES = 4 * 1024 * 1024
PROJECT_ROOT = ".xum/skills"


class SkillWriteError(ValueError):
    """A write or delete refused; the message says why and what to do (meant for the model)."""


def check_skill_name(name: str) -> str:
    name = name.strip()
    if not valid_skill_name(name):
        raise SkillWriteError(
            f"{name!r} is not a valid skill name: use lowercase letters and digits in words "
            "joined by single hyphens (for example fix-issue), at most 64 characters"
        )
    return name


def relative_skill_path(file_path: str | None) -> str:
    """The normalized relative path of a file inside a skill (`SKILL.md` by default; any
    casing of it is `SKILL.md`)."""
    raw = (file_path or SKILL_FILE).strip()
    if not raw or "\0" in raw:
        raise SkillWriteError("filePath must be a relative path inside the skill directory")
    if raw.startswith(("/", "~")) or "\\" in raw:
        raise SkillWriteError(
            f"filePath {raw!r} must be relative to the skill directory (for example "
            "references/api.md), with forward slashes"
        )
    parts = [p for p in raw.split("/") if p not in ("", ".")]
    if not parts or any(p == ".." for p in parts):
        raise SkillWriteError(f"filePath {raw!r} leaves the skill directory; stay inside it")
    if any(p.lower() in (".git", ".xum") for p in parts):
        raise SkillWriteError(f"filePath {raw!r} names a .git or .xum directory; not allowed")
    path = "/".join(parts)
    return SKILL_FILE if path.lower() == SKILL_FILE.lower() else path


def prepared_skill_markdown(name: str, content: str) -> str:
    """`content` checked as a SKILL.md for the skill `name`, with `name:` filled in when the
    frontmatter has none. SkillWriteError saying what is wrong otherwise."""
    size = len(content.encode("utf-8"))
    if size > MAX_SKILL_BYTES:
        raise SkillWriteError(f"SKILL.md would be {size:,} bytes, over the 1 MB limit")
    try:
        source, body = frontmatter.split_frontmatter(content)
        if source is None:
            raise SkillWriteError(
                "SKILL.md must start with YAML frontmatter between --- lines, with at least "
                f"`name: {name}` and `description: ...`"
            )
        data = frontmatter.parse_yaml_mapping(source)
    except frontmatter.FrontmatterError as exc:
        raise SkillWriteError(f"SKILL.md frontmatter: {exc}") from None
    if "name" not in data:
        # The directory names the skill; fill it in rather than fail on an obvious omission.
        first, _, rest = content.partition("\n")
        content = f"{first}\nname: {name}\n{rest}"
        data["name"] = name
    result = skill_from_data(name, data, body, "project", "", "", LocalFiles(), None, name, 1)
    if isinstance(result, SkillProblem):
        raise SkillWriteError(f"SKILL.md is not valid: {result.message}")
    return content


class SkillStore:
    """Writes and deletes skills of one workspace (see the module docstring)."""

    def __init__(self, runtime: Runtime, workspace_path: str, xum_root: str) -> None:
        self.runtime = runtime
        self.workspace_path = workspace_path.rstrip("/") or "/"
        self.xum_root = xum_root.rstrip("/") or "/"
        self._project = RuntimeFiles(runtime)
        self._local = LocalFiles()

    def root_label(self, scope: Scope) -> str:
        return PROJECT_ROOT if scope == "project" else "~/.xum/skills"

    async def write(
        self, scope: Scope, name: str, file_path: str | None, content: str
    ) -> SkillChange:
        name = check_skill_name(name)
        rel = relative_skill_path(file_path)
        if rel == SKILL_FILE:
            content = prepared_skill_markdown(name, content)
        else:
            size = len(content.encode("utf-8"))
            if size > MAX_OTHER_FILE_BYTES:
                raise SkillWriteError(
                    f"{rel} would be {size:,} bytes; a skill file holds at most "
                    f"{MAX_OTHER_FILE_BYTES // (1024 * 1024)} MiB"
                )
        target = await self._target(scope, name, rel)
        view = self._project if scope == "project" else self._local
        st = await view.stat(target)
        if st.is_symlink:
            raise SkillWriteError(f"{rel} is a symbolic link; xum does not write through it")
        if st.exists and not st.is_file:
            raise SkillWriteError(f"{rel} exists and is not a regular file")
        data = content.encode("utf-8")
        if scope == "project":
            await self.runtime.write_bytes_atomic(target, data)
        else:
            await asyncio.to_thread(_write_local, target, data)
        return SkillChange(target, created=not st.exists)

    async def delete(
        self, scope: Scope, name: str, target: Literal["file", "skill"], file_path: str | None
    ) -> SkillChange:
        name = check_skill_name(name)
        directory = await self._skill_dir(scope, name)
        view = self._project if scope == "project" else self._local
        dir_st = await view.stat(directory)
        if not dir_st.exists:
            raise LookupError(name)
        if target == "skill":
            if dir_st.is_symlink or not dir_st.is_dir:
                raise SkillWriteError(
                    f"{self.root_label(scope)}/{name} is not a plain directory; not removed"
                )
            await self._remove(scope, directory, tree=True)
            return SkillChange(directory, created=True)
        if not file_path or not file_path.strip():
            raise SkillWriteError(
                "filePath is required when target is 'file' (or pass target 'skill' to remove "
                "the whole skill)"
            )
        rel = relative_skill_path(file_path)
        if rel == SKILL_FILE:
            raise SkillWriteError(
                "SKILL.md is what makes the directory a skill; to remove the skill pass "
                "target 'skill'"
            )
        path = await self._target(scope, name, rel)
        st = await view.stat(path)
        if not st.exists:
            raise FileNotFoundError(rel)
        if not st.is_file and not st.is_symlink:
            raise SkillWriteError(f"{rel} is not a file; only files are deleted with target 'file'")
        await self._remove(scope, path, tree=False)
        return SkillChange(path, created=False)

    # -- paths --------------------------------------------------------------------------------

    async def _skill_dir(self, scope: Scope, name: str) -> str:
        """The skill's directory, after checking that its root resolves inside its owner."""
        if scope == "project":
            owner = await self.runtime.realpath(self.workspace_path)
            directory = f"{self.workspace_path}/{PROJECT_ROOT}/{name}"
            resolved = await self.runtime.realpath(directory)
        else:
            owner = os.path.realpath(self.xum_root)
            directory = f"{self.xum_root}/skills/{name}"
            resolved = os.path.realpath(directory)
        if not is_within(resolved, owner) or resolved == owner:
            where = "the workspace" if scope == "project" else "xum's directory ($XUM_ROOT)"
            raise SkillWriteError(
                f"{self.root_label(scope)}/{name} resolves to {resolved}, outside {where}; "
                "xum does not follow that symlink"
            )
        return directory

    async def _target(self, scope: Scope, name: str, rel: str) -> str:
        directory = await self._skill_dir(scope, name)
        path = posixpath.join(directory, rel)
        if scope == "project":
            base = await self.runtime.realpath(directory)
            resolved = await self.runtime.realpath(path)
        else:
            base = os.path.realpath(directory)
            resolved = os.path.realpath(path)
        if not is_within(resolved, base) or resolved == base:
            raise SkillWriteError(
                f"{rel} resolves to {resolved}, outside the skill directory; not written"
            )
        return path

    async def _remove(self, scope: Scope, path: str, *, tree: bool) -> None:
        if scope == "global":
            await asyncio.to_thread(_remove_local, path, tree)
            return
        # The runtime has no delete of its own: rm runs where the files are (the SSH host).
        flag = "-rf" if tree else "-f"
        chunks: list[bytes] = []
        result = await self.runtime.exec(
            f"rm {flag} -- {shlex.quote(path)}", env={}, timeout_s=60, on_output=chunks.append
        )
        if result.exit_code != 0:
            output = b"".join(chunks).decode("utf-8", "replace").strip()
            raise OSError(f"rm failed ({result.exit_code}): {output[:500]}")


def _write_local(path: str, data: bytes) -> None:
    from pathlib import Path

    from xum.core.fsutil import atomic_write_bytes

    os.makedirs(os.path.dirname(path), exist_ok=True)
    atomic_write_bytes(Path(path), data)


def _remove_local(path: str, tree: bool) -> None:
    if tree:
        shutil.rmtree(path)
    else:
        os.unlink(path)
