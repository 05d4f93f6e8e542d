"""A Dev Container's `userEnvProbe`: the environment the remote user's shell sets up.

The Dev Container spec lets a devcontainer.json say how the user's environment is found:
`userEnvProbe` is `none`, `loginShell`, `interactiveShell` or `loginInteractiveShell` (the
default). `devcontainer exec` starts that shell (the user's login shell from the passwd
database, else `/bin/sh`; `-l`, `-i` or `-li`) and reads its environment, so a PATH or a variable
set by `/etc/profile.d`, `~/.profile` or `~/.bashrc` reaches every command. xum runs commands with
the engine's own `exec` (see `runtime.devcontainer`), so it runs the probe itself, once, right
after `up`, as the remote user, bounded by a timeout, and keeps what it found in the record;
every command gets it below the config's `remoteEnv` (which wins).

What the shell prints itself (a greeting in `.bashrc`) is set apart by a random marker around
the environment. Left out: variables that describe the probe's own process (`PWD`, `SHLVL`,
`_`, ...), xum's per-command variables (`XUM_*`), and any name xum treats as its own secret
(`core.ownsecrets`). A probe that fails or runs past its time is logged and gives nothing: the
workspace is made anyway, as `devcontainer exec` goes on without it.
"""

from __future__ import annotations

import logging
import os
import subprocess

from xum.core.ownsecrets import without_own_secrets
from xum.runtime.container import ContainerError
from xum.workspaces.checkouts.container_ops import exec_sh

log = logging.getLogger(__name__)

PROBE_TIMEOUT_S = 20.0
DEFAULT_MODE = "loginInteractiveShell"
# The shell options of each mode (`none`: no probe).
MODES = {
    "none": None,
    "loginShell": "-l",
    "interactiveShell": "-i",
    "loginInteractiveShell": "-li",
}
# The probe's own process, not the user's environment.
_PROCESS_KEYS = frozenset({"PWD", "OLDPWD", "SHLVL", "_", "PS1", "PS2", "HOSTNAME"})

# Finds the user's login shell (passwd database, else /etc/passwd, else /bin/sh) and runs it in
# the mode's options; the environment between two markers, NUL-separated.
_PROBE = r"""
u=$(id -un 2>/dev/null)
s=$(getent passwd "$u" 2>/dev/null | cut -d: -f7)
[ -n "$s" ] || s=$(grep "^$u:" /etc/passwd 2>/dev/null | cut -d: -f7)
[ -n "$s" ] && [ -x "$s" ] || s=/bin/sh
exec "$s" "$1" -c 'printf %s "$0"; cat /proc/self/environ; printf %s "$0"' "$2" </dev/null
"""


def probe_mode(merged: dict[str, object]) -> str:
    """The config's `userEnvProbe` (the merged configuration's), or the spec's default; an
    unknown value counts as the default."""
    found = merged.get("userEnvProbe")
    return found if isinstance(found, str) and found in MODES else DEFAULT_MODE


def probe_env(engine: str, container: str, user: str | None, mode: str) -> dict[str, str]:
    """The environment the remote user's shell sets up in `mode` (see the module docstring);
    {} for `none` or when the probe fails."""
    options = MODES.get(mode)
    if options is None:
        return {}
    marker = f"XUM-PROBE-{os.urandom(8).hex()}"
    try:
        done = exec_sh(
            engine, container, _PROBE, options, marker, user=user, timeout_s=PROBE_TIMEOUT_S
        )
    except (ContainerError, subprocess.TimeoutExpired) as exc:
        log.warning("userEnvProbe (%s) in %s did not finish: %s", mode, container, exc)
        return {}
    parts = done.stdout.split(marker.encode())
    if done.returncode != 0 or len(parts) < 3:
        said = done.stderr.decode(errors="replace").strip().splitlines()
        log.warning(
            "userEnvProbe (%s) in %s failed: %s",
            mode,
            container,
            said[-1] if said else f"exit {done.returncode}",
        )
        return {}
    env: dict[str, str] = {}
    for item in parts[1].split(b"\0"):
        name, sep, value = item.decode(errors="replace").partition("=")
        if sep and name and name not in _PROCESS_KEYS and not name.startswith("XUM_"):
            env[name] = value
    return without_own_secrets(env)


__all__ = ["DEFAULT_MODE", "MODES", "probe_env", "probe_mode"]
