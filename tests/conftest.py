"""Shared fixtures. Every test gets a private $XUM_ROOT and HOME: nothing touches the real ones."""

from __future__ import annotations

import subprocess
from collections.abc import Iterator, Mapping
from pathlib import Path

import pytest

from tests.gitrepo import APP_FILES, make_repo

pytest_plugins = ["xum.testing.pytest_plugin"]

TESTS = Path(__file__).resolve().parent
# The tier of a test is its folder (markers registered in pyproject.toml); the top-level checks
# (layers, parity, suite shape) read files only, so they count as unit tests.
TIERS = frozenset({"unit", "integration", "e2e", "tui", "reliability"})


def tiers_of(path: Path) -> list[str]:
    """The markers a test file gets from where it lives: `make test-fast` selects on them."""
    try:
        parts = path.resolve().relative_to(TESTS).parts
    except ValueError:
        return []
    if len(parts) == 1:
        return ["unit"]
    tier = parts[0]
    if tier not in TIERS:
        return []
    if tier == "e2e" and parts[-1].startswith("test_browser_"):
        return ["e2e", "browser"]
    return [tier]


# The longest single tests (each alone can outlast the rest of a worker's share), started first,
# longest first.
LONG_POLES = ("reliability/test_server_kill9.py", "e2e/test_run_docker.py")


def run_order(items: list[pytest.Item]) -> list[pytest.Item]:
    """The modules of the longest tests first, whole; the rest in collection order.

    pytest-xdist's worksteal hands each worker a contiguous share of this list and lets idle
    workers take the tail of a busy one's share, so a long test late in the list ends the suite
    by itself (the server kill -9 test alone runs 40-90 s). Only those few move: moving every
    slow module to the front ran all the browser tests beside all the container tests at once
    (in both full runs that did, one page's lazily loaded chunk never rendered). Whole modules move, so
    their module-scoped fixtures are still set up once."""

    def rank(item: pytest.Item) -> int:
        path = item.path.as_posix()
        for place, pole in enumerate(LONG_POLES):
            if path.endswith(pole):
                return place
        return len(LONG_POLES)

    return sorted(items, key=rank)  # stable: collection order within a rank


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for name in tiers_of(item.path):
            item.add_marker(name)
    items[:] = run_order(items)


@pytest.fixture(autouse=True)
def xum_root(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> Iterator[Path]:
    home = tmp_path_factory.mktemp("home")
    root = home / ".xum"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setenv("XUM_ROOT", str(root))
    for var in (
        "ANTHROPIC_API_KEY",
        "ANTHROPIC_AUTH_TOKEN",
        "ANTHROPIC_BASE_URL",
        "OPENAI_API_KEY",
        "OPENAI_BASE_URL",
        "OPENAI_ORG_ID",
        "OPENAI_PROJECT_ID",
        "OPENROUTER_API_KEY",
        "DEEPSEEK_API_KEY",
        "XAI_API_KEY",
        "XAI_BASE_URL",
        "GOOGLE_GENERATIVE_AI_API_KEY",
        "GOOGLE_API_KEY",
        "GOOGLE_BASE_URL",
        "MOONSHOT_API_KEY",
        "ZAI_API_KEY",
        "XUM_THINKING_LEVEL",
    ):
        monkeypatch.delenv(var, raising=False)
    yield root


@pytest.fixture
def repo(request: pytest.FixtureRequest, tmp_path: Path) -> Path:
    """A real git repository with one commit on `main` (`tests.gitrepo.make_repo`), at
    `tmp_path/<name>`. A test or a module (`pytestmark`) shapes it with
    `@pytest.mark.repo(files={...}, name="repo", message="init", untracked={...},
    identity=False)`: `files` are committed (default: one app.py), `untracked` are written after
    the commit, and `identity` sets a committer in the repository's own config (for agents that
    commit, HOME being private)."""
    marker = request.node.get_closest_marker("repo")
    options = dict(marker.kwargs) if marker is not None else {}
    files: Mapping[str, str | bytes] = options.pop("files", APP_FILES)
    untracked: Mapping[str, str] = options.pop("untracked", {})
    identity = options.pop("identity", False)
    path = make_repo(
        tmp_path / options.pop("name", "repo"), files, message=options.pop("message", "init")
    )
    if options:
        raise TypeError(f"unknown options of @pytest.mark.repo: {sorted(options)}")
    for name, text in untracked.items():
        (path / name).parent.mkdir(parents=True, exist_ok=True)
        (path / name).write_text(text)
    if identity:
        for key, value in (("user.name", "Test"), ("user.email", "test@example.com")):
            subprocess.run(["git", "config", key, value], cwd=path, check=True)
    return path
