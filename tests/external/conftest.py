"""The real third-party agents these tests run are installed by `make external-agents`
(`make test` does it): without them every test here skips saying so, unless CI is set."""

from __future__ import annotations

import pytest

from tests.support.real_agents import skip_without_agents


@pytest.fixture(autouse=True)
def installed() -> None:
    skip_without_agents()
