"""Small real images for the image tests, built in memory (no binary files in the tree)."""

from __future__ import annotations

import struct
import zlib


def png(width: int = 2, height: int = 2, *, padding: int = 0) -> bytes:
    """A valid RGB PNG of `width` x `height`; `padding` bytes of an extra ancillary chunk make
    it as large as a test needs (a size bound) without changing the picture."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)
    rows = b"".join(b"\x00" + b"\xff\x00\x00" * width for _ in range(height))
    extra = chunk(b"teXt", b"pad\x00" + b"x" * padding) if padding else b""
    return (
        b"\x89PNG\r\n\x1a\n"
        + chunk(b"IHDR", header)
        + extra
        + chunk(b"IDAT", zlib.compress(rows))
        + chunk(b"IEND", b"")
    )


SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'
