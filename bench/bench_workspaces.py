"""Workspaces: worktree creation on a 10k-file repository, fork, and SSH per-command overhead.

Baselines measured in the same run:
* worktree creation: a bare `git worktree add -b` of the same repository (xum's own cost is the
  registry write, `.xumignore`, and the checks around it);
* fork: worktree creation alone (a fork adds copying the conversation: here 400 frames);
* SSH command: the same `true` through the local runtime (the SSH figure is one round trip
  over the multiplexed connection to a loopback sshd, plus the bootstrap's bash).
"""

from __future__ import annotations

import asyncio
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.util import median_ms
from xum.llm.types import text_message
from xum.store import frame_types as ev
from xum.store.sessionlog import SessionLog

FILES = 10_000
REPEAT = 3
GIT = ["git", "-c", "user.name=Bench", "-c", "user.email=bench@example.com"]


def _make_repo(path: Path) -> None:
    path.mkdir(parents=True)
    subprocess.run(["git", "init", "-q", "-b", "main"], cwd=path, check=True)
    for i in range(FILES):
        directory = path / f"pkg{i // 200:03d}"
        directory.mkdir(exist_ok=True)
        (directory / f"mod{i:05d}.py").write_text(f"VALUE = {i}\n")
    subprocess.run([*GIT, "add", "-A"], cwd=path, check=True)
    subprocess.run([*GIT, "commit", "-qm", "10k files"], cwd=path, check=True)


def _conversation(workspace_id: str, frames: int) -> None:
    log = SessionLog.open(workspace_id)
    batch: list[tuple[str, dict[str, Any]]] = []
    for i in range(frames // 2):
        batch.append((ev.USER_MESSAGE, {"message": text_message("user", f"question {i} " * 20)}))
        batch.append(
            (
                ev.ASSISTANT_MESSAGE,
                {
                    "message": text_message("assistant", f"answer {i} " * 40),
                    "usage": {"input_tokens": 100, "output_tokens": 50},
                    "finish_reason": "stop",
                    "model": "anthropic:bench",
                },
            )
        )
    log.append_many(batch)
    log.close()


async def _ssh_overhead(base: Path) -> dict[str, Any]:
    from xum.runtime.local import LocalRuntime
    from xum.runtime.ssh import SshRuntime, close_master
    from xum.testing.sshd import SshServer, find_sshd

    if find_sshd() is None:
        return {"skipped": "sshd not found (install openssh-server)"}
    with SshServer(base / "sshd") as server:
        os.environ["XUM_SSH_CONFIG"] = str(server.config)
        try:
            workspace = server.remote_home / "ws"
            workspace.mkdir()
            remote = SshRuntime(server.alias, str(workspace), home=str(server.remote_home))
            local = LocalRuntime(str(workspace), tempfile.gettempdir())
            first_started = time.perf_counter()
            await remote.exec("true", env={})  # opens the master connection
            first = time.perf_counter() - first_started

            async def timed(rt: Any, n: int) -> list[float]:
                out = []
                for _ in range(n):
                    t0 = time.perf_counter()
                    await rt.exec("true", env={"XUM_RUNTIME": "bench"})
                    out.append(time.perf_counter() - t0)
                return out

            ssh_samples = await timed(remote, 30)
            local_samples = await timed(local, 30)
            stat_samples = []
            for _ in range(30):
                t0 = time.perf_counter()
                await remote.stat("missing")
                stat_samples.append(time.perf_counter() - t0)
            close_master(server.alias)
        finally:
            os.environ.pop("XUM_SSH_CONFIG", None)
    return {
        "first_command_ms": round(first * 1000, 3),
        "ssh_command_median_ms": median_ms(ssh_samples),
        "local_command_median_ms": median_ms(local_samples),
        "ssh_over_local_ratio": round(
            statistics.median(ssh_samples) / statistics.median(local_samples), 2
        ),
        "ssh_stat_median_ms": median_ms(stat_samples),
    }


def run() -> dict[str, Any]:
    base = Path(tempfile.mkdtemp(prefix="xum-bench-ws-"))
    old_root = os.environ.get("XUM_ROOT")
    os.environ["XUM_ROOT"] = str(base / "root")
    try:
        from xum.workspaces import lifecycle, service

        repo = base / "repo"
        started = time.perf_counter()
        _make_repo(repo)
        setup_s = time.perf_counter() - started

        def plain_add(i: int) -> None:
            target = base / f"plain-{i}"
            subprocess.run(
                ["git", "worktree", "add", "-q", "-b", f"plain-{i}", str(target)],
                cwd=repo,
                check=True,
            )

        plain_add(-1)  # warm the page cache and git's index of the repository
        record0, _rt = service.create_workspace(repo, "worktree", name_hint="bench")
        _conversation(record0.id, 400)
        git_samples, create_samples, fork_samples = [], [], []
        # Interleaved, so a noisy moment hits all three alike.
        for i in range(REPEAT):
            t0 = time.perf_counter()
            plain_add(i)
            git_samples.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            service.create_workspace(repo, "worktree", name_hint="bench")
            create_samples.append(time.perf_counter() - t0)
            t0 = time.perf_counter()
            asyncio.run(lifecycle.fork_workspace(record0.id, run_init=False))
            fork_samples.append(time.perf_counter() - t0)

        ssh = asyncio.run(_ssh_overhead(base))
        return {
            "repo_files": FILES,
            "repo_setup_s": round(setup_s, 2),
            "git_worktree_add_median_ms": median_ms(git_samples),
            "worktree_create_median_ms": median_ms(create_samples),
            "worktree_create_over_git_ratio": round(
                statistics.median(create_samples) / statistics.median(git_samples), 2
            ),
            "fork_400_frames_median_ms": median_ms(fork_samples),
            "fork_over_create_ratio": round(
                statistics.median(fork_samples) / statistics.median(create_samples), 2
            ),
            "ssh": ssh,
        }
    finally:
        if old_root is None:
            os.environ.pop("XUM_ROOT", None)
        else:
            os.environ["XUM_ROOT"] = old_root
        shutil.rmtree(base, ignore_errors=True)


if __name__ == "__main__":
    import json

    print(json.dumps(run(), indent=2))
