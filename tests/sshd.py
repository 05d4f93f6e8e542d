"""Fixtures for the SSH runtime's tests: a real OpenSSH server on 127.0.0.1.

`sshd` (session scope) starts `xum.testing.sshd.SshServer`: sshd as the current user on a free
loopback port, generated keys, a throwaway config, a remote HOME in a temp directory. `ssh_host`
(function scope) points xum at it through `XUM_SSH_CONFIG` and closes xum's multiplexed
connection after the test. Import both into a test module to use them.

Without sshd the tests skip, saying why, unless `CI` is set: in CI they must run (`make test`
installs openssh-server).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from xum.testing.sshd import SshServer, find_sshd

Sshd = SshServer


@pytest.fixture(scope="session")
def sshd(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SshServer]:
    if find_sshd() is None:
        if os.environ.get("CI"):
            pytest.fail("sshd/ssh not found but CI is set: `make test` installs openssh-server")
        pytest.skip("sshd not found: install openssh-server (make deps-system) to run these")
    with SshServer(tmp_path_factory.mktemp("sshd")) as server:
        yield server


@pytest.fixture
def ssh_host(sshd: SshServer, monkeypatch: pytest.MonkeyPatch) -> Iterator[SshServer]:
    monkeypatch.setenv("XUM_SSH_CONFIG", str(sshd.config))
    yield sshd
    from xum.runtime.ssh import close_master

    close_master(sshd.alias)
