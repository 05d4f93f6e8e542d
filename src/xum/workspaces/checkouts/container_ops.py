"""The container CLI commands that make, sync, fork, stop and remove a Docker workspace's
container (`container.ContainerCheckout` is its Checkout; these are the operations it runs).

A workspace's container is `xum-<workspace-id>`, labelled `xum.workspace=<id>` (and
`xum.project=<project path>`), started from the chosen image with an idle shell loop as its main
process (the image's entrypoint is replaced: the container only has to stay up for `exec`).
The project reaches it as a git bundle of the committed HEAD, streamed on the CLI's stdin and
fetched into a fresh repository at `/src` on a branch named after the workspace; nothing else
of the project (uncommitted or ignored files, `.xumignore` copies) goes in. The repository gets
the project's git identity (`user.name`, `user.email`) so the agent can commit.

These are lifecycle operations: synchronous, run in a thread by the async callers.
"""

from __future__ import annotations

import logging
import subprocess
from collections.abc import Sequence
from pathlib import Path

from xum.core.portblock import PortBlock
from xum.runtime import git
from xum.runtime.container import (
    CLI_TIMEOUT_S,
    CONTAINER_CHECKOUT,
    ContainerError,
    container_state,
    engine_message,
    ensure_running,
    start_error,
)
from xum.runtime.ssh import client_env

log = logging.getLogger(__name__)

LABEL = "xum.workspace"
PROJECT_LABEL = "xum.project"
SYNC_TIMEOUT_S = 600.0
# The main process: idle until stopped (TERM ends it at once, so `stop` takes no grace period).
_IDLE = "trap 'exit 0' TERM INT; while :; do sleep 86400 & wait $!; done"


def container_name(workspace_id: str) -> str:
    return f"xum-{workspace_id}"


def start_container(
    cli: str,
    image: str,
    name: str,
    *,
    workspace_id: str,
    project: str,
    network: bool,
    options: Sequence[str] = (),
    ports: PortBlock | None = None,
) -> bool:
    """`<cli> run -d` a new container of `image` (`options`: more `run` options); ContainerError
    (naming the fix where the engine's defaults do not fit the machine) when it does not
    start. `ports`: the workspace's port block, published on this machine's loopback at the same
    numbers when the container has a network; when one of them is taken here, the container is
    made without publishing. Returns whether the block was published."""
    argv = [
        "run",
        "-d",
        "--name",
        name,
        "--label",
        f"{LABEL}={workspace_id}",
        "--label",
        f"{PROJECT_LABEL}={project}",
        "--entrypoint",
        "/bin/sh",
    ]
    if not network:
        argv += ["--network", "none"]
    argv += options
    ensure_image(cli, image)
    if ports is not None and network:
        span = f"{ports.first}-{ports.last}" if ports.count > 1 else str(ports.first)
        done = _cli(cli, *argv, "-p", f"127.0.0.1:{span}:{span}", image, "-c", _IDLE)
        if done.returncode == 0:
            return True
        _cli(cli, "rm", "-f", name)
        if "in use" not in done.stderr.decode(errors="replace").lower():
            raise start_error(cli, done.stderr)
        log.warning("ports %s are taken here: the container's are not published", span)
    done = _cli(cli, *argv, image, "-c", _IDLE, timeout_s=SYNC_TIMEOUT_S)
    if done.returncode != 0:
        # A container that was created but could not start is removed again.
        _cli(cli, "rm", "-f", name)
        raise start_error(cli, done.stderr)
    return False


def ensure_image(cli: str, image: str) -> None:
    """Pull `image` unless the engine has it; ContainerError saying so when it cannot, or that
    the engine cannot be reached."""
    found = _cli(cli, "image", "inspect", image)
    if found.returncode == 0:
        return
    text = found.stderr.decode(errors="replace").lower()
    if "connect" in text or "daemon" in text:
        raise ContainerError(
            f"cannot reach the container engine: {engine_message(cli, found.stderr)}",
            hint=f"check that `{cli} info` works here (DOCKER_HOST, CONTAINER_HOST and the "
            "CLI's own settings apply), or set XUM_CONTAINER_CLI to another CLI",
        )
    done = _cli(cli, "pull", image, timeout_s=SYNC_TIMEOUT_S)
    if done.returncode != 0:
        raise ContainerError(
            f"the image {image} is not on this machine and could not be pulled: "
            f"{engine_message(cli, done.stderr)}",
            hint=f"check the image name, or build or pull it first (`{cli} pull {image}`)",
        )


