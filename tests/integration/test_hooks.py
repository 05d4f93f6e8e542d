"""Tool hooks, trust gating and secrets through the real middleware, real tools and real
processes (the engine's `run_one` drives each call exactly as a turn would)."""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e.cli import run_xum
from tests.support.hooks import (
    bash,
    harness,
    hook,
    sh_git,
)
from xum.engine.events import Event
from xum.engine.extensions import ToolCall
from xum.tools.base import ToolContext, ToolResult
from xum.workspaces import lifecycle
from xum.workspaces.safety.trust import is_trusted, set_trusted, trust_root
from xum.workspaces.service import open_runtime

pytestmark = pytest.mark.repo(name="proj", files={"app.py": "x = 1\n"}, message="first")


async def test_tool_pre_blocks_with_its_stderr_and_sees_the_documented_env(
    repo: Path, tmp_path: Path
) -> None:
    seen = tmp_path / "seen.json"
    hook(
        repo,
        "tool_pre",
        f"""#!/usr/bin/env bash
python3 - <<'EOF' > {seen}
import json, os
print(json.dumps({{k: v for k, v in os.environ.items() if k.startswith("XUM_")}}))
EOF
cp "$XUM_TOOL_INPUT_PATH" {tmp_path}/input.json
if [[ "$XUM_TOOL" == bash && "$XUM_TOOL_INPUT_SCRIPT" == *deploy*--prod* ]]; then
  echo "stdout is not shown"
  echo "production deploy blocked" >&2
  exit 1
fi
exit 0
""",
    )
    set_trusted(repo)
    h = await harness(repo)
    marker = tmp_path / "ran"
    result = await h.call("bash", **bash(f"touch {marker}; ./deploy --prod"))
    assert result.is_error
    assert (
        "production deploy blocked" in result.output and "stdout is not shown" not in result.output
    )
    assert result.output.startswith("blocked by .xum/tool_pre: exited with 1, so bash did not run.")
    assert result.meta["hook_exit_code"] == 1
    assert not marker.exists()
    env = json.loads(seen.read_text())
    assert env["XUM_TOOL"] == "bash"
    assert env["XUM_WORKSPACE_ID"] == h.record.id
    assert env["XUM_TOOL_INPUT_DISPLAY_NAME"] == "t"
    assert json.loads((tmp_path / "input.json").read_text()) == {
        "script": f"touch {marker}; ./deploy --prod",
        "display_name": "t",
    }

    allowed = await h.call("bash", **bash(f"touch {marker}"))
    assert not allowed.is_error and marker.exists()


async def test_tool_post_output_reaches_the_model(repo: Path) -> None:
    hook(
        repo,
        "tool_post",
        """#!/usr/bin/env bash
[[ "$XUM_TOOL" == file_* ]] || exit 0
echo "post saw ${XUM_TOOL_INPUT_FILE_PATH} error=${XUM_TOOL_RESULT_IS_ERROR}"
echo "result file has $(python3 -c 'import json,os;print(len(json.load(open(os.environ["XUM_TOOL_RESULT_PATH"]))["output"]))') chars"
exit 2
""",
    )
    set_trusted(repo)
    h = await harness(repo)
    result = await h.call("file_read", path="app.py")
    assert "x = 1" in result.output
    out = result.output.split("<hook_output>")[1]
    assert "post saw app.py error=false" in out
    assert ".xum/tool_post exited with 2" in out
    assert " chars" in out
    assert result.meta["hook_exit_code"] == 2 and "post saw" in result.meta["hook_output"]
    quiet = await h.call("bash", **bash("echo hi"))
    assert "<hook_output>" not in quiet.output  # the hook printed nothing for bash


