"""xum's own secrets (provider keys, the server token) never reach an agent command or a hook,
and are masked wherever project secrets are: on the local, worktree and SSH runtimes, in tool
hooks and the init hook, and through the server (docs/secrets-and-trust.md)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.sshd import Sshd, ssh_host, sshd  # noqa: F401 - fixtures
from tests.support.hooks import bash, harness, hook, sh_git
from xum.core import ownsecrets
from xum.store.secrets import set_project_secret
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM
from xum.workspaces import lifecycle
from xum.workspaces.safety.masking import SecretMasker
from xum.workspaces.safety.trust import set_trusted

pytestmark = pytest.mark.repo(name="proj", files={"app.py": "x = 1\n"}, message="first")


PROVIDER_KEY = "sk-ant-own-0123456789abcdef"
SERVER_TOKEN = "server-token-0123456789abcdef"
OTHER_KEY = "custom-key-0123456789abcdef"
FILE_KEY = "file-key-0123456789abcdef"
INLINE_KEY = "inline-key-0123456789abcdef"
# Prints each variable's value (empty when absent) and proves the values arrived some other way
# by reading them from a file the command is given.
PROBE = (
    'echo "anthropic=[$ANTHROPIC_API_KEY] token=[$XUM_SERVER_AUTH_TOKEN] other=[$OTHER_API_KEY]";'
    " cat leak.txt"
)


@pytest.fixture
def own_secrets(monkeypatch: pytest.MonkeyPatch, xum_root: Path, tmp_path: Path) -> dict[str, str]:
    """xum holds a provider key and a server token in its environment, a custom provider's key
    in providers.jsonc and another behind an apiKeyFile."""
    monkeypatch.setenv("ANTHROPIC_API_KEY", PROVIDER_KEY)
    monkeypatch.setenv("XUM_SERVER_AUTH_TOKEN", SERVER_TOKEN)
    monkeypatch.setenv("OTHER_API_KEY", OTHER_KEY)
    key_file = tmp_path / "deepseek.key"
    key_file.write_text(FILE_KEY + "\n")
    xum_root.mkdir(exist_ok=True, mode=0o700)
    (xum_root / "providers.jsonc").write_text(
        f'{{"openai": {{"apiKey": "{INLINE_KEY}"}}, "deepseek": {{"apiKeyFile": "{key_file}"}}}}'
    )
    return {
        "ANTHROPIC_API_KEY": PROVIDER_KEY,
        "XUM_SERVER_AUTH_TOKEN": SERVER_TOKEN,
        "OTHER_API_KEY": OTHER_KEY,
        "deepseek.apiKeyFile": FILE_KEY,
        "openai.apiKey": INLINE_KEY,
    }


def leak_file(directory: Path) -> None:
    """A file in the checkout that happens to hold every own secret (a command can always come
    across them: a shell profile, providers.jsonc, server.lock)."""
    values = [PROVIDER_KEY, SERVER_TOKEN, OTHER_KEY, FILE_KEY, INLINE_KEY]
    (directory / "leak.txt").write_text(" ".join(values) + "\n")


def assert_hidden(text: str, names: dict[str, str]) -> None:
    for value in names.values():
        assert value not in text, f"an own secret leaked: {text!r}"
    for name in names:
        assert f"[secret:{name}]" in text, f"{name} is not masked in {text!r}"


def test_the_name_rule_covers_every_built_in_provider_key() -> None:
    from xum.store.providers import BUILTIN_PROVIDERS

    names = [n for p in BUILTIN_PROVIDERS.values() for n in p.key_env]
    assert names and all(ownsecrets.is_own_secret_name(n) for n in names)
    assert ownsecrets.is_own_secret_name("XUM_SERVER_AUTH_TOKEN")
    assert not ownsecrets.is_own_secret_name("GITHUB_TOKEN")  # the user's, not xum's
    assert not ownsecrets.is_own_secret_name("ANTHROPIC_BASE_URL")


@pytest.mark.parametrize("runtime", ["local", "worktree"])
async def test_commands_never_see_xum_s_keys_and_meet_them_masked(
    repo: Path, own_secrets: dict[str, str], runtime: str
) -> None:
    h = await harness(repo, runtime)
    leak_file(Path(h.record.path))
    result = await h.call("bash", **bash(PROBE))
    assert "anthropic=[] token=[] other=[]" in result.output
    assert_hidden(result.output, own_secrets)
    streamed = h.streamed.decode()
    assert "anthropic=[] token=[] other=[]" in streamed
    assert_hidden(streamed, own_secrets)


async def test_a_project_secret_of_the_same_name_is_still_passed(
    repo: Path, own_secrets: dict[str, str]
) -> None:
    project_key = "sk-ant-project-0123456789"
    set_project_secret(str(repo), "ANTHROPIC_API_KEY", project_key)
    h = await harness(repo)
    result = await h.call("bash", **bash(f'[ "$ANTHROPIC_API_KEY" = {project_key} ] && echo same'))
    assert "same" in result.output


async def test_tool_hooks_see_no_key_and_their_output_is_masked(
    repo: Path, own_secrets: dict[str, str]
) -> None:
    leak_file(repo)
    hook(repo, "tool_pre", f'#!/bin/sh\necho "pre:[$ANTHROPIC_API_KEY]" >&2\n{PROBE} >&2\nexit 1\n')
    hook(repo, "tool_post", f'#!/bin/sh\necho "post:[$OTHER_API_KEY]"\n{PROBE}\n')
    set_trusted(repo)
    h = await harness(repo)
    blocked = await h.call("bash", **bash("echo never"))
    assert blocked.is_error and "pre:[]" in blocked.output
    assert_hidden(blocked.output, own_secrets)
    (repo / ".xum" / "tool_pre").unlink()
    result = await h.call("bash", **bash("true"))
    assert "post:[]" in result.output and "anthropic=[] token=[] other=[]" in result.output
    assert_hidden(result.output, own_secrets)
    hooks_log = (Path(os.environ["XUM_ROOT"]) / "logs" / "hooks.log").read_text()
    for value in own_secrets.values():
        assert value not in hooks_log


async def test_the_init_hook_sees_no_key_and_its_output_is_masked(
    repo: Path, own_secrets: dict[str, str]
) -> None:
    leak_file(repo)
    hook(repo, "init", f"#!/bin/sh\n{PROBE}\n")
    sh_git(repo, "add", ".")
    sh_git(repo, "commit", "-qm", "init hook")
    set_trusted(repo)
    created = await lifecycle.create_workspace(repo, "worktree", name_hint="init")
    assert created.init is not None
    lines = [line async for line in created.init.stream()]
    assert await created.init.wait() == "succeeded"
    output = "\n".join(lines)
    assert "anthropic=[] token=[] other=[]" in output
    assert_hidden(output, own_secrets)
    init_log = Path(os.environ["XUM_ROOT"]) / "logs" / "init" / f"{created.record.id}.log"
    for value in own_secrets.values():
        assert value not in init_log.read_text()


async def test_ssh_commands_get_no_key_even_when_the_ssh_config_forwards_them(
    repo: Path,
    own_secrets: dict[str, str],
    ssh_host: Sshd,  # noqa: F811
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
) -> None:
    # A user ssh config that forwards everything credential-shaped (the test sshd accepts it).
    config = tmp_path / "ssh_config"
    lines = ssh_host.config.read_text().splitlines()
    config.write_text(
        "\n".join([lines[0], "  SendEnv XUM_TEST_* *_API_KEY *_AUTH_TOKEN", *lines[1:]]) + "\n"
    )
    monkeypatch.setenv("XUM_SSH_CONFIG", str(config))
    monkeypatch.setenv("XUM_TEST_FORWARDED", "yes")
    leak_file(repo)
    sh_git(repo, "add", ".")
    sh_git(repo, "commit", "-qm", "leak file")
    h = await harness(repo, f"ssh {ssh_host.alias}")
    assert h.record.runtime == "ssh"
    result = await h.call("bash", **bash('echo "forwarded=[$XUM_TEST_FORWARDED]"; ' + PROBE))
    assert "forwarded=[yes]" in result.output  # the config does forward what it names
    assert "anthropic=[] token=[] other=[]" in result.output
    assert_hidden(result.output, own_secrets)
    assert_hidden(h.streamed.decode(), own_secrets)


def test_a_remembered_secret_is_masked_and_forgotten() -> None:
    ownsecrets.remember("xum-test-secret", "remembered-0123456789")
    try:
        masker = SecretMasker.for_project({})
        assert masker.mask("x remembered-0123456789 y") == "x [secret:xum-test-secret] y"
    finally:
        ownsecrets.forget("xum-test-secret")
    assert SecretMasker.for_project({}).mask("remembered-0123456789") == "remembered-0123456789"


def test_the_server_s_token_is_masked_in_what_its_agents_print(
    repo: Path, fake_llm: FakeLLM, monkeypatch: pytest.MonkeyPatch
) -> None:
    from tests.integration.server_support import (
        AUTH,
        TOKEN,
        create_workspace,
        server_client,
        use_fake_llm,
        wait_for,
    )
    from xum.engine.derive import replay_events
    from xum.store.sessionlog import SessionLog

    use_fake_llm(monkeypatch, fake_llm)
    fake_llm.script(
        fakellm.tool_call("bash", {"script": f"echo token={TOKEN}", "display_name": "t"}),
        fakellm.text("done"),
    )
    with server_client() as client:
        wid = create_workspace(client, repo)["id"]
        res = client.post(f"/api/workspaces/{wid}/messages", json={"text": "go"}, headers=AUTH)
        assert res.status_code == 202, res.text

        def idle() -> bool:
            status = client.get(f"/api/workspaces/{wid}", headers=AUTH).json()["status"]
            return bool(status["state"] == "idle")

        wait_for(lambda: len(fake_llm.requests) == 2 and idle())
    results = [e for e in replay_events(SessionLog.open(wid).frames) if e.type == "tool-result"]
    assert [r.to_dict()["output"].splitlines()[0] for r in results] == [
        "token=[secret:xum-server-token]"
    ]
    # The model sees the masked result (its own tool call, which quoted the token, is its own).
    assert "token=[secret:xum-server-token]" in fake_llm.requests[1].body.decode()