_PREPARE = r"""
set -e
command -v bash >/dev/null 2>&1 || { echo "xum: the image has no bash" >&2; exit 5; }
command -v git >/dev/null 2>&1 || { echo "xum: the image has no git" >&2; exit 6; }
mkdir -p "$2"; chmod 700 "$2"
printf '%s' "$HOME"
"""

_RECEIVE = r"""
set -e
d=$1; b=$2
if [ -e "$d" ] && [ -n "$(ls -A "$d")" ]; then echo "xum: $d is not empty" >&2; exit 3; fi
mkdir -p "$d"; cd "$d"
t=$(mktemp "${TMPDIR:-/tmp}/xum-bundle.XXXXXX")
trap 'rm -f "$t"' EXIT
cat > "$t"
git init -q
git fetch -q "$t" "+HEAD:refs/heads/$b"
git symbolic-ref HEAD "refs/heads/$b"
git reset -q --hard
git update-ref "refs/remotes/origin/$5" "refs/heads/$b"
git symbolic-ref refs/remotes/origin/HEAD "refs/remotes/origin/$5"
[ -z "$3" ] || git config user.name "$3"
[ -z "$4" ] || git config user.email "$4"
"""

_BUNDLE = r"""
cd "$1" && exec git bundle create - HEAD
"""


def prepare(cli: str, name: str, scratch: str) -> str:
    """Check that the container has what xum needs (bash, git), make its scratch directory,
    and return its home directory."""
    done = exec_sh(cli, name, _PREPARE, "", scratch)
    if done.returncode == 5:
        raise ContainerError(
            "the container image has no bash (xum runs every command with it)",
            hint="use an image with bash (most Debian, Ubuntu and Fedora based images have it)",
        )
    if done.returncode == 6:
        raise ContainerError(
            "the container image has no git (the project is synced to /src as a git bundle)",
            hint="use an image with git, or build one from yours (`RUN apt-get install -y git`)",
        )
    if done.returncode != 0:
        raise ContainerError(f"could not prepare the container: {_why(cli, done)}")
    return done.stdout.decode(errors="replace").strip() or "/root"


def push_project(cli: str, name: str, project: Path, branch: str) -> None:
    """Sync the project's committed HEAD into the container's /src on `branch`."""
    if git.head_commit(project) is None:
        raise ContainerError(
            f"{project} has no commits yet",
            hint="Docker workspaces start from the committed HEAD; make a first commit",
        )
    bundle = subprocess.run(
        ["git", "bundle", "create", "-", "HEAD"],
        cwd=project,
        env=git.git_env(),
        capture_output=True,
        timeout=SYNC_TIMEOUT_S,
        check=False,
    )
    if bundle.returncode != 0:
        raise ContainerError(
            f"git bundle failed in {project}: {bundle.stderr.decode(errors='replace').strip()}"
        )
    base = git.current_branch(project) or "main"
    _receive(cli, name, bundle.stdout, _identity(project), branch, base)


def fork_project(cli: str, source: str, target: str, project: Path, branch: str, base: str) -> None:
    """Sync the source container's checkout (its committed HEAD) into the target's /src on
    `branch`: what a fork of the workspace starts from. `base`: the source's branch name."""
    ensure_running(cli, source)
    done = exec_sh(cli, source, _BUNDLE, CONTAINER_CHECKOUT)
    if done.returncode != 0:
        raise ContainerError(f"could not bundle the source container's checkout: {_why(cli, done)}")
    _receive(cli, target, done.stdout, _identity(project), branch, base)


def _receive(
    cli: str, name: str, bundle: bytes, identity: tuple[str, str], branch: str, base: str
) -> None:
    """Fetch `bundle`'s HEAD into a new repository at /src on `branch`, and mark where it
    started as `refs/remotes/origin/<base>` (`origin/HEAD` points at it): the base the review
    diff compares the workspace with, so the agent's commits show there too."""
    done = exec_sh(cli, name, _RECEIVE, CONTAINER_CHECKOUT, branch, *identity, base, input=bundle)
    if done.returncode != 0:
        raise ContainerError(f"could not sync the project into the container: {_why(cli, done)}")


def _identity(project: Path) -> tuple[str, str]:
    """The project's git user name and email (empty when unset): not a credential, and what
    the agent's commits in the container should carry."""
    values = []
    for key in ("user.name", "user.email"):
        done = subprocess.run(
            ["git", "config", "--get", key],
            cwd=project,
            env=git.git_env(),
            capture_output=True,
            text=True,
            check=False,
        )
        values.append(done.stdout.strip() if done.returncode == 0 else "")
    return values[0], values[1]


