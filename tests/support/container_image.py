"""A small local container image for the Docker runtime's tests, built without a registry.

The image is a root filesystem assembled from this machine's own binaries (bash, git, coreutils
and the libraries `ldd` names for them), imported with `<cli> import`. Its `/etc/os-release`
says `ID=xum-test`, so a test can tell that a command ran inside the container. The image's
tag is a hash of what went into it, so it is built once and reused by later test runs (the
container engine's own storage is the cache).

`podman_conf(dir)` writes the containers.conf that Debian's podman with runc needs on machines
whose cgroups do not allow the default ulimits (tests point `CONTAINERS_CONF` at it; the
machine's own config is never changed).
"""

from __future__ import annotations

import fcntl
import hashlib
import io
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
from pathlib import Path

# What a command inside the image (the runtime's scripts, git, the tests' commands) may run.
TOOLS = (
    *("bash", "sh", "git", "cat", "head", "tail", "mv", "cp", "rm", "mkdir", "chmod", "chown"),
    *("stat", "realpath", "sync", "sleep", "printenv", "env", "ls", "id", "tar", "grep", "sed"),
    *("touch", "wc", "sort", "tr", "dirname", "basename", "readlink", "true", "false", "mktemp"),
    *("tee", "cut", "find", "xargs", "uname", "date", "rmdir", "ln", "test", "seq"),
)
# Put in when this machine has them (the credential tests use ssh-add).
OPTIONAL_TOOLS = ("ssh-add",)
# A stand-in for the GitHub CLI: it notes how it was called (and whether it saw a token).
FAKE_GH = '#!/bin/sh\necho "$* token=${GH_TOKEN:+set}" >> /tmp/gh-calls\n'
OS_RELEASE = 'PRETTY_NAME="xum test image"\nID=xum-test\nVERSION_ID="1"\n'
PASSWD = "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534:nobody:/nonexistent:/bin/sh\n"
GROUP = "root:x:0:\nnogroup:x:65534:\n"
RECIPE_VERSION = "2"  # bump when what the image holds changes

PODMAN_CONF = "[containers]\ndefault_ulimits = []\n"
RUNC_CONF = '[engine]\nruntime = "runc"\n'  # where runc is installed (cgroups v1 needs it)


def podman_conf(directory: Path) -> Path:
    path = directory / "containers.conf"
    path.write_text(PODMAN_CONF + (RUNC_CONF if shutil.which("runc") else ""))
    return path


def _tools() -> list[str]:
    return [*TOOLS, *(t for t in OPTIONAL_TOOLS if shutil.which(t))]


def _binaries() -> list[str]:
    found = []
    for tool in _tools():
        path = shutil.which(tool)
        if path is None:
            raise RuntimeError(f"{tool} is not installed: the test image is built from it")
        found.append(os.path.realpath(path))
    return found


def _libraries(binaries: list[str]) -> set[str]:
    libs: set[str] = set()
    for binary in binaries:
        done = subprocess.run(["ldd", binary], capture_output=True, text=True, check=False)
        for match in re.finditer(r"(/\S+)\s+\(0x", done.stdout):
            libs.add(match.group(1))
    return libs


def _usr(path: str) -> str:
    """A path under the merged /usr layout (Debian: /bin, /lib, /lib64 are links into /usr)."""
    for top in ("/bin/", "/sbin/", "/lib/", "/lib64/"):
        if path.startswith(top):
            return "/usr" + path
    return path


def _add_file(tar: tarfile.TarFile, source: str, seen: set[str]) -> None:
    """`source` at its own path, and every symlink on the way to its real file."""
    path = _usr(source)
    while path not in seen:
        seen.add(path)
        if os.path.islink(path):
            info = tarfile.TarInfo(path.lstrip("/"))
            info.type = tarfile.SYMTYPE
            info.linkname = os.readlink(path)
            tar.addfile(info)
            path = _usr(os.path.normpath(os.path.join(os.path.dirname(path), info.linkname)))
            continue
        tar.add(path, arcname=path.lstrip("/"), recursive=False)
        return


def _text(tar: tarfile.TarFile, path: str, text: str, mode: int = 0o644) -> None:
    data = text.encode()
    info = tarfile.TarInfo(path)
    info.size, info.mode = len(data), mode
    tar.addfile(info, io.BytesIO(data))


def _directory(tar: tarfile.TarFile, path: str, mode: int = 0o755) -> None:
    info = tarfile.TarInfo(path)
    info.type, info.mode = tarfile.DIRTYPE, mode
    tar.addfile(info)


def _rootfs(target: Path) -> None:
    binaries = _binaries()
    libs = _libraries(binaries)
    git_core = Path("/usr/lib/git-core")
    seen: set[str] = set()
    with tarfile.open(target, "w") as tar:
        for directory in ("usr", "usr/bin", "usr/lib", "usr/lib64", "etc", "root", "src", "run"):
            _directory(tar, directory)
        for directory in ("usr/local", "usr/local/bin"):
            _directory(tar, directory)
        for directory in ("tmp", "var/tmp"):
            _directory(tar, directory, 0o1777)
        for name in ("bin", "sbin", "lib", "lib64"):
            info = tarfile.TarInfo(name)
            info.type, info.linkname = tarfile.SYMTYPE, f"usr/{name}"
            tar.addfile(info)
        _directory(tar, "usr/sbin")
        for tool in _tools():
            _add_file(tar, shutil.which(tool) or tool, seen)
        for lib in sorted(libs):
            _add_file(tar, lib, seen)
        tar.add(git_core, arcname=str(git_core).lstrip("/"))
        templates = Path("/usr/share/git-core/templates")
        if templates.is_dir():
            tar.add(templates, arcname=str(templates).lstrip("/"))
        _text(tar, "etc/os-release", OS_RELEASE)
        _text(tar, "usr/local/bin/gh", FAKE_GH, 0o755)
        _text(tar, "etc/passwd", PASSWD)
        _text(tar, "etc/group", GROUP)


def _recipe_key() -> str:
    digest = hashlib.sha256(RECIPE_VERSION.encode())
    for path in [*_binaries(), "/usr/lib/git-core/git"]:
        st = os.stat(path)
        digest.update(f"{path}\0{st.st_size}\0{st.st_mtime_ns}\n".encode())
    return digest.hexdigest()[:16]


def ensure_image(cli: str, work: Path) -> str:
    """The test image's reference, built (into `work`, then imported) unless the engine has it
    already."""
    ref = f"localhost/xum-test-base:{_recipe_key()}"
    # Parallel test workers build it once: the first holds the lock, the others find the image.
    lock_path = Path(tempfile.gettempdir()) / f"xum-test-image-{ref.rsplit(':', 1)[1]}.lock"
    with open(lock_path, "a") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        return _ensure_image(cli, work, ref)


def _ensure_image(cli: str, work: Path, ref: str) -> str:
    env = os.environ.copy()
    have = subprocess.run([cli, "image", "exists", ref], env=env, capture_output=True, check=False)
    if have.returncode == 0:
        return ref
    tarball = work / "rootfs.tar"
    _rootfs(tarball)
    subprocess.run(
        [cli, "import", str(tarball), ref], env=env, capture_output=True, check=True, timeout=300
    )
    tarball.unlink()
    # Older builds of the image (made before a binary changed) are not needed any more.
    listed = subprocess.run(
        [cli, "images", "--format", "{{.Repository}}:{{.Tag}}"],
        env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    for old in listed.stdout.split():
        if old.startswith(ref.split(":")[0] + ":") and old != ref:
            subprocess.run([cli, "rmi", old], env=env, capture_output=True, check=False)
    return ref
