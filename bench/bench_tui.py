"""The terminal UI on a real pseudo-terminal (`xum` alone, as a user starts it):

- first frame: process start to the first frame being written (its status line), against a
  bare Textual app (a text area and two labels) and `python -c pass` measured in the same run;
- keystroke to echo: a key written to the terminal until the frame showing it comes back, idle;
- five workspaces streaming at once (the fake LLM sends each reply in small deltas at about
  100 a second, roughly a fast model's pace): the xum process's CPU use (100% is one core
  saturated), and keystroke-to-echo latency meanwhile.

Medians (and p95 for latencies) over several runs.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.terminal import Terminal
from bench.util import git_repo, median_ms, percentile
from xum.testing import fakellm

XUM = str(Path(sys.executable).with_name("xum"))
STARTS = 7
KEYS = 30
WORKSPACES = 5
STREAM_CHARS = 12_000  # per reply: 3,000 deltas of 4 characters, 10 ms apart (~30 s)
CPU_WINDOW_S = 5.0
ECHO = "ж".encode()  # a character no escape sequence contains
CTRL_UP = b"\x1b[1;5A"

HELLO = """
from textual.app import App
from textual.widgets import Static, TextArea


class Hello(App):
    def compose(self):
        yield Static("hello")
        yield TextArea()
        yield Static("F1 help")


Hello().run()
"""


def _env(root: Path, base_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    env.update(
        XUM_ROOT=str(root / "xum-root"),
        HOME=str(root),
        TERM="xterm-256color",
        ANTHROPIC_API_KEY="bench",
        ANTHROPIC_BASE_URL=base_url,
    )
    env.pop("NO_COLOR", None)
    return env


def _first_frame(argv: list[str], env: dict[str, str], cwd: Path) -> float:
    term = Terminal(argv, env=env, cwd=cwd)
    try:
        _, at = term.wait_for(b"F1 help")
        return at - term.started
    finally:
        term.close()


def _echo(term: Terminal, typed: int) -> float:
    """Write one more ECHO character; the time until a frame shows `typed + 1` of them."""
    start = term.offset
    sent = term.write(ECHO)
    _, at = term.wait_for(ECHO * (typed + 1), start)
    return at - sent


def _echoes(term: Terminal, count: int) -> list[float]:
    samples = [_echo(term, i) for i in range(count)]
    term.write(b"\x15")  # Ctrl+U: clear the composer again
    return samples


def run() -> dict[str, object]:
    with tempfile.TemporaryDirectory() as tmp, fakellm.FakeLLM() as server:
        root = Path(tmp)
        repo = git_repo(root, branch="main")
        env = _env(root, server.url)
        hello = root / "hello.py"
        hello.write_text(HELLO)
        python = []
        for _ in range(STARTS):
            began = time.perf_counter()
            subprocess.run([sys.executable, "-c", "pass"], check=True)
            python.append(time.perf_counter() - began)
        bare = [_first_frame([sys.executable, str(hello)], env, repo) for _ in range(STARTS)]
        frames = [_first_frame([XUM], env, repo) for _ in range(STARTS)]

        server.set_default(fakellm.text("x" * STREAM_CHARS, chunk_size=4, delay=0.01))
        term = Terminal([XUM], env=env, cwd=repo)
        try:
            term.wait_for(b"F1 help")
            idle = _echoes(term, KEYS)
            for i in range(WORKSPACES):
                if i:
                    start = term.offset
                    term.write(CTRL_UP)  # to the new-workspace row
                    term.wait_for(b"Enter starts it", start)
                term.write(f"stream {i}".encode())
                term.write(b"\r")
                server.wait_for_requests(i + 1, timeout=30)
            cpu0, wall0 = term.cpu_seconds(), time.perf_counter()
            time.sleep(CPU_WINDOW_S)
            cpu1, wall1 = term.cpu_seconds(), time.perf_counter()
            busy = _echoes(term, KEYS)
            still_streaming = term.proc.poll() is None
        finally:
            term.close()
    first = median_ms(frames)
    return {
        "starts": STARTS,
        "python_c_pass_ms": median_ms(python),
        "textual_bare_app_first_frame_ms": median_ms(bare),
        "xum_first_frame_ms": first,
        "xum_first_frame_over_bare_textual": round(first / median_ms(bare), 2),
        "keystroke_echo_idle_ms": {
            "median": median_ms(idle),
            "p95": round(percentile(idle, 95) * 1000, 3),
        },
        "five_workspaces_streaming": {
            "cpu_percent_of_one_core": round(100 * (cpu1 - cpu0) / (wall1 - wall0), 1),
            "window_s": CPU_WINDOW_S,
            "keystroke_echo_ms": {
                "median": median_ms(busy),
                "p95": round(percentile(busy, 95) * 1000, 3),
            },
            "process_alive": still_streaming,
        },
        "load_average": os.getloadavg()[0],
        "stdev_first_frame_ms": round(statistics.pstdev(frames) * 1000, 1),
    }