async def test_hook_and_masking_layers_return_what_they_change(repo: Path) -> None:
    from xum.store.secrets import set_project_secret
    from xum.workspaces.middleware import HookMiddleware, MaskingMiddleware

    value = "sk-live-0123456789abcdef"
    set_project_secret(str(repo), "API_TOKEN", value)
    hook(repo, "tool_env", "export A=1\n", executable=False)
    hook(repo, "tool_post", '#!/bin/sh\necho "post saw $XUM_TOOL"\n')
    set_trusted(repo)
    h = await harness(repo)
    (hooks_layer,) = [m for m in h.wiring.middleware if isinstance(m, HookMiddleware)]
    (masking,) = [m for m in h.wiring.middleware if isinstance(m, MaskingMiddleware)]
    call = ToolCall("call_x", "bash", json.dumps(bash("true")))
    ctx = dataclasses.replace(h.ctx, call_id=call.id)
    changed = await hooks_layer.before_tool(call, ctx)
    assert isinstance(changed, ToolContext) and changed is not ctx
    assert changed.env_source is not None and changed.env_source.endswith(".xum/tool_env")
    assert ctx.env_source is None
    original = ToolResult(output=f"said {value}", meta={"exit_code": 0})
    with_hook = await hooks_layer.after_tool(call, original, changed)
    masked = await masking.after_tool(call, with_hook, changed)
    assert (original.output, original.meta) == (f"said {value}", {"exit_code": 0})
    assert with_hook is not original and "post saw bash" in with_hook.meta["hook_output"]
    assert masked.output.startswith("said [secret:API_TOKEN]") and value in with_hook.output


async def test_tool_env_is_sourced_before_bash(repo: Path) -> None:
    hook(
        repo,
        "tool_env",
        'export FROM_TOOL_ENV="set up"\ngreet() { echo "hello from tool_env"; }\n',
        executable=False,
    )
    set_trusted(repo)
    h = await harness(repo)
    result = await h.call("bash", **bash('echo "$FROM_TOOL_ENV"; greet'))
    assert result.output.startswith("set up\nhello from tool_env\n")


async def test_a_hanging_hook_is_killed_at_its_timeout(repo: Path, tmp_path: Path) -> None:
    marker = f"xum-hook-hang-{os.urandom(4).hex()}"
    hook(repo, "tool_pre", f"#!/usr/bin/env bash\nbash -c 'sleep 300; : {marker}' &\nwait\n")
    set_trusted(repo)
    h = await harness(repo, hook_timeout_s=0.5)
    ran = tmp_path / "tool-ran"
    result = await h.call("bash", **bash(f"touch {ran}"))
    # Stopped at its timeout rather than waited for: the tool never ran, and the hook's 300 s
    # child is gone.
    assert result.is_error and "timed out" in result.output
    assert not ran.exists()
    deadline = time.monotonic() + 20
    while subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 0:
        assert time.monotonic() < deadline, "the hook's child survived its timeout"
        time.sleep(0.05)


async def test_a_hanging_tool_post_is_killed_and_the_result_still_arrives(
    repo: Path, xum_root: Path
) -> None:
    marker = f"xum-post-hang-{os.urandom(4).hex()}"
    hook(
        repo,
        "tool_post",
        f"#!/usr/bin/env bash\necho checking\nbash -c 'sleep 300; : {marker}' &\nwait\n",
    )
    set_trusted(repo)
    h = await harness(repo, hook_timeout_s=0.5)
    result = await h.call("bash", **bash("echo the tool ran"))
    assert not result.is_error  # a tool_post failure never turns the result into an error
    assert result.output.startswith("the tool ran\n")
    said = result.output.split("<hook_output>")[1]
    assert ".xum/tool_post timed out and was killed" in said and "checking" in said
    assert result.meta["hook_exit_code"] is None
    logged = [json.loads(x) for x in (xum_root / "logs" / "hooks.log").read_text().splitlines()]
    assert logged[-1]["hook"] == ".xum/tool_post" and logged[-1]["timedOut"] is True
    deadline = time.monotonic() + 20
    while subprocess.run(["pgrep", "-f", marker], capture_output=True).returncode == 0:
        assert time.monotonic() < deadline, "the hook's child survived its timeout"
        time.sleep(0.05)


