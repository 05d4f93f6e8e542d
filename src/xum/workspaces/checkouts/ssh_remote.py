"""The commands that make, move, inspect and remove SSH workspaces' remote checkouts.

`ssh_checkout.SshCheckout` is the Checkout of an SSH workspace; these are the remote operations
it runs (each one ssh round trip, with a small bash script).

Layout on the host (the remote user's home): the checkout in
`~/xum/src/<project-name>/<workspace-name>`, and xum's own files about the workspace (bash spill
files) in the private `~/xum/scratch/<workspace-id>`.

What goes to the remote is a `git archive` of the project's committed HEAD, unpacked with `tar`:
no history, no uncommitted or ignored files, no `.xumignore` copies (secrets reach the remote only
as the environment of each command, never as files). When the host has git, the checkout is made
a fresh repository with one commit of that snapshot on a branch named after the workspace, so
the agent can diff, commit and branch as usual; pushing and fetching need credentials the user
deliberately gives the host (nothing is forwarded).

These are lifecycle operations: synchronous, run in a thread by the async callers.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from xum.core.errors import XumError
from xum.runtime import git
from xum.runtime.ssh import SshError, client_env, remote_bash, run_ssh_sync, ssh_command

REMOTE_BASE = "xum/src"  # under the remote user's home
REMOTE_SCRATCH = "xum/scratch"


class RemoteCheckoutError(XumError):
    code = "remote_checkout_error"


def remote_home(host: str) -> str:
    done = run_ssh_sync(host, 'printf %s "$HOME"', timeout_s=60)
    home = done.stdout.decode(errors="replace").strip()
    if done.returncode != 0 or not home.startswith("/"):
        raise RemoteCheckoutError(f"cannot find the home directory of the remote user on {host}")
    return home.rstrip("/") or "/"


def remote_workspace_path(home: str, project_name: str, workspace_name: str) -> str:
    return f"{home.rstrip('/')}/{REMOTE_BASE}/{project_name}/{workspace_name}"


def remote_scratch_path(home: str, workspace_id: str) -> str:
    return f"{home.rstrip('/')}/{REMOTE_SCRATCH}/{workspace_id}"


_UNPACK = r"""
set -e
d=$1
if [ -e "$d" ]; then echo "xum: $d already exists on the remote" >&2; exit 3; fi
mkdir -p -- "$d"
tar -x -f - -C "$d"
if command -v git >/dev/null 2>&1; then
  cd -- "$d"
  git init -q
  git symbolic-ref HEAD "refs/heads/$2"
  git add -A -f .
  git -c user.name=xum -c user.email=xum@localhost -c commit.gpgsign=false \
    commit -q --no-verify --allow-empty -m "xum: snapshot of $3"
  echo git