_HEAD = r"""
cd "$1" && git rev-parse --verify --quiet HEAD
"""


def head_commit(cli: str, name: str) -> str | None:
    """The commit checked out in the container's /src; None without commits (or without /src)."""
    ensure_running(cli, name)
    done = exec_sh(cli, name, _HEAD, CONTAINER_CHECKOUT)
    if done.returncode != 0:
        return None
    return done.stdout.decode(errors="replace").strip() or None


_RENAME_BRANCH = r"""
cd "$1" 2>/dev/null || exit 0
b=$(git symbolic-ref --quiet --short HEAD || true)
if [ "$b" = "$2" ] && ! git rev-parse --verify --quiet "refs/heads/$3" >/dev/null; then
  git branch -m "$2" "$3"; b=$3
fi
printf '%s' "$b"
"""


def rename_branch(cli: str, name: str, old: str, new: str) -> str | None:
    """Rename the checkout's branch when it still carries the old workspace name; returns the
    checked-out branch afterwards."""
    ensure_running(cli, name)
    done = exec_sh(cli, name, _RENAME_BRANCH, CONTAINER_CHECKOUT, old, new)
    if done.returncode != 0:
        raise ContainerError(f"could not rename the branch in the container: {_why(cli, done)}")
    return done.stdout.decode(errors="replace").strip() or None


_STATUS = r"""
cd "$1" 2>/dev/null || exit 2
git status --porcelain=v1 -z --untracked-files=all
"""


def dirty_files(cli: str, name: str) -> list[str] | None:
    """Uncommitted files of the container's checkout; [] when clean or when the container is
    gone; None when it cannot be told."""
    if container_state(cli, name) is None:
        return []
    ensure_running(cli, name)
    done = exec_sh(cli, name, _STATUS, CONTAINER_CHECKOUT)
    if done.returncode == 2:
        return []
    if done.returncode != 0:
        return None
    return git.parse_porcelain_z(done.stdout.decode(errors="surrogateescape"))


def labelled(cli: str, workspace_id: str) -> list[str]:
    """The ids of the containers (running or not) labelled with the workspace's id."""
    done = _cli(cli, "ps", "-a", "-q", "--filter", f"label={LABEL}={workspace_id}")
    if done.returncode != 0:
        raise ContainerError(f"could not list the workspace's containers: {_why(cli, done)}")
    return done.stdout.decode(errors="replace").split()


def stop_container(cli: str, name: str) -> None:
    if container_state(cli, name) not in (None, "exited", "stopped", "created"):
        done = _cli(cli, "stop", name)
        if done.returncode != 0:
            raise ContainerError(f"could not stop the container {name}: {_why(cli, done)}")


def remove_container(cli: str, name: str) -> None:
    """Remove the container (stopped first); nothing when it is already gone."""
    done = _cli(cli, "rm", "-f", name)
    if done.returncode != 0 and container_state(cli, name) is not None:
        raise ContainerError(f"could not remove the container {name}: {_why(cli, done)}")


def exec_sh(
    cli: str,
    name: str,
    script: str,
    *args: str,
    input: bytes | None = None,
    user: str | None = None,
    timeout_s: float = CLI_TIMEOUT_S,
) -> subprocess.CompletedProcess[bytes]:
    """Run a small POSIX sh script in the container (as `user` when given), `args` as its
    positional parameters."""
    as_user = ["--user", user] if user else []
    return _cli(
        cli, "exec", "-i", *as_user, name, "sh", "-c", script, "xum", *args,
        input=input or b"", timeout_s=timeout_s,
    )  # fmt: skip


def _cli(
    cli: str, *args: str, input: bytes | None = None, timeout_s: float = CLI_TIMEOUT_S
) -> subprocess.CompletedProcess[bytes]:
    try:
        return subprocess.run(
            [cli, *args],
            input=input,
            stdin=None if input is not None else subprocess.DEVNULL,
            capture_output=True,
            timeout=timeout_s,
            check=False,
            env=client_env(),
        )
    except FileNotFoundError:
        raise ContainerError(f"{cli} is not installed") from None


def _why(cli: str, done: subprocess.CompletedProcess[bytes]) -> str:
    text = done.stderr.decode(errors="replace").strip()
    return f"{cli}: {text.splitlines()[-1]}" if text else f"exit {done.returncode}"


__all__: Sequence[str] = [
    "container_name",
    "dirty_files",
    "fork_project",
    "head_commit",
    "labelled",
    "prepare",
    "push_project",
    "remove_container",
    "rename_branch",
    "start_container",
    "stop_container",
]
