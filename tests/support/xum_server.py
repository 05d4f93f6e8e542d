"""A real `xum server` subprocess on a free port, for tests of clients that attach to one."""

from __future__ import annotations

import os
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager

from tests.e2e.cli import XUM


@contextmanager
def xum_server(*args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """Start `xum server --port 0 ARGS` with the test's XUM_ROOT (plus `env`); yields its URL.
    It is stopped (SIGTERM, then SIGKILL) when the block ends."""
    with xum_server_process(*args, env=env) as (url, _proc):
        yield url


@contextmanager
def xum_server_process(
    *args: str, env: dict[str, str] | None = None
) -> Iterator[tuple[str, subprocess.Popen[str]]]:
    """`xum_server`, yielding the process too (a test that kills it)."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    proc = subprocess.Popen(
        [XUM, "server", "--port", "0", *args],
        env=full_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    first = proc.stdout.readline()
    if "listening on" not in first:
        proc.kill()
        _, err = proc.communicate(timeout=10)
        raise AssertionError(f"server did not start: {first!r} {err}")
    try:
        yield first.split("listening on ", 1)[1].strip(), proc
    finally:
        if proc.poll() is None:
            proc.terminate()
        try:
            proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.communicate(timeout=10)
