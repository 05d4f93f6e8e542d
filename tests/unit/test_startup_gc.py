"""The collector held off during start-up (xum.core.startup_gc): released once, with what
start-up made moved to the permanent generation; never switched on by `release` alone."""

from __future__ import annotations

import subprocess
import sys

CODE = """
import gc
from xum.core import startup_gc

startup_gc.release()  # nothing held: leaves the collector as it is
print(gc.isenabled(), gc.get_freeze_count() == 0)
startup_gc.hold()
print(gc.isenabled())
startup_gc.release()
print(gc.isenabled(), gc.get_freeze_count() > 0)
startup_gc.release()
print(gc.isenabled())
gc.disable()
startup_gc.release()  # released already: a collector someone else switched off stays off
print(gc.isenabled())
"""


def test_hold_and_release() -> None:
    out = subprocess.run([sys.executable, "-c", CODE], capture_output=True, text=True, check=True)
    assert out.stdout.split("\n")[:5] == [
        "True True",
        "False",
        "True True",
        "True",
        "False",
    ]
