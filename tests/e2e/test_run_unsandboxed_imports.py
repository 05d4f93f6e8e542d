"""`xum run --sandbox off` never loads the sandbox's machinery for commands that succeed: the
sandbox middleware's note about denied writes is only for failed sandboxed commands, so it looks
at the result before it imports what it needs to recognise a sandboxed runtime. The list of
modules is taken in the real CLI process when it exits (it ends with os._exit)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.e2e.cli import env_for
from tests.gitrepo import make_repo
from xum.testing import fakellm
from xum.testing.fakellm import FakeLLM

ARGS = ["run", "-q", "--sandbox", "off", "-m", "sonnet", "say hi"]
PROBE = """
import json, os, sys
out = sys.argv.pop(1)
_exit = os._exit
def exit_noting_modules(code):
    with open(out, "w") as f:
        json.dump(sorted(sys.modules), f)
    _exit(code)
os._exit = exit_noting_modules
from xum.cli.entry import main
main()
"""


def test_an_unsandboxed_run_whose_commands_succeed_never_loads_the_sandbox(
    fake_llm: FakeLLM, tmp_path: Path
) -> None:
    repo = make_repo(tmp_path / "repo")
    probe, out = tmp_path / "probe.py", tmp_path / "loaded.json"
    probe.write_text(PROBE)
    fake_llm.script(
        fakellm.tool_call("bash", {"script": "echo ran", "display_name": "echo"}),
        fakellm.text("done"),
    )
    done = subprocess.run(
        [sys.executable, str(probe), str(out), *ARGS],
        cwd=repo,
        env={**os.environ, **env_for(fake_llm)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    loaded = json.loads(out.read_text())
    assert "xum.tools.bash" in loaded  # the command ran through the tool
    assert "ran" in json.dumps(fake_llm.requests[-1].json)  # and its output went back
    assert "xum.runtime.sandbox" not in loaded
