"""`xum sessions` and `xum session`: sessions recorded by real `xum run`s in two projects, listed
newest first, scoped to the current project unless --all, limited, as JSON; and the newest one
replayed with `xum session last`."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e.cli import env_for, events, run_xum
from tests.gitrepo import APP_AND_BINARY_FILES, make_repo
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM


@pytest.fixture
def projects(fake_llm: FakeLLM, tmp_path: Path) -> dict[str, list[str]]:
    """Two runs in project `alpha`, then one in `beta`; workspace ids per project, oldest first."""
    alpha, beta = (
        make_repo(tmp_path / "alpha", APP_AND_BINARY_FILES),
        make_repo(tmp_path / "beta", APP_AND_BINARY_FILES),
    )
    ids: dict[str, list[str]] = {"alpha": [], "beta": []}
    for name, repo, message in (
        ("alpha", alpha, "first task"),
        ("alpha", alpha, "second task"),
        ("beta", beta, "other project"),
    ):
        fake_llm.script(fakellm.text(f"answer to {message}"))
        result = run_xum("run", "--json", message, cwd=repo, env=env_for(fake_llm))
        assert result.returncode == 0, result.stderr
        ids[name].append(events(result.stdout)[-1]["workspace_id"])
    return ids


def listed(*args: str, cwd: Path) -> list[dict[str, object]]:
    result = run_xum("sessions", "--json", *args, cwd=cwd)
    assert result.returncode == 0, result.stderr
    return events(result.stdout)


def test_sessions_are_listed_newest_first_for_the_current_project(
    projects: dict[str, list[str]], tmp_path: Path
) -> None:
    alpha = tmp_path / "alpha"
    rows = listed(cwd=alpha)
    assert [r["id"] for r in rows] == list(reversed(projects["alpha"]))
    assert {r["project"] for r in rows} == {str(alpha.resolve())}
    newest = rows[0]
    assert newest["title"] == "second task"
    assert newest["turns"] == 1 and newest["last_turn"] == "completed"
    assert isinstance(newest["cost_usd"], float) and newest["cost_usd"] > 0
    assert newest["damaged_frames"] == 0
    # From a subdirectory the project is the same.
    (alpha / "sub").mkdir()
    assert [r["id"] for r in listed(cwd=alpha / "sub")] == [r["id"] for r in rows]


def test_all_and_limit(projects: dict[str, list[str]], tmp_path: Path) -> None:
    everything = listed("--all", cwd=tmp_path / "alpha")
    newest_first = [projects["beta"][0], projects["alpha"][1], projects["alpha"][0]]
    assert [r["id"] for r in everything] == newest_first
    assert [r["id"] for r in listed("--all", "--limit", "2", cwd=tmp_path)] == newest_first[:2]
    assert [r["id"] for r in listed("--limit", "1", cwd=tmp_path / "alpha")] == newest_first[1:2]
    refused = run_xum("sessions", "--limit", "0", cwd=tmp_path)
    assert refused.returncode != 0 and "--limit" in refused.stderr


def test_text_listing_and_an_empty_project(projects: dict[str, list[str]], tmp_path: Path) -> None:
    result = run_xum("sessions", cwd=tmp_path / "beta")
    assert result.returncode == 0, result.stderr
    (line,) = result.stdout.splitlines()
    assert line.startswith(projects["beta"][0]) and "completed" in line and "other project" in line
    empty = make_repo(tmp_path / "gamma", APP_AND_BINARY_FILES)
    none = run_xum("sessions", cwd=empty)
    assert none.returncode == 0 and "no sessions" in none.stdout and "--all" in none.stdout


def test_session_last_replays_the_newest_session_of_the_project(
    projects: dict[str, list[str]], tmp_path: Path
) -> None:
    alpha = tmp_path / "alpha"
    text = run_xum("session", "last", cwd=alpha)
    assert text.returncode == 0, text.stderr
    assert projects["alpha"][1] in text.stdout.splitlines()[0]
    assert "> second task" in text.stdout
    assert "answer to second task" in text.stdout
    assert "── completed ──" in text.stdout

    replay = events(run_xum("session", "last", "--json", cwd=alpha).stdout)
    kinds = [e["type"] for e in replay]
    assert kinds[0] == "turn-start" and kinds[-1] == "turn-end"
    message = next(e for e in replay if e["type"] == "assistant-message")
    assert message["text"] == "answer to second task" and message["step"] == 1
    assert replay[-1]["steps"] == 1 and replay[-1]["cost_usd"] > 0
    by_id = run_xum("session", projects["beta"][0], "--json", cwd=alpha)
    assert any(e.get("text") == "other project" for e in events(by_id.stdout))


def test_session_of_an_unknown_id_is_a_clear_error(tmp_path: Path) -> None:
    result = run_xum("session", "nope", cwd=tmp_path)
    assert result.returncode == 1
    assert "no session 'nope'" in result.stderr and "xum sessions --all" in result.stderr