# Trust ----------------------------------------------------------------------------------------


async def test_untrusted_project_runs_no_hooks_and_says_so_once(repo: Path, tmp_path: Path) -> None:
    ran = tmp_path / "ran"
    for name in ("tool_pre", "tool_post"):
        hook(repo, name, f"#!/bin/sh\necho {name} >> {ran}\nexit 0\n")
    hook(repo, "tool_env", f"echo tool_env >> {ran}\n", executable=False)
    hook(repo, "init", f"#!/bin/sh\necho init >> {ran}\n")
    events: list[dict[str, Any]] = []
    h = await harness(repo, events=events)
    await h.call("bash", **bash("echo ok"))
    await h.call("file_read", path="app.py")
    assert not ran.exists()
    notices = [e for e in events if e.get("kind") == "untrusted-project"]
    assert len(notices) == 1
    message = notices[0]["message"]
    for name in ("init", "tool_pre", "tool_post", "tool_env"):
        assert f".xum/{name}" in message
    assert "xum trust" in message
    assert h.wiring.withheld == ["init", "tool_pre", "tool_post", "tool_env"]


async def test_user_level_hooks_run_even_in_untrusted_projects(
    repo: Path, xum_root: Path, tmp_path: Path
) -> None:
    xum_root.mkdir(parents=True, exist_ok=True)
    user = xum_root / "tool_pre"
    user.write_text("#!/bin/sh\necho 'blocked by the user' >&2\nexit 1\n")
    user.chmod(0o755)
    h = await harness(repo)
    result = await h.call("bash", **bash("echo no"))
    assert result.is_error and "blocked by the user" in result.output
    assert "~/.xum/tool_pre" in result.output


async def test_trust_via_the_cli_lets_hooks_run_and_worktrees_inherit_it(
    repo: Path, tmp_path: Path
) -> None:
    hook(repo, "tool_pre", "#!/bin/sh\necho 'pre says no' >&2\nexit 1\n")
    sh_git(repo, "add", ".")
    sh_git(repo, "commit", "-qm", "hooks")
    h = await harness(repo)
    assert not (await h.call("bash", **bash("true"))).is_error  # untrusted: not run

    done = run_xum("trust", "--json", cwd=repo / ".xum")
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert out == {
        "ok": True,
        "path": str(repo),
        "name": "proj",
        "trusted": True,
        "registered": False,
    }
    assert "pre says no" in (await h.call("bash", **bash("true"))).output  # live, same session

    wt = await harness(repo, "worktree")
    assert trust_root(wt.record.path) == repo
    assert "pre says no" in (await wt.call("bash", **bash("true"))).output

    # `xum trust --revoke` from inside the worktree records the MAIN repository
    done = run_xum("trust", "--revoke", cwd=Path(wt.record.path))
    assert done.returncode == 0 and str(repo) in done.stdout
    assert not is_trusted(repo) and not is_trusted(wt.record.path)
    assert not (await wt.call("bash", **bash("true"))).is_error


def test_trust_cli_registers_a_new_project_and_plain_directories(tmp_path: Path) -> None:
    plain = tmp_path / "plain"
    plain.mkdir()
    done = run_xum("trust", "--dir", str(plain))
    assert done.returncode == 0
    assert f"registered project {plain}" in done.stdout and "trusted" in done.stdout
    assert is_trusted(plain)


