"""Podman's API service (`podman system service`) on a socket of the test's own, the remote
engine the Docker runtime's remote tests reach through `CONTAINER_HOST` (`unix://` directly,
or `ssh://` through the loopback sshd)."""

from __future__ import annotations

import os
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def podman_api_service(socket: Path, env: dict[str, str]) -> Iterator[Path]:
    """Serve podman's API on `socket` (as the current user, with `env` added to the
    environment: the tests' containers.conf) until the block ends; yields the socket."""
    service = subprocess.Popen(
        ["podman", "system", "service", "--time=0", f"unix://{socket}"],
        env={**os.environ, **env},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        for _ in range(200):  # bounded: the socket appears when the service listens
            if socket.exists() or service.poll() is not None:
                break
            time.sleep(0.05)
        assert socket.exists(), "podman system service did not start"
        yield socket
    finally:
        service.terminate()
        try:
            service.wait(timeout=20)
        except subprocess.TimeoutExpired:
            service.kill()
            service.wait()
