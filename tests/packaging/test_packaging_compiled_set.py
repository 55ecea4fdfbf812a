"""The tests CI runs again against the compiled engine (`pytest -m compiled`) cover every
module the compiled build compiles: a module added to `_build_backend.COMPILED` with no
marked test of its own fails here, not silently untested compiled."""

from __future__ import annotations

import ast
import fnmatch

from conftest import COMPILED_COVERAGE, COMPILED_TESTS, TESTS, is_compiled_test
from packaging_kit import load_backend

backend = load_backend()


def imported_modules(source: str) -> set[str]:
    """Every module a test module's imports name, and each name imported from one."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module:
            names |= {node.module, *(f"{node.module}.{alias.name}" for alias in node.names)}
    return names


def test_every_compiled_module_has_a_marked_test() -> None:
    assert sorted(COMPILED_COVERAGE) == sorted(backend.COMPILED)
    for module, test in COMPILED_COVERAGE.items():
        path = TESTS / test
        assert path.is_file(), (module, test)
        assert is_compiled_test(path), f"{test} is not in COMPILED_TESTS"
        # The test imports the module, a name from it, or its package, which re-exports it.
        package = module.rpartition(".")[0]
        names = imported_modules(path.read_text(encoding="utf-8"))
        assert any(n in (module, package) or n.startswith((module + ".", package + "."))
                   for n in names), (module, test)


def test_every_pattern_of_the_compiled_set_marks_a_test_module() -> None:
    """A pattern left behind by a renamed test module would quietly mark nothing."""
    modules = [p for p in TESTS.rglob("test_*.py") if is_compiled_test(p)]
    for pattern in COMPILED_TESTS:
        assert [p for p in modules
                if fnmatch.fnmatchcase(p.relative_to(TESTS).as_posix(), pattern)], pattern
