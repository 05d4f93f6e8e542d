"""Ports for tests that publish a workspace's port block on this machine."""

from __future__ import annotations

import random
import socket


def free_block(size: int = 10) -> int:
    """The first of `size` ports free on this machine now, below the ephemeral range. Every
    test's workspaces start at the default base, and a port taken here is (by design) not
    published, so a test that checks publishing picks a block nothing else uses."""
    for _ in range(100):
        base = random.randrange(10_000, 30_000)
        held: list[socket.socket] = []
        try:
            for port in range(base, base + size):
                sock = socket.socket()
                held.append(sock)
                sock.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
        finally:
            for sock in held:
                sock.close()
    raise RuntimeError("no free block of ports found")
