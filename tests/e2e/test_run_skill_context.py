"""`$skill` references and skill dynamic context through the real `xum run`: what the model
receives, what the log keeps, and the gates (the experiment, project trust)."""

from __future__ import annotations

import json
import os
from pathlib import Path

from tests.contextkit import write
from tests.e2e.cli import env_for, events, run_xum
from tests.gitrepo import make_repo
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.workspaces.safety.trust import set_trusted

MODEL = "anthropic:claude-sonnet-5-5"


def skill(repo: Path, name: str, body: str, extra: str = "") -> None:
    write(
        repo / f".xum/skills/{name}/SKILL.md",
        f"---\nname: {name}\ndescription: the {name} skill\n{extra}---\n{body}\n",
    )


def experiments(**switches: bool) -> None:
    root = Path(os.environ["XUM_ROOT"])
    root.mkdir(parents=True, exist_ok=True)
    path = root / "config.json"
    config = json.loads(path.read_text()) if path.exists() else {}
    config["experiments"] = switches
    path.write_text(json.dumps(config))


def sent_text(fake_llm: FakeLLM) -> str:
    text: str = fake_llm.requests[-1].json["messages"][-1]["content"][-1]["text"]
    return text


def run(fake_llm: FakeLLM, repo: Path, message: str) -> list[dict[str, object]]:
    fake_llm.script(fakellm.text("ok"))
    result = run_xum("run", "--json", "-m", MODEL, message, cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 0, result.stderr
    return events(result.stdout)


def test_dollar_references_attach_the_skills_they_name(fake_llm: FakeLLM, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    skill(repo, "deploy", "Deploy with care: $1 stays raw.")
    skill(repo, "style", "Follow the style guide.")
    skill(repo, "hidden", "Not for users.", "user-invocable: false\n")
    typed = "Ship it with $deploy, mind $style and $deploy; not $hidden, $nope, $HOME or `$style`."
    evts = run(fake_llm, repo, typed)
    sent = sent_text(fake_llm)
    assert sent.startswith('<skill name="deploy">\nDeploy with care: $1 stays raw.\n</skill>')
    assert sent.count('<skill name="deploy">') == 1 and sent.count('<skill name="style">') == 1
    assert "Not for users." not in sent
    assert sent.endswith(f"\n\n{typed}")
    user = next(e for e in evts if e["type"] == "user-message")
    assert user["typed"] == typed
    assert user["slash"] == {"kind": "skill-refs", "names": ["deploy", "style"]}


def test_a_message_without_references_is_sent_as_typed(fake_llm: FakeLLM, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    skill(repo, "deploy", "Deploy.")
    evts = run(fake_llm, repo, "costs $5 and uses $PATH and a$deploy")
    assert sent_text(fake_llm) == "costs $5 and uses $PATH and a$deploy"
    user = next(e for e in evts if e["type"] == "user-message")
    assert "slash" not in user


DIRECTIVES = (
    "Context:\n!`echo hello-$1`\n  !`echo broken; exit 3`  \nmid-line !`echo no` stays\nEnd."
)


def test_directives_run_in_a_trusted_project_with_the_experiment(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    skill(repo, "ctx", DIRECTIVES)
    experiments(skillDynamicContext=True)
    set_trusted(repo)
    run(fake_llm, repo, "/ctx world")
    sent = sent_text(fake_llm)
    assert "Context:\n```\nhello-world\n```\n```\nbroken\n[exit code 3]\n```\n" in sent
    assert "mid-line !`echo no` stays" in sent
    # A $reference runs them too, on the raw body (no arguments).
    run(fake_llm, repo, "use $ctx")
    assert "```\nhello-\n```" in sent_text(fake_llm)


def test_directives_stay_text_without_the_experiment_or_trust(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    skill(repo, "ctx", DIRECTIVES)
    run(fake_llm, repo, "/ctx world")
    assert "!`echo hello-world`" in sent_text(fake_llm)  # the experiment is off: plain text
    experiments(skillDynamicContext=True)
    run(fake_llm, repo, "/ctx world")
    sent = sent_text(fake_llm)
    assert "hello-world\n```" not in sent
    assert "[xum: `echo hello-world` was not run: the project is not trusted" in sent


def test_the_model_reading_a_skill_gets_the_raw_body(fake_llm: FakeLLM, tmp_path: Path) -> None:
    repo = make_repo(tmp_path / "repo")
    skill(repo, "ctx", DIRECTIVES)
    experiments(skillDynamicContext=True)
    set_trusted(repo)
    fake_llm.script(
        fakellm.tool_call("agent_skill_read", {"name": "ctx"}),
        fakellm.text("read it"),
    )
    result = run_xum("run", "--json", "-m", MODEL, "go", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 0, result.stderr
    read = next(e for e in events(result.stdout) if e["type"] == "tool-result")
    assert "!`echo hello-$1`" in str(read["output"]) and "hello-\n" not in str(read["output"])


def test_directive_output_is_masked_and_sandboxed(fake_llm: FakeLLM, tmp_path: Path) -> None:
    from xum.runtime.sandbox import local_backend

    repo = make_repo(tmp_path / "repo")
    skill(
        repo,
        "ctx",
        "!`echo token=$DEPLOY_TOKEN`\n!`touch .xum/probe && echo wrote || echo refused`",
    )
    experiments(skillDynamicContext=True)
    set_trusted(repo)
    secrets = Path(os.environ["XUM_ROOT"]) / "secrets.json"
    secrets.write_text(json.dumps({str(repo): {"DEPLOY_TOKEN": "s3cr3t-value-123"}}))
    secrets.chmod(0o600)
    run(fake_llm, repo, "/ctx")
    sent = sent_text(fake_llm)
    assert "token=[secret:DEPLOY_TOKEN]" in sent and "s3cr3t-value-123" not in sent
    if local_backend().ok:  # the sandbox keeps .xum/ read-only, as for the agent's bash
        assert "refused" in sent and not (repo / ".xum/probe").exists()


def test_a_sub_agents_prompt_runs_no_skill_commands(fake_llm: FakeLLM, tmp_path: Path) -> None:
    from tests.support.subagents import Agents, call

    repo = make_repo(tmp_path / "repo")
    marker = tmp_path / "ran"
    skill(repo, "ctx", f"!`touch {marker}`")
    experiments(skillDynamicContext=True)
    set_trusted(repo)
    routes = Agents()
    routes.add(
        "PARENT",
        fakellm.reply(
            call(
                "task",
                agentId="exec",
                title="child",
                prompt="CHILD: use $ctx",
                isolation="none",  # the parent's checkout, where the (uncommitted) skill is
            )
        ),
        fakellm.text("parent done"),
    )
    routes.add("CHILD", fakellm.text("child done"))
    fake_llm.set_responder(routes)
    result = run_xum("run", "--json", "-m", MODEL, "PARENT", cwd=repo, env=env_for(fake_llm))
    assert result.returncode == 0, result.stderr
    child = routes.requests_of(fake_llm, "CHILD")
    assert child and f"!`touch {marker}`" in str(child[0].json["messages"])
    assert not marker.exists()
