"""`probe_engine`, what the new-workspace dialogs ask before they offer Docker: available when
the container CLI reaches its engine (naming both), not when the CLI is missing or its engine
does not answer (a remote engine that is down), each time saying why."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.containers import Engine, container_engine, container_image  # noqa: F401
from xum.runtime.container_engine import probe_engine


def test_a_missing_cli_is_no_engine(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XUM_CONTAINER_CLI", str(tmp_path / "no-such-cli"))
    found = probe_engine()
    assert not found.available and found.cli is None
    assert found.problem is not None and "no-such-cli" in found.problem


@pytest.mark.slow
def test_the_engine_answers_and_a_dead_remote_does_not(
    container_engine: Engine,  # noqa: F811
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    found = probe_engine()
    assert found.available and found.cli == container_engine.cli
    assert found.version and found.version[0].isdigit()
    # The CLI's own remote settings count: an engine that is not there is not offered.
    variable = "CONTAINER_HOST" if container_engine.cli == "podman" else "DOCKER_HOST"
    monkeypatch.setenv(variable, f"unix://{tmp_path / 'nothing.sock'}")
    down = probe_engine()
    assert not down.available and down.cli == container_engine.cli
    assert down.problem is not None and "cannot reach its engine" in down.problem
