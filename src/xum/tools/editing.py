"""What the three file_edit tools share: load a text file, keep its newline style, write it back
atomically, and describe the change as a compact diff.

Edits work on text with `\\n` newlines. A file that uses CRLF throughout is converted to `\\n`
for the edit and back on write, so the model's `\\n`-only strings match and the file keeps its
style. A file with mixed newlines is edited as it is, byte for byte.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass

from xum.runtime.base import NotRegularFileError
from xum.tools.base import ToolContext, ToolResult, error
from xum.tools.paths import PathRefused, WriteTarget, resolve_write_path

MAX_EDIT_BYTES = 32 * 1024 * 1024
DIFF_MAX_LINES = 200
DIFF_MAX_CHARS = 16 * 1024
DIFF_CONTEXT = 3


@dataclass(slots=True)
class TextFile:
    target: WriteTarget
    text: str  # with `\n` newlines when `crlf`
    crlf: bool  # every newline in the file was CRLF
    exists: bool = True

    def to_file_text(self, text: str) -> str:
        return text.replace("\n", "\r\n") if self.crlf else text


class EditRefused(Exception):
    """An edit that cannot go ahead; the message is meant for the model."""


def normalize_newlines(file: TextFile, value: str) -> str:
    """A string from the model, in the newline form the edit works in."""
    return value.replace("\r\n", "\n") if file.crlf else value


async def load_text_file(ctx: ToolContext, path: str, *, missing_ok: bool = False) -> TextFile:
    try:
        target = await resolve_write_path(ctx, path)
    except PathRefused as exc:
        raise EditRefused(str(exc)) from None
    st = await ctx.runtime.stat(target.path)
    if not st.exists:
        if missing_ok:
            return TextFile(target=target, text="", crlf=False, exists=False)
        raise EditRefused(f"{path}: no such file (resolved: {target.path})")
    if st.is_dir:
        raise EditRefused(f"{path} is a directory, not a file")
    if not st.is_file:
        raise EditRefused(f"{path} is not a regular file (a FIFO, socket or device); refused")
    if st.size > MAX_EDIT_BYTES:
        raise EditRefused(
            f"{path} is {st.size:,} bytes; the edit tools handle files up to "
            f"{MAX_EDIT_BYTES:,} bytes. Use bash (sed, a script) for this one."
        )
    try:
        data = await ctx.runtime.read_bytes(target.path)
    except (NotRegularFileError, IsADirectoryError):
        raise EditRefused(f"{path} is not a regular file; refused") from None
    except PermissionError:
        raise EditRefused(f"{path}: permission denied") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        raise EditRefused(
            f"{path} is not UTF-8 text; the edit tools only change text files. "
            "Use bash for binary or other encodings."
        ) from None
    crlf = "\r\n" in text and text.count("\r\n") == text.count("\n")
    if crlf:
        text = text.replace("\r\n", "\n")
    return TextFile(target=target, text=text, crlf=crlf)


async def save_text_file(ctx: ToolContext, file: TextFile, new_text: str) -> ToolResult | None:
    """Write the new text; an error result when the OS refuses (the file is then unchanged)."""
    try:
        await ctx.runtime.write_bytes_atomic(
            file.target.path, file.to_file_text(new_text).encode("utf-8")
        )
    except OSError as exc:
        return error(
            f"could not write {file.target.requested}: {exc.strerror or exc}; "
            "the file was not changed"
        )
    return None


def count_lines(text: str) -> int:
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def line_of_offset(text: str, offset: int) -> int:
    return text.count("\n", 0, offset) + 1


_HUNK = re.compile(r"^@@ -(\d+)(,\d+)? \+(\d+)(,\d+)? @@")


def compact_diff(path: str, old: str, new: str) -> str:
    """A unified diff of the change, computed over the changed region only, and bounded."""
    a = old.splitlines(keepends=True)
    b = new.splitlines(keepends=True)
    prefix = 0
    limit = min(len(a), len(b))
    while prefix < limit and a[prefix] == b[prefix]:
        prefix += 1
    suffix = 0
    while suffix < limit - prefix and a[-1 - suffix] == b[-1 - suffix]:
        suffix += 1
    lo = max(0, prefix - DIFF_CONTEXT)
    keep_suffix = max(0, suffix - DIFF_CONTEXT)
    # git's labels: `a/` and `b/` before the path, an absolute one without its leading slash
    # (`a/tmp/plan.md`, not `a//tmp/plan.md`), as `git diff --no-index` writes them.
    label = path.lstrip("/") or path
    lines = difflib.unified_diff(
        a[lo : len(a) - keep_suffix],
        b[lo : len(b) - keep_suffix],
        fromfile=f"a/{label}",
        tofile=f"b/{label}",
        n=DIFF_CONTEXT,
    )
    out: list[str] = []
    size = 0
    for count, line in enumerate(lines):
        match = _HUNK.match(line) if lo else None
        if match:  # hunk numbers are relative to the slice; shift them back
            line = (
                f"@@ -{int(match.group(1)) + lo}{match.group(2) or ''} "
                f"+{int(match.group(3)) + lo}{match.group(4) or ''} @@\n"
            )
        if not line.endswith("\n"):
            line += "\n\\ No newline at end of file\n"
        if count >= DIFF_MAX_LINES or size + len(line) > DIFF_MAX_CHARS:
            out.append("[... diff truncated ...]\n")
            break
        out.append(line)
        size += len(line)
    return "".join(out)


def edit_result(file: TextFile, new_text: str, summary: str, **meta: object) -> ToolResult:
    diff = compact_diff(file.target.requested, file.text, new_text)
    return ToolResult(
        output=summary,
        meta={"path": file.target.path, "diff": diff, **meta},
    )


def refused(exc: Exception) -> ToolResult:
    return error(str(exc))
