"""The Dev Container CLI for the devcontainer runtime's tests.

`devcontainer_tool` (session scope) is the CLI xum would run (`devcontainer_ops.devcontainer_cli`:
`XUM_DEVCONTAINER_CLI`, `devcontainer` on PATH, or the copy `make devcontainer-cli` installs).
Without it the tests skip, saying why, unless `CI` is set (`make test` installs it).
`devcontainer_json(image)` is a config that starts the local test image: no registry, no build.
"""

from __future__ import annotations

import json
import os

import pytest

from xum.core.errors import XumError


@pytest.fixture(scope="session")
def devcontainer_tool() -> str:
    from xum.workspaces.checkouts.devcontainer_ops import devcontainer_cli

    try:
        return devcontainer_cli()
    except XumError as exc:
        if os.environ.get("CI"):
            pytest.fail(f"{exc.message} but CI is set: `make devcontainer-cli` installs it")
        pytest.skip(f"{exc.message}: run `make devcontainer-cli` to run these")


def devcontainer_json(image: str, **fields: object) -> str:
    return json.dumps({"name": "xum test", "image": image, **fields}, indent=2) + "\n"
