"""Fixtures for the integration tests. Nothing here is autouse."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.gitrepo import make_repo


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A git repository of one commit (`make_repo`); modules that need another override it."""
    return make_repo(tmp_path / "repo")
