"""The plan file of a workspace, and how xum notices edits made to it outside its edit tools.

The plan lives at `$XUM_ROOT/plans/<project-name>/<workspace-name>.md` (workspace names carry a
random suffix, so the path is unique). xum keeps a *snapshot* of the content the model last
knew: taken when `propose_plan` presents the plan and after a step in which the model edited it
with the file_edit tools. Before each model request the file's mtime is compared with the
snapshot; when it moved and the content differs, the model is told with a diff.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from xum.context.files import FileView, decode
from xum.core.paths import plans_dir
from xum.store.frame_types import PlanSnapshotData
from xum.store.registry import project_name

MAX_PLAN_BYTES = 1024 * 1024  # propose_plan refuses a larger plan file
SNAPSHOT_CONTENT_LIMIT = 256 * 1024  # larger plans are tracked by digest only (no diff)
DIFF_MAX_LINES = 300
DIFF_MAX_CHARS = 24 * 1024


def plan_file_path(project_path: str, workspace_name: str) -> str:
    return str(plans_dir() / project_name(project_path) / f"{workspace_name}.md")


@dataclass(frozen=True, slots=True)
class PlanSnapshot:
    """A plan file's state at one moment."""

    path: str
    exists: bool
    mtime_ns: int = 0
    sha256: str = ""
    content: str | None = None  # None when absent or over SNAPSHOT_CONTENT_LIMIT

    def to_dict(self) -> PlanSnapshotData:
        return {
            "path": self.path,
            "exists": self.exists,
            "mtime_ns": self.mtime_ns,
            "sha256": self.sha256,
            "content": self.content,
        }

    @classmethod
    def from_dict(cls, data: Any) -> PlanSnapshot | None:
        if not isinstance(data, dict) or not isinstance(data.get("path"), str):
            return None
        content = data.get("content")
        return cls(
            path=data["path"],
            exists=bool(data.get("exists", True)),
            mtime_ns=int(data.get("mtime_ns") or 0),
            sha256=str(data.get("sha256") or ""),
            content=content if isinstance(content, str) else None,
        )


async def read_snapshot(view: FileView, path: str) -> PlanSnapshot:
    st = await view.stat(path)
    if st.is_symlink:
        st = await view.stat(await view.realpath(path))
    if not st.exists or not st.is_file:
        return PlanSnapshot(path, exists=False)
    try:
        data = await view.read_bytes(path, limit=MAX_PLAN_BYTES + 1)
    except OSError:
        return PlanSnapshot(path, exists=False)
    content = decode(data) if len(data) <= SNAPSHOT_CONTENT_LIMIT else None
    return PlanSnapshot(path, True, st.mtime_ns, hashlib.sha256(data).hexdigest(), content)


async def plan_mtime(view: FileView, path: str) -> int | None:
    """The mtime (None when there is no file): the cheap check made before every request."""
    st = await view.stat(path)
    if st.is_symlink:
        st = await view.stat(await view.realpath(path))
    return st.mtime_ns if st.exists else None


def plan_diff(before: PlanSnapshot, after: PlanSnapshot) -> str:
    """What changed, for the model: a bounded unified diff, or a sentence when none can be made."""
    if not after.exists:
        return "The plan file was deleted."
    if not before.exists:
        return "The plan file was created:\n" + _fenced(after.content or "")
    if before.content is None or after.content is None:
        return (
            "The plan file changed; it is too large to show a diff here. Read it again with "
            "file_read before you continue."
        )
    import difflib

    lines = difflib.unified_diff(
        before.content.splitlines(keepends=True),
        after.content.splitlines(keepends=True),
        fromfile="plan (before)",
        tofile="plan (now)",
        n=2,
    )
    out: list[str] = []
    size = 0
    for count, line in enumerate(lines):
        if not line.endswith("\n"):
            line += "\n"
        if count >= DIFF_MAX_LINES or size + len(line) > DIFF_MAX_CHARS:
            out.append("[... diff cut short; read the plan file for the rest ...]\n")
            break
        out.append(line)
        size += len(line)
    return "Diff against the version you last saw:\n" + _fenced("".join(out), "diff")


def _fenced(text: str, lang: str = "md") -> str:
    fence = "```"
    while fence in text:
        fence += "`"
    return f"{fence}{lang}\n{text.rstrip(chr(10))}\n{fence}"
