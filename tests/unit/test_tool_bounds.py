"""Head/tail bounding: exact accounting, clean cuts, spill only when needed, spill cap."""

from __future__ import annotations

from pathlib import Path

from xum.runtime.local import LocalRuntime
from xum.tools.bounds import HeadTailCapture, bound_text


def capture(tmp_path: Path, **kwargs: int) -> HeadTailCapture:
    return HeadTailCapture(tmp_path / "spill" / "out.log", **kwargs)


def test_small_output_is_whole_and_never_spilled(tmp_path: Path) -> None:
    cap = capture(tmp_path, head_bytes=10, tail_bytes=10)
    for piece in (b"hello ", b"world", b"!"):
        cap.feed(piece)
    cap.close()
    assert cap.render() == "hello world!"
    assert not cap.truncated and cap.spill_path_if_any() is None
    assert not (tmp_path / "spill").exists()


def test_large_output_keeps_head_and_tail_and_spills_all(tmp_path: Path) -> None:
    cap = capture(tmp_path, head_bytes=100, tail_bytes=100)
    data = b"".join(b"line %04d\n" % i for i in range(1000))
    for i in range(0, len(data), 7):  # odd chunk sizes
        cap.feed(data[i : i + 7])
    cap.close()
    text = cap.render()
    assert text.startswith("line 0000\n") and text.endswith("line 0999\n")
    assert "bytes omitted; full output: " in text
    assert Path(cap.spill_path_if_any() or "").read_bytes() == data
    head, _, rest = text.partition("[... ")
    tail = rest.split("\n", 1)[1]
    omitted = int(rest.split(" bytes")[0].replace(",", ""))
    assert omitted + len(head) + len(tail) == len(data)


def test_cuts_never_split_a_utf8_character(tmp_path: Path) -> None:
    cap = capture(tmp_path, head_bytes=9, tail_bytes=9)
    cap.feed(("é" * 50).encode())
    cap.close()
    text = cap.render()
    assert "\ufffd" not in text
    assert text.startswith("éééé\n[...") and text.endswith("\néééé")


def test_spill_is_capped_and_says_so(tmp_path: Path) -> None:
    cap = capture(tmp_path, head_bytes=10, tail_bytes=10, spill_cap=100)
    cap.feed(b"a" * 150)
    cap.feed(b"b" * 50)
    cap.close()
    spilled = Path(cap.spill_path_if_any() or "").read_bytes()
    assert spilled.startswith(b"a" * 100)
    assert b"spill file capped; 100 more bytes dropped" in spilled
    assert "first 100 bytes in: " in cap.render()
    assert cap.render().endswith("b" * 10)


async def test_bound_text(tmp_path: Path) -> None:
    runtime = LocalRuntime(str(tmp_path), str(tmp_path))
    short, path = await bound_text(
        "short",
        runtime=runtime,
        scratch_dir=str(tmp_path),
        suffix=".md",
        head_bytes=8,
        tail_bytes=8,
    )
    assert (short, path) == ("short", None)
    long, path = await bound_text(
        "x" * 100,
        runtime=runtime,
        scratch_dir=str(tmp_path),
        suffix=".md",
        head_bytes=8,
        tail_bytes=8,
    )
    assert path is not None and path.endswith(".md") and Path(path).read_text() == "x" * 100
    assert long.startswith("xxxxxxxx\n[... 84 bytes omitted")
