"""The command line an editor's terminal runs for a delegated command.

An editor terminal (`terminal/create`) runs a program with the editor's own environment under
the variables xum sends, so two of xum's boundaries would be lost on the way if the script were
sent bare:

* the sandbox. The call's runtime is a `SandboxedRuntime` when xum would have run the command in
  bubblewrap; the editor is then sent the very `bwrap ... -- bash -c <script>` argv the local
  runtime would run (same mount plan, same `$TMPDIR`), with bwrap's absolute path. When that
  cannot be built, the command is not delegated (`None`): the local sandboxed runtime runs it, or
  refuses to, as it would without an editor. The bare script goes to the editor only when xum
  itself would run it bare (sandbox `off`, `auto` without a working bubblewrap, an approved
  escalation).
* xum's own secrets. The editor's environment holds the same provider keys xum's does (it
  started xum), so every command line starts with a small bash prelude that reads the names of
  its environment from `/proc/self/environ` (which also lists names bash itself cannot unset)
  and `exec`s `env -u NAME ...` for every `*_API_KEY` and `*_AUTH_TOKEN` variable
  (`xum.core.ownsecrets`) before the command. A project secret of such a name that xum sends on
  purpose is named after the prelude and kept. When the prelude cannot read the environment it
  refuses to run the command rather than run it with the keys.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from xum.core.ownsecrets import is_own_secret_name
from xum.runtime.base import Runtime
from xum.runtime.forwarding import ForwardingRuntime
from xum.runtime.local import LocalRuntime
from xum.runtime.sandbox import SandboxedRuntime, argv_for, find_bwrap, mount_plan

# Arguments: the names to keep, `--`, then the command. Upper-cased names are compared, as
# `is_own_secret_name` does.
ENV_SCRUB = r"""__xum_keep=' '
while [ "$#" -gt 0 ] && [ "$1" != -- ]; do __xum_keep="$__xum_keep$1 "; shift; done
shift
__xum_drop=()
if ! exec 3</proc/self/environ; then
  echo 'xum: cannot read /proc/self/environ to leave out provider keys; the command did not run' >&2
  exit 126
fi
while IFS= read -r -d '' __xum_kv <&3; do
  __xum_n=${__xum_kv%%=*}
  case ${__xum_n^^} in
    *_API_KEY|*_AUTH_TOKEN)
      case $__xum_keep in *" $__xum_n "*) ;; *) __xum_drop+=(-u "$__xum_n") ;; esac ;;
  esac
done
exec 3<&-
exec env "${__xum_drop[@]}" "$@"
"""
SCRUB_NAME = "xum-env-scrub"  # the prelude's $0, shown by `ps`


def without_own_secrets_argv(argv: list[str], sent: Iterable[str]) -> list[str]:
    """`argv` behind the prelude that drops xum's own secrets from the editor's environment;
    names in `sent` (variables xum passes on purpose: project secrets) are kept."""
    keep = sorted({name for name in sent if is_own_secret_name(name)})
    return ["bash", "-c", ENV_SCRUB, SCRUB_NAME, *keep, "--", *argv]


def _sandbox_of(runtime: Runtime) -> SandboxedRuntime | bool | None:
    """The runtime's sandbox: the `SandboxedRuntime` on top; None when there is none at all;
    False when one is further down, under a layer whose meaning here is unknown."""
    if isinstance(runtime, SandboxedRuntime):
        return runtime
    inner: object = runtime
    while isinstance(inner, ForwardingRuntime):
        inner = inner.inner
        if isinstance(inner, SandboxedRuntime):
            return False
    return None


def editor_argv(runtime: Runtime, script: str, cwd: str) -> list[str] | None:
    """The argv (before the secret prelude) that runs `script` in `cwd` with the boundaries
    `runtime` would give it; None when it cannot be built (run it through `runtime` instead)."""
    sandbox = _sandbox_of(runtime)
    if sandbox is None:
        return ["bash", "-c", script]
    if not isinstance(sandbox, SandboxedRuntime) or not isinstance(sandbox.inner, LocalRuntime):
        return None
    bwrap = find_bwrap()
    if bwrap is None:
        return None
    layout = sandbox.layout
    try:
        if layout.temp_dir is not None:
            os.makedirs(layout.temp_dir, mode=0o700, exist_ok=True)
    except OSError:
        return None
    plan = mount_plan(layout, cwd=cwd, bwrap=bwrap)
    return [*argv_for(plan), "bash", "-c", script]
