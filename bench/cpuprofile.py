"""Run `python -m xum ARGS...` under cProfile timed by the main thread's CPU clock.

`python -m bench.cpuprofile OUT ARGS...` writes the stats to OUT when xum exits. The default
cProfile timer is the wall clock, which on a shared machine charges a function for the time the
process waited to be scheduled (a socket send that wakes the peer, then loses the core to it);
`time.thread_time` counts only the CPU the server's event-loop thread used, where the per-step work
runs. Profiling starts at SIGUSR1 and stops at SIGUSR2 (bench/bench_fleet.py with
`XUM_BENCH_PROFILE_CPU=OUT` sends them around the turns, so start-up and creating the workspaces
are left out).
"""

from __future__ import annotations

import cProfile
import runpy
import signal
import sys
import time


def main() -> None:
    out = sys.argv[1]
    sys.argv = ["xum", *sys.argv[2:]]
    profile = cProfile.Profile(time.thread_time)
    # Handlers run on the main thread, the one the server's event loop runs on.
    signal.signal(signal.SIGUSR1, lambda *_: profile.enable())
    signal.signal(signal.SIGUSR2, lambda *_: profile.disable())
    try:
        runpy.run_module("xum", run_name="__main__", alter_sys=True)
    finally:
        profile.disable()
        profile.dump_stats(out)


if __name__ == "__main__":
    main()
