"""The layering of ARCHITECTURE.md, held by reading every import in src/xum.

Every `import` and `from ... import` is found with `ast` wherever it is written: at module level,
inside functions (the lazy imports that keep start-up fast) and under `if TYPE_CHECKING:` (a type
that crosses a forbidden arrow is still a dependency a reader has to know about). Each forbidden
arrow below carries its reason; the test names every offending file and line.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

SRC = Path(__file__).resolve().parent.parent / "src" / "xum"

# The packages of src/xum, lowest first. A lower layer never imports a higher one.
LAYERS: dict[str, int] = {
    "core": 0,
    "store": 1,
    "llm": 1,
    "tools": 2,
    "runtime": 2,
    "context": 3,
    "engine": 4,
    "workspaces": 5,
    "host": 6,  # one live session per workspace, shared by every front-end
    "cli": 7,
    "server": 7,
    "acp": 7,
    "tui": 7,
}
FRONT_ENDS = ("cli", "server", "acp", "tui")

# Arrows between packages that the layer numbers alone would allow (same layer, or a front-end
# reaching into another), with the reason each is forbidden.
FORBIDDEN: dict[tuple[str, str], str] = {
    ("store", "llm"): "the log and the config files must not depend on how providers are spoken "
    "to; shared message types live in core",
    ("llm", "store"): "provider clients take a resolved Endpoint; reading providers.jsonc is the "
    "job of the layer that reads the config (engine.endpoints)",
    ("runtime", "tools"): "a runtime executes and reads files; tools are built on it, not under it",
    ("server", "cli"): "front-ends share code through the layers below, never through each other",
    ("acp", "cli"): "front-ends share code through the layers below, never through each other",
    ("tui", "cli"): "front-ends share code through the layers below, never through each other",
    ("tui", "server"): "the terminal UI talks to a server over its API, not by importing it",
    ("acp", "server"): "the ACP bridge talks to a server over its API, not by importing it",
    ("server", "acp"): "front-ends share code through the layers below, never through each other",
    ("server", "tui"): "front-ends share code through the layers below, never through each other",
    ("acp", "tui"): "front-ends share code through the layers below, never through each other",
    ("tui", "acp"): "front-ends share code through the layers below, never through each other",
}
# The one sanctioned crossing between front-ends: each `xum <command>` module in cli/ starts the
# front-end it is named after.
CLI_STARTS = {"cli/server.py": "server", "cli/acp.py": "acp", "cli/tui.py": "tui"}


@dataclass(frozen=True)
class Import:
    source: str  # path relative to src/xum, e.g. "engine/agent.py"
    line: int
    target: str  # the imported module, e.g. "xum.store.sessionlog"


def package_of(module: str) -> str | None:
    """`xum.engine.agent` -> `engine`; `xum` itself (the version) counts as core."""
    parts = module.split(".")
    if parts[0] != "xum":
        return None
    if len(parts) == 1 or parts[1] in ("__init__", "__main__", "_build_info"):
        return "core"
    return parts[1]


def module_name(path: Path) -> str:
    rel = path.relative_to(SRC.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def imports_of(path: Path, as_source: str | None = None) -> list[Import]:
    """Every import in the file, resolved to an absolute module name (relative ones too).
    `as_source`: read the file as if it lived at that path under src/xum."""
    source = as_source or str(path.relative_to(SRC))
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    here = module_name(SRC / source)
    package = here if source.endswith("__init__.py") else here.rpartition(".")[0]
    found: list[Import] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.extend(Import(source, node.lineno, alias.name) for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join([*base, *([node.module] if node.module else [])])
            else:
                target = node.module or ""
            # `from xum import engine` imports the package `xum.engine`.
            if target == "xum":  # `from xum import engine` (a package) or `__version__`
                found.extend(
                    Import(source, node.lineno, f"xum.{a.name}" if _is_module(a.name) else "xum")
                    for a in node.names
                )
            else:
                found.append(Import(source, node.lineno, target))
    return found


def _is_module(name: str) -> bool:
    return (SRC / name).is_dir() or (SRC / f"{name}.py").exists()


def violation(imp: Import) -> str | None:
    """Why `imp` breaks the layering, or None."""
    if imp.source == "__main__.py":
        return None  # `python -m xum`: the program's entry point starts the CLI
    src_pkg = imp.source.split("/")[0] if "/" in imp.source else "core"
    dst_pkg = package_of(imp.target)
    if dst_pkg is None or dst_pkg == src_pkg:
        return None
    if dst_pkg == "testing":
        return "product code never imports xum.testing (the fake LLM and fixtures are for tests)"
    if src_pkg == "testing":
        return None  # test helpers may use anything they drive
    if src_pkg not in LAYERS or dst_pkg not in LAYERS:
        return f"{src_pkg} or {dst_pkg} is not a layer ARCHITECTURE.md names; add it there first"
    if CLI_STARTS.get(imp.source) == dst_pkg:
        return None
    reason = FORBIDDEN.get((src_pkg, dst_pkg))
    if reason is not None:
        return reason
    if src_pkg in FRONT_ENDS and dst_pkg in FRONT_ENDS:
        return "front-ends share code through the layers below, never through each other"
    if LAYERS[dst_pkg] > LAYERS[src_pkg]:
        return (
            f"{src_pkg} (L{LAYERS[src_pkg]}) must not import {dst_pkg} (L{LAYERS[dst_pkg]}): "
            "a lower layer never imports a higher one; pass what it needs in through a "
            "protocol the lower layer defines"
        )
    return None


@functools.cache  # two tests read the whole tree; parse it once per process
def all_imports() -> list[Import]:
    return [imp for path in sorted(SRC.rglob("*.py")) for imp in imports_of(path)]


def test_the_source_tree_is_there() -> None:
    # A guard against the test passing vacuously (a moved tree, an empty walk).
    imports = all_imports()
    assert len(imports) > 500
    assert any(i.target.startswith("xum.engine") for i in imports)


def test_no_import_crosses_a_forbidden_arrow() -> None:
    problems = [
        f"{imp.source}:{imp.line} imports {imp.target}: {why}"
        for imp in all_imports()
        if (why := violation(imp)) is not None
    ]
    assert not problems, "layering violations:\n" + "\n".join(problems)


@pytest.mark.parametrize(
    ("source", "target", "allowed"),
    [
        ("engine/agent.py", "xum.workspaces.assembly", False),
        ("store/frame_types.py", "xum.llm.types", False),
        ("llm/client.py", "xum.store.providers", False),
        ("core/paths.py", "xum.store.config", False),
        ("tools/bash.py", "xum.engine.events", False),
        ("runtime/local.py", "xum.tools.bounds", False),
        ("context/workspace.py", "xum.engine.agent", False),
        ("server/hosting.py", "xum.cli.run", False),
        ("workspaces/assembly.py", "xum.server.hub", False),
        ("engine/agent.py", "xum.testing.fakellm", False),
        ("cli/server.py", "xum.server.app", True),
        ("cli/run.py", "xum.server.app", False),
        ("workspaces/assembly.py", "xum.engine.agent", True),
        ("tools/bash.py", "xum.runtime.base", True),
        ("engine/agent.py", "xum.core.messages", True),
        ("llm/http.py", "xum", True),
        ("host/workspace_host.py", "xum.server.hub", False),
        ("host/workspace_host.py", "xum.tui.app", False),
        ("workspaces/assembly.py", "xum.host.workspace_host", False),
        ("host/workspace_host.py", "xum.workspaces.assembly", True),
        ("server/hosting.py", "xum.host.hosts", True),
        ("acp/session.py", "xum.host.workspace_host", True),
    ],
)
def test_the_rules_themselves(source: str, target: str, allowed: bool) -> None:
    # The checker must refuse what ARCHITECTURE.md forbids, or the test above proves nothing.
    assert (violation(Import(source, 1, target)) is None) is allowed


def test_function_level_and_type_checking_imports_are_seen(tmp_path: Path) -> None:
    path = tmp_path / "probe.py"
    path.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from xum.workspaces import busy\n"
        "def f():\n    from ..server import hub\n    import xum.cli.run\n"
    )
    found = [i for i in imports_of(path, "engine/probe.py") if i.target.startswith("xum")]
    assert sorted(i.target for i in found) == ["xum.cli.run", "xum.server", "xum.workspaces"]
    assert all(violation(i) is not None for i in found)


# The engine's parts (compaction, goals, dispatch, the tool-call runner, the envelope) serve the
# session through the protocols of engine/turnhost.py; none of them imports engine/agent.py,
# so the session is built from its parts and not tangled with them (issue 20, problem 4).
ENGINE_SESSION = "xum.engine.agent"


def session_imports(path: Path, as_source: str | None = None) -> list[str]:
    """Every place `path` imports engine/agent.py, in any form: `import xum.engine.agent`,
    `from xum.engine.agent import X`, `from xum.engine import session`, the relative forms,
    at module level, inside functions or under `if TYPE_CHECKING:`."""
    source = as_source or str(path.relative_to(SRC))
    found = [
        f"{source}:{imp.line} imports {imp.target}"
        for imp in imports_of(path, as_source)
        if imp.target == ENGINE_SESSION or imp.target.startswith(ENGINE_SESSION + ".")
    ]
    # `from xum.engine import session` and `from . import session` name the module as an
    # imported name, which imports_of resolves to the package only.
    here = module_name(SRC / source)
    package = here if source.endswith("__init__.py") else here.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if not isinstance(node, ast.ImportFrom):
            continue
        if node.level:
            base = package.split(".")[: len(package.split(".")) - (node.level - 1)]
            target = ".".join([*base, *([node.module] if node.module else [])])
        else:
            target = node.module or ""
        if any(f"{target}.{alias.name}" == ENGINE_SESSION for alias in node.names):
            found.append(f"{source}:{node.lineno} imports {ENGINE_SESSION} (from {target})")
    return found


def test_no_engine_module_imports_the_session() -> None:
    problems = [
        problem
        for path in sorted((SRC / "engine").glob("*.py"))
        if path.name != "agent.py"
        for problem in session_imports(path)
    ]
    assert not problems, (
        "engine modules must reach the session through a protocol (engine/turnhost.py), not "
        "by importing engine/agent.py:\n" + "\n".join(problems)
    )


def test_the_session_rule_sees_every_form(tmp_path: Path) -> None:
    path = tmp_path / "probe.py"
    path.write_text(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n    from xum.engine.agent import AgentSession\n"
        "from . import agent\n"
        "from xum.engine import agent as s\n"
        "def f():\n    import xum.engine.agent\n"
        "from .agent import TurnResult\n"
        "from xum.engine import turn\n"
    )
    found = session_imports(path, "engine/probe.py")
    assert sorted(int(line.split(":")[1].split()[0]) for line in found) == [3, 4, 5, 7, 8]


# --- Import loops inside a package ----------------------------------------------------------
# A loop of modules that import each other (at any level, TYPE_CHECKING included) cannot be
# read, tested or moved one module at a time. Two modules that know each other are tolerated; a
# loop of three or more inside one package is not. The loops named here are being taken apart by
# other parts of the same redesign (issue 20); each entry must match the loop exactly, so the
# test fails both when a loop grows and when one goes away (then delete its entry).
KNOWN_LOOPS: dict[str, frozenset[str]] = {
    "tui": frozenset({"xum.tui.actions", "xum.tui.app", "xum.tui.fit"}),
}


def module_graph() -> dict[str, set[str]]:
    """Module -> the xum modules it imports. `from pkg import name` counts as an import of the
    submodule `pkg.name` when there is one (that is the module a reader has to open)."""
    paths = {module_name(p): p for p in SRC.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in paths.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    parts = package.split(".")
                    parts = parts[: len(parts) - (node.level - 1)]
                    base = ".".join([*parts, *([node.module] if node.module else [])])
                for alias in node.names:
                    sub = f"{base}.{alias.name}"
                    targets.add(sub if sub in paths else base)
        graph[name] = {t for t in targets if t in paths and t != name}
    return graph


def loops(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[frozenset[str]] = []
    for root in sorted(graph):
        if root in index:
            continue
        work: list[tuple[str, list[str]]] = [(root, sorted(graph[root]))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, todo = work[-1]
            if todo:
                nxt = todo.pop()
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, sorted(graph[nxt])))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component: set[str] = set()
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.add(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(frozenset(component))
    return found


def package_loops() -> dict[str, list[frozenset[str]]]:
    """Per top-level package (its sub-packages included), the loops among its own modules."""
    graph = module_graph()
    by_package: dict[str, list[frozenset[str]]] = {}
    for package in sorted({package_of(m) or "" for m in graph} - {"", "core"}):
        prefix = f"xum.{package}."
        inside = {m: {t for t in ts if t.startswith(prefix)} for m, ts in graph.items()}
        sub = {m: ts for m, ts in inside.items() if m.startswith(prefix)}
        by_package[package] = loops(sub)
    return by_package


def test_no_import_loop_of_more_than_two_modules_inside_a_package() -> None:
    problems = []
    for package, found in package_loops().items():
        for loop in found:
            if len(loop) > 2 and KNOWN_LOOPS.get(package) != loop:
                problems.append(f"{package}: a loop of {len(loop)} modules: {sorted(loop)}")
        for known_pkg, known in KNOWN_LOOPS.items():
            if known_pkg == package and known not in found:
                problems.append(f"{package}: the known loop {sorted(known)} is gone; drop it")
    assert not problems, "import loops:\n" + "\n".join(problems)


def test_the_loop_finder_itself() -> None:
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"e"}, "e": {"d"}, "f": {"a"}}
    assert sorted(sorted(c) for c in loops(graph)) == [["a", "b", "c"], ["d", "e"]]


# --- Front-ends are adapters over the host -----------------------------------------------------
# Opening a session, driving its turns, queueing, continuing goals and parsing slash commands
# live in xum.host (issue 20). A front-end that calls these again is hosting sessions itself.
HOSTING_CALLS = re.compile(
    r"\b(open_workspace_session|run_turn|agent_turn|queue_message|next_queued|hold_writer|"
    r"parse_slash|goals\.drive)\b"
)
FRONT_ENDS = ("cli", "tui", "server", "acp")


def hosting_in(text: str) -> list[str]:
    return sorted(set(HOSTING_CALLS.findall(text)))


def test_no_front_end_hosts_sessions_itself() -> None:
    found = {
        str(path.relative_to(SRC)): names
        for front_end in FRONT_ENDS
        for path in sorted((SRC / front_end).rglob("*.py"))
        if (names := hosting_in(path.read_text(encoding="utf-8")))
    }
    assert not found, f"session hosting outside xum.host: {found}"


def test_the_hosting_rule_sees_a_call() -> None:
    assert hosting_in("await session.agent_turn(text)\nx = goals.drive(s, r)") == [
        "agent_turn",
        "goals.drive",
    ]
    assert hosting_in("hosts.send(record, text)") == []
