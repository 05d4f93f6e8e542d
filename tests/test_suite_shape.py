"""The shape of the test suite: set-up is shared, not copied. No test module defines its own
`repo` fixture (tests/conftest.py has the one, shaped with `@pytest.mark.repo`), and no test
module imports from another test module (shared helpers live in tests/support/)."""

from __future__ import annotations

import ast
from pathlib import Path

TESTS = Path(__file__).resolve().parent
ROOT_CONFTEST = TESTS / "conftest.py"


def python_files() -> list[Path]:
    return sorted(p for p in TESTS.rglob("*.py") if "golden" not in p.parts)


def is_test_module(name: str) -> bool:
    """`tests.unit.test_projection` is a test module; `tests.support.tools` is not."""
    return name.startswith("tests.") and name.rsplit(".", 1)[-1].startswith("test_")


def imported_test_modules(tree: ast.AST) -> list[tuple[int, str]]:
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            if is_test_module(node.module):
                found.append((node.lineno, node.module))
            elif node.module.startswith("tests"):
                found.extend(
                    (node.lineno, f"{node.module}.{a.name}")
                    for a in node.names
                    if is_test_module(f"{node.module}.{a.name}")
                )
        elif isinstance(node, ast.ImportFrom) and node.level and node.module:
            if node.module.rsplit(".", 1)[-1].startswith("test_"):
                found.append((node.lineno, "." * node.level + node.module))
        elif isinstance(node, ast.Import):
            found.extend((node.lineno, a.name) for a in node.names if is_test_module(a.name))
    return found


def repo_fixtures(tree: ast.AST) -> list[int]:
    """Lines of functions named `repo` decorated as a pytest fixture."""
    lines = []
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
            and node.name == "repo"
            and any("fixture" in ast.unparse(d) for d in node.decorator_list)
        ):
            lines.append(node.lineno)
    return lines


def test_no_test_module_imports_another_test_module() -> None:
    offenders = [
        f"{path.relative_to(TESTS.parent)}:{line}: imports {module}"
        for path in python_files()
        for line, module in imported_test_modules(ast.parse(path.read_text()))
    ]
    assert not offenders, "move what is shared to tests/support/:\n" + "\n".join(offenders)


def test_only_the_root_conftest_defines_a_repo_fixture() -> None:
    offenders = [
        f"{path.relative_to(TESTS.parent)}:{line}"
        for path in python_files()
        if path != ROOT_CONFTEST
        for line in repo_fixtures(ast.parse(path.read_text()))
    ]
    assert not offenders, (
        "use the `repo` fixture of tests/conftest.py (shape it with @pytest.mark.repo):\n"
        + "\n".join(offenders)
    )
    assert repo_fixtures(ast.parse(ROOT_CONFTEST.read_text()))


def test_the_checks_catch_what_they_are_for() -> None:
    bad = ast.parse(
        "import pytest\n"
        "from tests.unit.test_projection import assert_valid\n"
        "from tests.integration import test_engine\n"
        "from tests.support.tools import make_ctx\n"
        "@pytest.fixture\nasync def repo(tmp_path): ...\n"
    )
    assert [m for _, m in imported_test_modules(bad)] == [
        "tests.unit.test_projection",
        "tests.integration.test_engine",
    ]
    assert repo_fixtures(bad) == [6]
