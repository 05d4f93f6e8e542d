"""The cyclic garbage collector held off while a command starts.

Start-up allocates mostly what lives as long as the process (modules, classes, functions, the
dataclasses' generated methods): the 60-odd collections the interpreter ran on the way to `xum
run`'s first request (5-10 ms of CPU, more on a busy machine) found next to nothing to free.
`hold` switches the collector off at the entry point; `release` moves what exists by then to
the permanent generation (`gc.freeze`: later full collections skip it, and no oversized young
generation is collected at once) and switches the collector back on. Every command releases it
once it has loaded what it runs on: `xum run` before it opens its workspace's session, the
others as soon as their module is imported.
"""

from __future__ import annotations

import gc

_held = False


def hold() -> None:
    global _held
    if gc.isenabled():
        gc.disable()
        _held = True


def release() -> None:
    """Idempotent; a no-op unless `hold` switched the collector off."""
    global _held
    if _held:
        _held = False
        gc.freeze()
        gc.enable()
