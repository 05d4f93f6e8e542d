"""file_read: numbered, bounded, honest about what it showed; refuses what is not text."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from tests.support.tools import make_ctx
from xum.tools.file_read import MAX_LINE_CHARS, MAX_LINES, FileReadInput, FileReadTool


async def read(ctx: object, path: str, offset: int | None = None, limit: int | None = None):  # type: ignore[no-untyped-def]
    return await FileReadTool().run(FileReadInput(path=path, offset=offset, limit=limit), ctx)  # type: ignore[arg-type]


async def test_numbered_lines_of_a_small_file(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    Path(ctx.runtime.workspace_path, "a.py").write_text("one\ntwo\r\nthree")
    result = await read(ctx, "a.py")
    assert not result.is_error
    assert result.output == "1\tone\n2\ttwo\n3\tthree"
    assert result.meta["total_lines"] == 3


async def test_long_file_is_capped_with_a_sentinel(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    Path(ctx.runtime.workspace_path, "big.txt").write_text(
        "".join(f"l{i}\n" for i in range(1, 9877))
    )
    result = await read(ctx, "big.txt")
    lines = result.output.splitlines()
    assert len(lines) == MAX_LINES + 1
    assert lines[0].split("\t") == ["   1", "l1"]
    assert lines[-1] == "[lines 1–2000 of 9,876; continue with offset=2001]"
    page = await read(ctx, "big.txt", offset=9870)
    assert page.output.splitlines()[-1] == "[lines 9870–9876 of 9,876]"
    window = await read(ctx, "big.txt", offset=10, limit=5)
    assert window.output.splitlines() == [
        "10\tl10",
        "11\tl11",
        "12\tl12",
        "13\tl13",
        "14\tl14",
        "[lines 10–14 of 9,876; continue with offset=15]",
    ]
    past = await read(ctx, "big.txt", offset=20000)
    assert past.is_error and "9,876 lines" in past.output


async def test_output_size_cap_and_long_lines(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    Path(ctx.runtime.workspace_path, "wide.txt").write_text(("x" * 5000 + "\n") * 100)
    result = await read(ctx, "wide.txt")
    assert len(result.output) < 70 * 1024
    first = result.output.splitlines()[0]
    assert first.endswith(f"… [line clipped: {5000 - MAX_LINE_CHARS:,} more characters]")
    assert "continue with offset=" in result.output.splitlines()[-1]


async def test_binary_files_are_refused(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    Path(ctx.runtime.workspace_path, "img.png").write_bytes(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR")
    result = await read(ctx, "img.png")
    assert result.is_error and "binary" in result.output and "NUL" in result.output
    Path(ctx.runtime.workspace_path, "noise.bin").write_bytes(bytes(range(128, 256)) * 20)
    assert "binary" in (await read(ctx, "noise.bin")).output


async def test_mostly_text_with_a_bad_byte_is_shown_with_replacement(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    Path(ctx.runtime.workspace_path, "latin.txt").write_bytes(b"caf\xe9 au lait\nplain line\n")
    result = await read(ctx, "latin.txt")
    assert not result.is_error
    assert "caf\ufffd au lait" in result.output
    assert "invalid UTF-8" in result.output


async def test_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    os.mkfifo(Path(ctx.runtime.workspace_path, "pipe"))
    result = await asyncio.wait_for(read(ctx, "pipe"), 5)
    assert result.is_error and "FIFO" in result.output


async def test_directory_device_missing_and_empty(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    assert "is a directory" in (await read(ctx, ".")).output
    assert "character device" in (await read(ctx, "/dev/null")).output
    missing = await read(ctx, "nope.txt")
    assert missing.is_error and "no such file" in missing.output
    Path(ctx.runtime.workspace_path, "empty").write_text("")
    assert (await read(ctx, "empty")).output == "(empty file)"
    assert "NUL" in (await read(ctx, "a\0b")).output


async def test_reads_outside_the_workspace_are_allowed(tmp_path: Path) -> None:
    ctx = make_ctx(tmp_path)
    outside = tmp_path / "elsewhere.txt"
    outside.write_text("shared notes\n")
    result = await read(ctx, str(outside))
    assert result.output == "1\tshared notes"
    result = await read(ctx, "../elsewhere.txt")
    assert result.output == "1\tshared notes"