fi
"""


def push_checkout(project: Path, host: str, remote_dir: str, branch: str) -> bool:
    """Unpack the project's HEAD into `remote_dir` on `host`; True when the host has git (and
    the checkout is a repository)."""
    head = git.head_commit(project)
    if head is None:
        raise RemoteCheckoutError(
            f"{project} has no commits yet",
            hint="SSH workspaces start from the committed HEAD; make a first commit",
        )
    archive = subprocess.Popen(
        ["git", "archive", "--format=tar", head],
        cwd=project,
        env=git.git_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert archive.stdout is not None
    try:
        done = subprocess.run(
            ssh_command(host, remote_bash(_UNPACK, remote_dir, branch, head)),
            stdin=archive.stdout,
            capture_output=True,
            timeout=600,
            check=False,
            env=client_env(),
        )
    finally:
        archive.stdout.close()
        archive_err = archive.communicate(timeout=60)[1]
    if archive.returncode != 0:
        raise RemoteCheckoutError(
            f"git archive failed in {project}: {archive_err.decode(errors='replace').strip()}"
        )
    if done.returncode == 255:
        raise SshError(f"ssh {host}: {done.stderr.decode(errors='replace').strip()}")
    if done.returncode != 0:
        raise RemoteCheckoutError(
            f"could not unpack the project on {host}: "
            f"{done.stderr.decode(errors='replace').strip() or f'exit {done.returncode}'}"
        )
    return done.stdout.decode(errors="replace").strip().endswith("git")


_FORK = r"""
set -e
[ -d "$1/.git" ] || { echo "xum: $1 is not a git repository on the remote" >&2; exit 4; }
if [ -e "$2" ]; then echo "xum: $2 already exists on the remote" >&2; exit 3; fi
head=$(git -C "$1" rev-parse --verify HEAD)
mkdir -p -- "${2%/*}"
git clone -q --no-checkout -- "$1" "$2"
cd -- "$2"
git checkout -q -b "$3" "$head"
git remote remove origin
"""


def fork_checkout(host: str, source_dir: str, target_dir: str, branch: str) -> None:
    """A new checkout at `target_dir` on a new branch from the source checkout's HEAD (committed
    work only, like a worktree fork)."""
    done = run_ssh_sync(host, _FORK, source_dir, target_dir, branch, timeout_s=600)
    if done.returncode != 0:
        raise RemoteCheckoutError(
            f"could not fork the remote checkout on {host}: "
            f"{done.stderr.decode(errors='replace').strip() or f'exit {done.returncode}'}",
            hint="forking an SSH workspace needs git on the remote host",
        )


_MOVE = r"""
set -e
[ -e "$1" ] || exit 2
if [ -e "$2" ]; then echo "xum: $2 already exists on the remote" >&2; exit 3; fi
mv -- "$1" "$2"
if [ -d "$2/.git" ]; then
  b=$(git -C "$2" symbolic-ref --quiet --short HEAD || true)
  if [ "$b" = "$3" ] && ! git -C "$2" rev-parse --verify --quiet "refs/heads/$4" >/dev/null; then
    git -C "$2" branch -m "$3" "$4"; b=$4
  fi
  printf '%s' "$b"
fi
"""


def move_checkout(
    host: str, old_dir: str, new_dir: str, old_name: str, new_name: str
) -> str | None:
    """Rename the remote checkout directory (and its branch, when it still carries the old
    workspace name); returns the checked-out branch afterwards."""
    done = run_ssh_sync(host, _MOVE, old_dir, new_dir, old_name, new_name)
    if done.returncode == 2:
        return None  # no checkout left to move: the record is renamed anyway
    if done.returncode != 0:
        raise RemoteCheckoutError(
            f"could not rename the remote checkout on {host}: "
            f"{done.stderr.decode(errors='replace').strip() or f'exit {done.returncode}'}"
        )
    return done.stdout.decode(errors="replace").strip() or None


_STATUS = r"""
[ -d "$1" ] || exit 2
[ -d "$1/.git" ] || exit 5
command -v git >/dev/null 2>&1 || exit 5
git -C "$1" status --porcelain=v1 -z --untracked-files=all
"""


def dirty_files(host: str, remote_dir: str) -> list[str] | None:
    """Uncommitted files of the remote checkout; [] when clean or gone; None when it cannot be
    told (no git there)."""
    done = run_ssh_sync(host, _STATUS, remote_dir)
    if done.returncode == 2:
        return []
    if done.returncode != 0:
        return None
    return git.parse_porcelain_z(done.stdout.decode(errors="surrogateescape"))


_REMOVE = r"""
case "$1" in
  "$HOME"/xum/src/*/*) ;;
  *) echo "xum: refusing to remove $1: not under ~/xum/src" >&2; exit 4 ;;
esac
case "$2" in
  "" | "$HOME"/xum/scratch/*) ;;
  *) echo "xum: refusing to remove $2: not under ~/xum/scratch" >&2; exit 4 ;;
esac
rm -rf -- "$1" ${2:+"$2"}
"""


def remove_checkout(host: str, remote_dir: str, scratch_dir: str | None = None) -> None:
    """Remove the remote checkout and, when given, the workspace's remote scratch directory."""
    done = run_ssh_sync(host, _REMOVE, remote_dir, scratch_dir or "", timeout_s=600)
    if done.returncode != 0:
        raise RemoteCheckoutError(
            f"could not remove {remote_dir} on {host}: "
            f"{done.stderr.decode(errors='replace').strip() or f'exit {done.returncode}'}"
        )
