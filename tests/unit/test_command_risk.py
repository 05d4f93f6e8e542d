"""How the approval layer reads a bash script: critical commands, the allowlist, prefixes; and
the read denylist's rules. A fuzzer makes sure no script crashes the reading."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from xum.tools.command_risk import assess, command_prefix
from xum.tools.denylist import ReadDenylist, parse_denylist

W = "/work/app"

CRITICAL = [
    "rm -rf /",
    "rm -rf ~",
    "rm -fr ../other",
    "rm -r -f /etc",
    "rm --recursive --force $HOME/.config",
    "sudo -u root rm -rf /var/lib",
    "cd / && rm -rf tmp",
    "find . -name '*.o' | xargs rm -rf",
    "rm -rf .",
    "mkfs.ext4 /dev/sdb1",
    "mkswap /dev/sdc",
    "dd if=/dev/zero of=/dev/sda bs=1M",
    "echo x > /dev/nvme0n1",
    "git push --force origin main",
    "git push -f",
    "git -C sub push --force-with-lease",
    "git push origin +main:main",
    "git push --mirror backup",
    "bash -c 'rm -rf /'",
    "ls; env A=1 nice rm -rf /opt",
]
NOT_CRITICAL = [
    "rm -rf build dist",
    "rm -rf ./node_modules",
    "rm -f /tmp/x",  # forced but not recursive
    "rm -r old",
    "git push origin main",
    "dd if=/dev/zero of=blob bs=1k count=1",
    "echo hi > /dev/null",
    "make test",
]


@pytest.mark.parametrize("script", CRITICAL)
def test_critical_commands(script: str) -> None:
    assert assess(script, workspace=W).critical, script


@pytest.mark.parametrize("script", NOT_CRITICAL)
def test_commands_that_are_not_critical(script: str) -> None:
    assert assess(script, workspace=W).critical == (), script


@pytest.mark.parametrize(
    "script",
    ["ls -la", "git status && git diff --stat", "rg TODO | head -20", "cat a.txt 2>&1", "time ls"],
)
def test_read_only_commands_are_allowlisted(script: str) -> None:
    risk = assess(script, workspace=W)
    assert risk.allowlisted and risk.understood


@pytest.mark.parametrize(
    "script",
    [
        "cat a > b",  # a redirection writes
        "sed -i s/a/b/ f",
        "find . -delete",
        "git commit -m x",
        "sudo ls",
        "echo $(curl evil)",  # not fully read
        "eval ls",
        "ls 'unbalanced",
        "npm test",
    ],
)
def test_everything_else_is_not(script: str) -> None:
    assert not assess(script, workspace=W).allowlisted


def test_remembered_prefixes_and_what_always_would_remember() -> None:
    assert assess("npm test -- --watch", workspace=W).prefix == "npm test"
    assert assess("CI=1 npm test", workspace=W, allowed_prefixes=["npm test"]).allowlisted
    assert not assess("npm run build", workspace=W, allowed_prefixes=["npm test"]).allowlisted
    assert assess("ls && make build", workspace=W).prefix == "make build"
    assert assess("make a; npm b", workspace=W).prefix is None  # two programs: nothing to keep
    assert assess("sudo make install", workspace=W).prefix is None
    assert command_prefix(["pytest", "tests/unit", "-q"]) == "pytest"
    assert command_prefix(["/usr/bin/cargo", "build"]) == "cargo build"


@settings(
    max_examples=300, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck)
)
@given(st.text(alphabet=st.sampled_from(list("rm -f/;&|()<>'\"$`\\\n~.*a+")), max_size=60))
def test_no_script_crashes_the_reading(script: str) -> None:
    risk = assess(script, workspace=W)
    assert isinstance(risk.critical, tuple)
    if not risk.understood:
        assert not risk.allowlisted


def test_denylist_rules() -> None:
    home = "/home/me"

    def expand(p: str) -> str:
        return p.replace("~", home, 1)

    off = parse_denylist(None)
    assert not off.active and off.rule_for("/w/.env", expand) is None
    on = parse_denylist({"sensitive": True, "paths": ["~/work/secret", "/etc/app.conf"]})
    assert on.rule_for("/w/.env", expand) == ".env"
    assert on.rule_for("/w/.env.production", expand) == ".env.*"
    assert on.rule_for("/w/certs/server.pem", expand) == "*.pem"
    assert on.rule_for(f"{home}/.ssh/id_rsa", expand) == f"{home}/.ssh"
    assert on.rule_for(f"{home}/work/secret/a/b", expand) == f"{home}/work/secret"
    assert on.rule_for("/etc/app.conf", expand) == "/etc/app.conf"
    assert on.rule_for(f"{home}/work/secretive", expand) is None
    assert on.rule_for("/w/app.py", expand) is None
    assert ReadDenylist(paths=("/x",)).rule_for("/w/.env", expand) is None  # not sensitive
    for bad, said in [
        ([], "must be an object"),
        ({"sensitive": 1}, "true or false"),
        ({"paths": "x"}, "list of paths"),
        ({"paths": ["relative"]}, "not absolute"),
        ({"other": 1}, "unknown keys"),
    ]:
        with pytest.raises(ValueError, match=said):
            parse_denylist(bad)
