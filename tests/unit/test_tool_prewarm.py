"""The tool prewarm thread loads, besides the tools, what their first calls import on the way
(`Tool.warm`) and the caller's modules; plain tools leave pydantic out of it."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import sys, threading
from xum.tools import registry

registry.prewarm(["bash", "file_read", "no_such_tool"], modules=["xum.engine.toolrun"])
for thread in threading.enumerate():
    if thread.name == "xum-tool-prewarm":
        thread.join()
wanted = ["xum.engine.toolrun", "xum.tools.plain_args", "xum.tools.bash", "xum.tools.file_read",
          "xum.tools.command_risk", "xum.runtime.process", "pydantic"]
print(" ".join(m for m in wanted if m in sys.modules))
"""


def test_prewarm_loads_the_tools_and_what_their_calls_need_but_not_pydantic() -> None:
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True)
    assert out.stdout.split() == [
        "xum.engine.toolrun",
        "xum.tools.plain_args",
        "xum.tools.bash",
        "xum.tools.file_read",
        "xum.tools.command_risk",
        "xum.runtime.process",
    ]
