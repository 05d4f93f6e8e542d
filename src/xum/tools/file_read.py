"""file_read: numbered lines of a text file, bounded, with a note saying what was shown."""

from __future__ import annotations

import codecs
import stat
from typing import TYPE_CHECKING, Any, ClassVar

from xum.runtime.base import NotRegularFileError
from xum.tools.base import Tool, ToolContext, ToolResult, error, input_model
from xum.tools.paths import PathRefused, resolve_read_path

if TYPE_CHECKING:
    from xum.tools.file_read_input import FileReadInput
    from xum.tools.input import ToolInput

MAX_LINES = 2000
MAX_OUTPUT_CHARS = 64 * 1024
MAX_LINE_CHARS = 2000
# Only this much of a file is read; lines beyond it need bash (sed -n, tail).
READ_WINDOW_BYTES = 32 * 1024 * 1024
BINARY_SNIFF_BYTES = 8192
# Share of undecodable bytes and control characters above which a file counts as binary.
BINARY_RATIO = 0.10
_TEXT_CONTROLS = frozenset("\t\n\r\f\v\b\x1b")


class FileReadTool(Tool):
    name = "file_read"
    description = (
        "Read a text file and return its lines numbered from 1. Shows at most "
        f"{MAX_LINES} lines or {MAX_OUTPUT_CHARS // 1024} KiB per call and clips lines longer "
        f"than {MAX_LINE_CHARS} characters; when more remains, the result says which offset to "
        "continue from. Use offset and limit to page through large files. Refuses binary files, "
        "directories and special files. Prefer this over `cat` in bash: the line numbers match "
        "what file_edit_replace_lines expects."
    )
    # Its pydantic model is imported only when needed (xum.tools.plain_args checks plain calls).
    Input: ClassVar[type[ToolInput]] = input_model("xum.tools.file_read_input:FileReadInput")
    read_only = True

    def summary(self, args: FileReadInput) -> str:
        return args.path

    async def run(self, args: FileReadInput, ctx: ToolContext) -> ToolResult:
        try:
            path = await resolve_read_path(ctx, args.path)
        except PathRefused as exc:
            return error(str(exc))
        st = await ctx.runtime.stat(path)
        if not st.exists:
            return error(f"{args.path}: no such file (resolved: {path})")
        if st.is_dir:
            return error(f"{args.path} is a directory; list it with bash (ls, find, rg --files).")
        if not st.is_file:
            return error(
                f"{args.path} is {_kind(st.mode)}, not a regular file; file_read refuses it."
            )
        try:
            data = await ctx.runtime.read_bytes(path, limit=READ_WINDOW_BYTES)
        except NotRegularFileError:
            return error(f"{args.path} is not a regular file; file_read refuses it.")
        except IsADirectoryError:
            return error(f"{args.path} is a directory; list it with bash (ls, find, rg --files).")
        except PermissionError:
            return error(f"{args.path}: permission denied")
        except FileNotFoundError:
            return error(f"{args.path}: no such file")
        if not data:
            return ToolResult(output="(empty file)", meta={"path": path, "total_lines": 0})
        reason = _binary_reason(data[:BINARY_SNIFF_BYTES])
        if reason:
            return error(
                f"{args.path} looks like a binary file ({reason}); file_read shows text only. "
                "Inspect it with bash (file, xxd | head, strings)."
            )
        return _render(args, path, data, truncated_file=st.size > len(data))


def __getattr__(name: str) -> Any:
    # `from xum.tools.file_read import FileReadInput` keeps working without pydantic here.
    if name == "FileReadInput":
        from xum.tools.file_read_input import FileReadInput

        return FileReadInput
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def _render(args: FileReadInput, path: str, data: bytes, *, truncated_file: bool) -> ToolResult:
    text = data.decode("utf-8", errors="replace")
    replaced = "\ufffd" in text
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    elif truncated_file:
        lines.pop()  # the window ends mid-line; that line is not whole
    total = len(lines)
    start = args.offset or 1
    if start > total:
        return error(
            f"offset {start} is past the end: {args.path} has {total:,} lines"
            + (" within the first 32 MiB" if truncated_file else "")
        )
    wanted_end = total if args.limit is None else min(total, start + args.limit - 1)
    width = len(str(wanted_end))
    out: list[str] = []
    size = 0
    clipped = 0
    end = start - 1
    for number in range(start, wanted_end + 1):
        line = lines[number - 1].removesuffix("\r")
        if len(line) > MAX_LINE_CHARS:
            more = len(line) - MAX_LINE_CHARS
            line = f"{line[:MAX_LINE_CHARS]}… [line clipped: {more:,} more characters]"
            clipped += 1
        rendered = f"{number:>{width}}\t{line}\n"
        if number - start >= MAX_LINES or (out and size + len(rendered) > MAX_OUTPUT_CHARS):
            break
        out.append(rendered)
        size += len(rendered)
        end = number
    notes: list[str] = []
    of_total = f"{total:,}"
    if truncated_file:
        of_total = f"at least {total:,} (only the first 32 MiB are readable here; use bash beyond)"
    if end < total:
        notes.append(f"[lines {start}–{end} of {of_total}; continue with offset={end + 1}]")
    elif start > 1 or truncated_file:
        notes.append(f"[lines {start}–{end} of {of_total}]")
    if replaced:
        notes.append("[invalid UTF-8 bytes were shown as �]")
    output = "".join(out) + "".join(f"{note}\n" for note in notes)
    return ToolResult(
        output=output.rstrip("\n"),
        meta={
            "path": path,
            "start_line": start,
            "end_line": end,
            "total_lines": total,
            "clipped_lines": clipped,
            "file_truncated": truncated_file,
        },
    )


def _binary_reason(sample: bytes) -> str | None:
    if b"\0" in sample:
        return "it contains NUL bytes"
    # final=False: a multi-byte character cut at the end of the sample is left out, not
    # counted as an error.
    text = codecs.getincrementaldecoder("utf-8")("replace").decode(sample, final=False)
    if not text:
        return None
    odd = sum(1 for ch in text if ch == "\ufffd" or (ch < " " and ch not in _TEXT_CONTROLS))
    if odd / len(text) > BINARY_RATIO:
        return "most of it is not UTF-8 text"
    return None


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    return "not a regular file"
