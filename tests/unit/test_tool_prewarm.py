"""The tool prewarm thread loads, besides the tools, what their first calls import on the way
(`Tool.warm`) and the caller's modules, once its gate opens (the first request is out); plain
tools leave pydantic out of it."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys, threading
from xum.tools import registry

WANTED = ["xum.engine.toolrun", "xum.tools.plain_args", "xum.tools.bash", "xum.tools.file_read",
          "xum.tools.command_risk", "xum.runtime.process", "pydantic"]
registry.PREWARM_GATE_S = 600.0
gate = threading.Event()
registry.prewarm(["bash", "file_read", "no_such_tool"], modules=["xum.engine.toolrun"], gate=gate)
thread = next(t for t in threading.enumerate() if t.name == "xum-tool-prewarm")
print("before:", thread.is_alive(), *[m for m in WANTED if m in sys.modules])
gate.set()
thread.join()
print("after:", *[m for m in WANTED if m in sys.modules])
from xum.tools import shell_parse
print("parser built:", shell_parse._parser.cache_info().currsize == 1)
"""


def test_prewarm_waits_for_its_gate_then_loads_what_first_calls_need_but_not_pydantic() -> None:
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True)
    before, after, parser = out.stdout.splitlines()
    assert parser == "parser built: True"  # bash's `warm` calls shell_parse.warm_parser
    assert before.split() == ["before:", "True"]
    assert after.split() == [
        "after:",
        "xum.engine.toolrun",
        "xum.tools.plain_args",
        "xum.tools.bash",
        "xum.tools.file_read",
        "xum.tools.command_risk",
        "xum.runtime.process",
    ]
