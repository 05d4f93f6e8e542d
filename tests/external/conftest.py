"""The real third-party agents these tests run are installed by `make external-agents`
(`make test` does it): without them every test here skips saying so, unless CI is set."""

from __future__ import annotations

import os

import pytest

from xum.testing import external_agents as agents


@pytest.fixture(autouse=True)
def installed() -> None:
    reason = agents.missing_reason()
    if reason is None:
        return
    if os.environ.get("CI"):
        pytest.fail(f"{reason}, but CI is set: `make test` installs them")
    pytest.skip(reason)
