"""A throwaway OpenSSH server on 127.0.0.1, for the SSH runtime's tests and benchmarks.

`SshServer(base_dir)` starts `sshd -D` as the current user on a free loopback port, with
generated host and client keys, a private `sshd_config` (no PAM, key auth only, `StrictModes no`,
its own authorized_keys and pid file) and an `ssh_config` naming it `xum-test`. The remote
side's HOME is `<base_dir>/remote-home` (`SetEnv HOME=...`), so remote checkouts land there. It
accepts `XUM_TEST_*` and credential-shaped variables from clients (`AcceptEnv`), so a test can
check with `SendEnv` what xum's ssh clients would forward (the generated client config sends
nothing).
Point xum at it with `XUM_SSH_CONFIG=<server.config>` and the host `server.alias`.
"""

from __future__ import annotations

import contextlib
import getpass
import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

ALIAS = "xum-test"

# sshd runs under a reaping subreaper: see xum.testing.subreaper for the wait it saves.
REAPER = (sys.executable, "-m", "xum.testing.subreaper")


def find_sshd() -> str | None:
    """The sshd binary, or None (then the SSH tests skip, or fail in CI)."""
    if shutil.which("ssh") is None or shutil.which("ssh-keygen") is None:
        return None
    for candidate in ("/usr/sbin/sshd", shutil.which("sshd")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _keygen(path: Path) -> None:
    subprocess.run(
        ["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(path)],
        check=True,
        capture_output=True,
    )


class SshServer:
    def __init__(self, base_dir: Path, alias: str = ALIAS) -> None:
        self.base = base_dir
        self.alias = alias
        self.remote_home = base_dir / "remote-home"
        self.config = base_dir / "ssh_config"
        self.port = 0
        self._proc: subprocess.Popen[bytes] | None = None

    def env(self) -> dict[str, str]:
        return {"XUM_SSH_CONFIG": str(self.config)}

    def start(self) -> SshServer:
        binary = find_sshd()
        if binary is None:
            raise FileNotFoundError("sshd not found: install openssh-server")
        base = self.base
        base.mkdir(parents=True, exist_ok=True)
        self.remote_home.mkdir(exist_ok=True)
        _keygen(base / "host_key")
        _keygen(base / "client_key")
        (base / "authorized_keys").write_text((base / "client_key.pub").read_text())
        if os.geteuid() == 0:
            os.makedirs("/run/sshd", mode=0o755, exist_ok=True)  # privilege separation dir
        self.port = port = _free_port()
        (base / "sshd_config").write_text(
            f"Port {port}\nListenAddress 127.0.0.1\nHostKey {base}/host_key\n"
            f"PidFile {base}/sshd.pid\nAuthorizedKeysFile {base}/authorized_keys\n"
            "UsePAM no\nStrictModes no\nPasswordAuthentication no\n"
            "KbdInteractiveAuthentication no\nPubkeyAuthentication yes\n"
            "PermitRootLogin prohibit-password\nAllowAgentForwarding no\nX11Forwarding no\n"
            f"MaxSessions 64\nMaxStartups 64\nSetEnv HOME={self.remote_home}\n"
            "AcceptEnv XUM_TEST_* *_API_KEY *_AUTH_TOKEN\n"
        )
        kind, key = (base / "host_key.pub").read_text().split()[:2]
        (base / "known_hosts").write_text(f"[127.0.0.1]:{port} {kind} {key}\n")
        self.config.write_text(
            f"Host {self.alias}\n  HostName 127.0.0.1\n  Port {port}\n"
            f"  User {getpass.getuser()}\n  IdentityFile {base}/client_key\n"
            f"  IdentitiesOnly yes\n  UserKnownHostsFile {base}/known_hosts\n"
            "  StrictHostKeyChecking yes\n  LogLevel ERROR\n"
        )
        with open(base / "sshd.log", "wb") as log:
            self._proc = subprocess.Popen(
                [*REAPER, binary, "-D", "-e", "-f", str(base / "sshd_config")],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        deadline = time.monotonic() + 10
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return self
            except OSError:
                if self._proc.poll() is not None or time.monotonic() > deadline:
                    self.stop()
                    log_text = (base / "sshd.log").read_text(errors="replace")
                    raise RuntimeError(f"sshd did not start: {log_text}") from None
                time.sleep(0.02)

    def stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        proc.terminate()
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(timeout=5)
        if proc.poll() is None:
            proc.kill()
            proc.wait()

    def __enter__(self) -> SshServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
