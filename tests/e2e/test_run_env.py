"""What a real `xum run` gives the commands it runs and prints around them: the XUM_* variables,
the project found from a subdirectory, the thinking level from the environment, an unpriced
model's unknown cost, and the text renderer's tool and usage lines."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import env_for, events, run_xum
from tests.gitrepo import APP_AND_BINARY_FILES
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

pytestmark = pytest.mark.repo(files=APP_AND_BINARY_FILES)


PRINT_ENV = "env | grep '^XUM_' | sort; echo cwd=$(pwd)"


def env_lines(output: str) -> dict[str, str]:
    return dict(line.split("=", 1) for line in output.splitlines() if "=" in line)


def run_printing_env(
    fake_llm: FakeLLM, *args: str, cwd: Path, env: dict[str, str] | None = None
) -> tuple[dict[str, Any], dict[str, str], list[dict[str, Any]]]:
    """A run whose one tool call prints the XUM_* environment; (final, variables, events)."""
    fake_llm.script(
        fakellm.tool_call("bash", {"script": PRINT_ENV, "display_name": "env"}),
        fakellm.text("Looked."),
    )
    result = run_xum("run", "--json", *args, "show the environment", cwd=cwd, env=env)
    assert result.returncode == 0, result.stderr
    evts = events(result.stdout)
    (shown,) = [e for e in evts if e["type"] == "tool-result"]
    assert not shown["is_error"], shown["output"]
    return evts[-1], env_lines(shown["output"]), evts


def test_commands_see_the_eight_xum_variables(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    final, env, evts = run_printing_env(
        fake_llm, "-m", "anthropic:claude-sonnet-5-5", "-t", "HIGH", cwd=repo, env=env_for(fake_llm)
    )
    first_cost = next(e for e in evts if e["type"] == "assistant-message")["cost_usd"]
    assert env["XUM_PROJECT_PATH"] == str(repo.resolve())
    assert env["XUM_RUNTIME"] == "local"
    assert env["XUM_WORKSPACE_NAME"] == final["workspace_name"]
    assert env["XUM_WORKSPACE_ID"] == final["workspace_id"]
    assert env["XUM_MODEL_STRING"] == "anthropic:claude-sonnet-5-5"
    assert env["XUM_THINKING_LEVEL"] == "high"
    assert env["XUM_COSTS_USD"] == f"{first_cost:.2f}"
    scratch = Path(env["XUM_SCRATCH_DIR"])
    assert scratch == xum_root / "scratch" / final["workspace_id"]
    assert scratch.is_dir()
    assert env["cwd"] == str(repo.resolve())
    assert {k for k in env if k.startswith("XUM_")} >= {
        "XUM_PROJECT_PATH",
        "XUM_RUNTIME",
        "XUM_WORKSPACE_NAME",
        "XUM_WORKSPACE_ID",
        "XUM_MODEL_STRING",
        "XUM_THINKING_LEVEL",
        "XUM_COSTS_USD",
        "XUM_SCRATCH_DIR",
    }


def test_dir_pointing_into_a_repository_uses_its_toplevel(
    fake_llm: FakeLLM, repo: Path, tmp_path: Path
) -> None:
    sub = repo / "pkg" / "inner"
    sub.mkdir(parents=True)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    final, env, _ = run_printing_env(fake_llm, "-d", str(sub), cwd=elsewhere, env=env_for(fake_llm))
    assert env["XUM_PROJECT_PATH"] == str(repo.resolve())
    # A local run works where it was pointed; the project it belongs to is the repository.
    assert final["workspace_path"] == env["cwd"] == str(sub.resolve())
    listed = run_xum("sessions", "--json", cwd=sub)
    assert [row["project"] for row in events(listed.stdout)] == [str(repo.resolve())]


def test_the_thinking_level_comes_from_the_environment_without_t(
    fake_llm: FakeLLM, repo: Path
) -> None:
    env = {**env_for(fake_llm), "XUM_THINKING_LEVEL": "LOW"}
    _, seen, _ = run_printing_env(fake_llm, cwd=repo, env=env)
    assert seen["XUM_THINKING_LEVEL"] == "low"
    assert fake_llm.requests[0].json["output_config"] == {"effort": "low"}  # the default, opus
    # The flag wins over the variable.
    fake_llm.reset()
    _, flagged, _ = run_printing_env(fake_llm, "-t", "high", cwd=repo, env=env)
    assert flagged["XUM_THINKING_LEVEL"] == "high"


def write_local_provider(root: Path, url: str) -> None:
    root.mkdir(mode=0o700, exist_ok=True)
    path = root / "providers.jsonc"
    path.write_text(
        '{"local-llm": {"providerType": "openai-compatible", '
        f'"baseUrl": "{url}", "apiKey": "k", "models": ["house-model"]}}}}'
    )
    path.chmod(0o600)


def test_an_unpriced_model_reports_an_unknown_cost(
    fake_llm: FakeLLM, repo: Path, xum_root: Path
) -> None:
    write_local_provider(xum_root, fake_llm.url)
    fake_llm.script(fakellm.text("Hello from a local model."))
    result = run_xum("run", "--json", "-m", "local-llm:house-model", "hi", cwd=repo)
    assert result.returncode == 0, result.stderr
    evts = events(result.stdout)
    final = evts[-1]
    assert final["type"] == "final" and final["cost_usd"] is None
    assert final["usage"]["output_tokens"] > 0
    assert next(e for e in evts if e["type"] == "turn-end")["cost_usd"] is None

    fake_llm.script(fakellm.text("Again."))
    text = run_xum("run", "-m", "local-llm:house-model", "hi", cwd=repo)
    assert text.returncode == 0, text.stderr
    assert "cost unknown" in text.stderr.splitlines()[-1]


def test_text_mode_prints_the_answer_a_line_per_tool_and_a_usage_line(
    fake_llm: FakeLLM, repo: Path
) -> None:
    fake_llm.script(
        fakellm.tool_call("file_read", {"path": "app.py"}),
        fakellm.tool_call("bash", {"script": "exit 3", "display_name": "fail"}),
        fakellm.text("All done."),
    )
    result = run_xum("run", "check things", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "All done.\n"
    lines = result.stderr.splitlines()
    assert "✓ file_read app.py → ok" in lines
    assert "✗ bash exit 3 → exit 3" in lines
    usage = lines[-1]
    assert re.fullmatch(
        r"completed · 3 steps · [\d,]+ tokens in \(\d+% cached\) · [\d,]+ out · \$\d+\.\d{4} · "
        r"\d+\.\ds",
        usage,
    ), usage
