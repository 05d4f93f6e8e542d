"""Fixtures for the integration tests. Nothing here is autouse."""

from __future__ import annotations

from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import pytest

from tests.support.engine import Harness
from tests.support.web_fetch import serve_pages
from xum.testing.fakellm import FakeLLM


@pytest.fixture
async def harness(fake_llm: FakeLLM, tmp_path: Path) -> AsyncIterator[Harness]:
    """Engine sessions over one log in `tmp_path` (tests.support.engine); modules with a
    harness of another kind define their own."""
    h = Harness(fake_llm, tmp_path)
    yield h
    await h.close()


@pytest.fixture
def web_server() -> Iterator[tuple[int, list[dict[str, str]]]]:
    """A web server on a free loopback port (tests.support.web_fetch): its port and the
    requests it saw."""
    with serve_pages() as served:
        yield served