async def test_disable_env_withholds_project_automation(
    repo: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    hook(repo, "tool_pre", "#!/bin/sh\nexit 1\n")
    set_trusted(repo)
    monkeypatch.setenv("XUM_DISABLE_PROJECT_AUTOMATION", "1")
    h = await harness(repo)
    assert not (await h.call("bash", **bash("true"))).is_error


# Secrets --------------------------------------------------------------------------------------


async def test_secrets_reach_commands_and_hooks_but_are_masked_in_output(
    repo: Path, tmp_path: Path
) -> None:
    from xum.store.secrets import set_project_secret

    value = "sk-live-0123456789abcdef"
    set_project_secret(str(repo), "API_TOKEN", value)
    set_project_secret(str(repo), "PORT", "80")  # too short to mask
    hook(repo, "tool_post", '#!/bin/sh\necho "hook sees $API_TOKEN"\n')
    set_trusted(repo)
    h = await harness(repo)
    result = await h.call(
        "bash",
        **bash('echo "token=$API_TOKEN port=$PORT"; [ "$API_TOKEN" = ' + value + " ] && echo same"),
    )
    assert value not in result.output
    assert "token=[secret:API_TOKEN] port=80" in result.output
    assert "same" in result.output
    assert "hook sees [secret:API_TOKEN]" in result.output
    assert value.encode() not in h.streamed
    assert b"[secret:API_TOKEN]" in h.streamed


async def test_secrets_file_must_be_private(repo: Path, xum_root: Path) -> None:
    from xum.core.errors import ConfigError
    from xum.store.secrets import load_project_secrets, set_project_secret

    set_project_secret(str(repo), "A_KEY", "value123")
    path = xum_root / "secrets.json"
    assert (path.stat().st_mode & 0o777) == 0o600
    assert json.loads(path.read_text()) == {str(repo): {"A_KEY": "value123"}}
    path.chmod(0o644)
    with pytest.raises(ConfigError, match="chmod 600"):
        load_project_secrets(str(repo))


# Init hook ------------------------------------------------------------------------------------


async def test_a_failing_init_hook_keeps_its_exit_code_and_the_workspace(
    repo: Path, xum_root: Path
) -> None:
    hook(
        repo,
        "init",
        '#!/bin/sh\necho "runtime=$XUM_RUNTIME scratch=${XUM_SCRATCH_DIR:-unset}"\nexit 3\n',
    )
    set_trusted(repo)
    created = await lifecycle.create_workspace(repo, "local", name_hint="init")
    assert created.init is not None
    lines = [line async for line in created.init.stream()]
    assert lines == ["runtime=local scratch=unset"]
    assert await created.init.wait() == "failed"
    record = lifecycle.get_workspace(created.record.id)
    assert (record.init_status, record.init_exit_code) == ("failed", 3)
    assert (xum_root / "logs" / "init" / f"{record.id}.log").read_text() == lines[0] + "\n"


async def test_init_hook_timeout_and_open_runtime(repo: Path) -> None:
    hook(repo, "init", "#!/bin/sh\nsleep 30\n")
    set_trusted(repo)
    created = await lifecycle.create_workspace(repo, "local", name_hint="slow", init_timeout_s=0.3)
    assert created.init is not None
    assert await created.init.wait() == "timed_out"
    assert open_runtime(created.record).workspace_path == str(repo)


# Local runtime ----------------------------------------------------------------------------------


async def test_local_workspace_warns_when_another_local_one_is_streaming(repo: Path) -> None:
    from tests.support.workspaces import turn_in_other_process

    other = await lifecycle.create_workspace(repo, "local", name_hint="other", run_init=False)
    quiet: list[dict[str, Any]] = []
    await harness(repo, events=quiet)
    assert not [e for e in quiet if e.get("kind") == "local-workspace-streaming"]
    events: list[dict[str, Any]] = []
    with turn_in_other_process(other.record.id):
        h = await harness(repo, events=events)
        await h.call("bash", **bash("true"))
        wt_events: list[Event] = []
        await harness(repo, "worktree", events=wt_events)  # worktrees have their own files
    warnings = [e for e in events if e.get("kind") == "local-workspace-streaming"]
    assert len(warnings) == 1 and warnings[0]["workspace_id"] == other.record.id
    assert "other" in warnings[0]["message"]
    assert not [e for e in wt_events if e.get("kind") == "local-workspace-streaming"]
