"""The sandbox's settings (config.json `sandbox`, `--sandbox`) and the PATH scan for `bwrap`:
what a session needs when it starts, apart from the bubblewrap machinery in
`xum.runtime.sandbox`, which loads with the first sandboxed command."""

from __future__ import annotations

import os
import threading
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Literal

SandboxMode = Literal["auto", "workspace-write", "read-only", "off"]
EgressMode = Literal["shared", "off"]
SANDBOX_MODES: tuple[SandboxMode, ...] = ("auto", "workspace-write", "read-only", "off")
EGRESS_MODES: tuple[EgressMode, ...] = ("shared", "off")

BWRAP = "bwrap"
INSTALL_HINT = (
    "install bubblewrap (Debian/Ubuntu: `sudo apt-get install bubblewrap`, Fedora: "
    "`sudo dnf install bubblewrap`, Arch: `sudo pacman -S bubblewrap`); if it is installed but "
    "fails, unprivileged user namespaces may be switched off (sysctl "
    "kernel.unprivileged_userns_clone=1)"
)


@dataclass(frozen=True, slots=True)
class SandboxSettings:
    """The user's choice (config.json `sandbox`, or a flag). `writable`: granted folders,
    absolute."""

    mode: SandboxMode = "auto"
    egress: EgressMode = "shared"
    writable: tuple[str, ...] = ()
    private_tmp: bool = False  # /tmp is the command's own directory, not the host's


def parse_settings(raw: object) -> SandboxSettings:
    """config.json's `sandbox` object; ValueError saying what is wrong with it."""
    if raw is None:
        return SandboxSettings()
    if not isinstance(raw, Mapping):
        raise ValueError('"sandbox" must be an object such as {"mode": "auto"}')
    unknown = sorted(set(raw) - {"mode", "egress", "writable", "privateTmp"})
    if unknown:
        raise ValueError(f'"sandbox" has unknown keys: {", ".join(unknown)}')
    mode = raw.get("mode", "auto")
    if mode not in SANDBOX_MODES:
        raise ValueError(f'"sandbox.mode" must be one of {", ".join(SANDBOX_MODES)}, not {mode!r}')
    egress = raw.get("egress", "shared")
    if egress not in EGRESS_MODES:
        raise ValueError(f'"sandbox.egress" must be "shared" or "off", not {egress!r}')
    writable = raw.get("writable", [])
    if not isinstance(writable, list) or not all(isinstance(p, str) and p for p in writable):
        raise ValueError('"sandbox.writable" must be a list of folder paths')
    folders: list[str] = []
    for path in writable:
        expanded = os.path.expanduser(path)
        if not os.path.isabs(expanded):
            raise ValueError(f'"sandbox.writable": {path!r} is not an absolute path (or ~/...)')
        folders.append(os.path.normpath(expanded))
    private_tmp = raw.get("privateTmp", False)
    if not isinstance(private_tmp, bool):
        raise ValueError('"sandbox.privateTmp" must be true or false')
    return SandboxSettings(
        mode=mode, egress=egress, writable=tuple(folders), private_tmp=private_tmp
    )


def find_bwrap() -> str | None:
    """The `bwrap` on PATH (a plain scan: no subprocess, cheap enough for start-up)."""
    for directory in os.environ.get("PATH", os.defpath).split(os.pathsep):
        candidate = os.path.join(directory or ".", BWRAP)
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


_probe_started = False


def probe_soon(gate: threading.Event, wait_s: float) -> None:
    """Find out whether bubblewrap works (`xum.runtime.sandbox.local_backend`: one short
    `bwrap ... true`, once per process) on a daemon thread once `gate` is set (or `wait_s`
    passed), so the first sandboxed command does not wait for that process. Once per process
    (later sessions find the answer, or their first command probes a bwrap PATH now names).
    The thread loads the sandbox module itself: nothing of it is imported here."""
    global _probe_started
    if _probe_started:
        return
    _probe_started = True

    def work() -> None:
        gate.wait(wait_s)
        from xum.runtime.sandbox import local_backend

        local_backend()

    threading.Thread(target=work, name="xum-prewarm-sandbox", daemon=True).start()


_helper_started = False


def helper_soon(gate: threading.Event, wait_s: float) -> None:
    """Start the command helper (`xum.runtime.reaper`, through which unsandboxed commands run)
    on a daemon thread once `gate` is set (or `wait_s` passed), so the first such command does
    not wait for a Python interpreter to start (tens of milliseconds). Once per process; the
    thread loads the helper's module itself: nothing of it is imported here."""
    global _helper_started
    if _helper_started:
        return
    _helper_started = True

    def work() -> None:
        gate.wait(wait_s)
        from xum.runtime.reaper import start_early

        start_early()

    threading.Thread(target=work, name="xum-prewarm-helper", daemon=True).start()
