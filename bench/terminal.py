"""A program on a pseudo-terminal, for the terminal UI's benchmarks: what it writes is read
by a thread and kept with the time it arrived, so a benchmark can ask when something showed."""

from __future__ import annotations

import fcntl
import os
import struct
import subprocess
import termios
import threading
import time
from pathlib import Path


class Terminal:
    def __init__(
        self, argv: list[str], *, env: dict[str, str], cwd: Path, cols: int = 100, rows: int = 30
    ) -> None:
        master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", rows, cols, 0, 0))
        self.started = time.perf_counter()
        self.proc = subprocess.Popen(
            argv,
            stdin=slave,
            stdout=slave,
            stderr=slave,
            env=env,
            cwd=cwd,
            start_new_session=True,
            close_fds=True,
        )
        os.close(slave)
        self.master = master
        self.output = bytearray()
        self.arrivals: list[tuple[int, float]] = []  # (offset after the chunk, time)
        self._changed = threading.Condition()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        while True:
            try:
                chunk = os.read(self.master, 65536)
            except OSError:
                chunk = b""
            with self._changed:
                if not chunk:
                    self.arrivals.append((-1, time.perf_counter()))
                    self._changed.notify_all()
                    return
                self.output += chunk
                self.arrivals.append((len(self.output), time.perf_counter()))
                self._changed.notify_all()

    def write(self, data: bytes) -> float:
        """Send keys; returns when they were sent."""
        os.write(self.master, data)
        return time.perf_counter()

    def wait_for(self, needle: bytes, start: int = 0, timeout: float = 30.0) -> tuple[int, float]:
        """When `needle` first showed at or after offset `start`: (offset after it, time)."""
        deadline = time.monotonic() + timeout
        with self._changed:
            while True:
                found = self.output.find(needle, start)
                if found >= 0:
                    end = found + len(needle)
                    for offset, at in self.arrivals:
                        if offset >= end:
                            return end, at
                if self.arrivals and self.arrivals[-1][0] == -1:
                    raise RuntimeError(f"the program ended before {needle!r} showed")
                left = deadline - time.monotonic()
                if left <= 0:
                    tail = bytes(self.output[-2000:])
                    raise TimeoutError(f"{needle!r} did not show; last output: {tail!r}")
                self._changed.wait(left)

    @property
    def offset(self) -> int:
        with self._changed:
            return len(self.output)

    def cpu_seconds(self) -> float:
        """User + system CPU time of the program so far (Linux /proc)."""
        fields = Path(f"/proc/{self.proc.pid}/stat").read_text().rsplit(")", 1)[1].split()
        ticks = os.sysconf("SC_CLK_TCK")
        return (int(fields[11]) + int(fields[12])) / ticks

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        os.close(self.master)
