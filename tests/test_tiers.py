"""The fast tier is exactly the modules that start nothing: every test module that
starts a process, a browser, Redis or PostgreSQL (itself or through a kit) is listed in
conftest.INTEGRATION_TESTS, and every module listed there does."""

import fnmatch

from conftest import (
    INTEGRATION_TESTS,
    LONGEST_FIRST,
    TESTS,
    is_integration_test,
    uses_services,
)

MODULES = sorted([*TESTS.glob("test_*.py"), *TESTS.glob("*/test_*.py")])
"""Every test module: those beside conftest.py and those in the folders below it."""


def test_the_integration_list_is_the_modules_that_start_services() -> None:
    modules = MODULES
    assert modules
    unlisted = [p.relative_to(TESTS).as_posix() for p in modules
                if uses_services(p) and not is_integration_test(p)]
    assert not unlisted, f"add these to INTEGRATION_TESTS in tests/conftest.py: {unlisted}"
    needless = [p.relative_to(TESTS).as_posix() for p in modules
                if is_integration_test(p) and not uses_services(p)]
    assert not needless, f"these start nothing; take them out of INTEGRATION_TESTS: {needless}"


def test_a_module_that_starts_a_process_through_a_kit_counts() -> None:
    web = TESTS / "web"
    assert uses_services(web / "test_web_boot.py")  # only through web_fixtures -> web_kit
    assert not uses_services(web / "test_web_sounds.py")


def test_every_pattern_of_the_integration_list_marks_a_test_module() -> None:
    """A pattern left behind by a renamed test module would quietly mark nothing."""
    modules = [p.relative_to(TESTS).as_posix() for p in MODULES]
    for pattern in INTEGRATION_TESTS:
        assert any(fnmatch.fnmatchcase(m, pattern) for m in modules), pattern


def test_the_longest_modules_run_first_and_are_long_suite_modules() -> None:
    for name in LONGEST_FIRST:
        assert (TESTS / name).is_file(), f"LONGEST_FIRST names no module {name}"
        assert is_integration_test(TESTS / name), f"{name} is not in the long suite"
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
