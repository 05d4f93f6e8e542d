"""pytest plugin: the `fake_llm` fixture (register with
`pytest_plugins = ["xum.testing.pytest_plugin"]`)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from xum.testing.fakellm import FakeLLM


@pytest.fixture
def fake_llm(request: pytest.FixtureRequest) -> Iterator[FakeLLM]:
    """A started `FakeLLM` on 127.0.0.1, stopped after the test. The server's own complaints
    (no reply left, wire mismatch, rejected requests) are attached to the test's report."""
    server = FakeLLM().start()
    try:
        yield server
    finally:
        server.stop()
        if server.errors:
            request.node.add_report_section("teardown", "fakellm", "\n".join(server.errors))
