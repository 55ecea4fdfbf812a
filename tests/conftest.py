"""Shared test settings: hypothesis profiles ("dev" by default, "ci" when CI is set),
per-user folders of their own for the whole run, the `compiled` marker, and a real
PostgreSQL (pg_kit.py): one cluster for the session, a fresh store per test, and
`db`, which runs a test once per backend of the store.

The server keeps its database and the client its session tokens in the platform's
per-user folders (platformdirs). Tests, and the servers and clients they start as
processes, must never read or write the real ones, so the XDG variables point into a
throwaway folder before any test runs (on Linux, where the tests run).
"""

import compileall
import fnmatch
import importlib
import os
import shutil
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pg_kit
import pytest
from hypothesis import HealthCheck, settings

settings.register_profile("dev", deadline=None)
settings.register_profile(
    "ci", deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

_HOME = tempfile.mkdtemp(prefix="pisyedili-tests-")

TESTS = Path(__file__).resolve().parent

COMPILED_TESTS = (
    "rules/test_*.py",
    "bots/test_*.py",
    "server/test_table_*.py",
    "server/test_journal.py",
    "server/test_restart.py",
    "server/test_restart_process.py",
    "server/test_net_play.py",  # whole matches over loopback, hard bots in threads
    "packaging/test_packaging_compiled_flag.py",  # proves the pass ran the compiled engine
    "protocol/test_*.py",
)
"""The test modules (globs under tests/) marked `compiled`: those whose outcome the mypyc
build of `_build_backend.COMPILED` can change. CI runs them again against that build
(``pytest -m compiled``); the rest import the same Python source either way."""

COMPILED_COVERAGE = {
    "pisyedili.server.rules.cards": "rules/test_rules_api.py",
    "pisyedili.server.rules.moves": "rules/test_rules_api.py",
    "pisyedili.server.rules.tables": "rules/test_rules_fast_paths.py",
    "pisyedili.server.rules.result": "rules/test_rules_api.py",
    "pisyedili.server.rules.deal": "rules/test_rules_properties.py",
    "pisyedili.server.rules.view": "bots/test_bots_view_only.py",
    "pisyedili.server.table.core": "server/test_table_core.py",
    "pisyedili.protocol.types": "protocol/test_schema.py",
    "pisyedili.protocol.schema": "protocol/test_schema.py",
    "pisyedili.protocol.codec": "protocol/test_codec.py",
    "pisyedili.server.bots.knowledge": "bots/test_bots_opening.py",
    "pisyedili.server.bots.rollout": "bots/test_bots_play.py",
    "pisyedili.server.bots.sampling": "bots/test_bots_sampling.py",
    "pisyedili.server.bots.search": "bots/test_bots_play.py",
    "pisyedili.server.bots.situation": "bots/test_bots_opening.py",
}
"""For each compiled module, a `compiled` test module that runs it: every module of
`_build_backend.COMPILED` must have one (tests/packaging/test_packaging_compiled_set.py)."""


def is_compiled_test(path: Path) -> bool:
    """Whether the test module at `path` is one of `COMPILED_TESTS`."""
    path = path.resolve()
    if not path.is_relative_to(TESTS):
        return False
    relative = path.relative_to(TESTS).as_posix()
    return any(fnmatch.fnmatchcase(relative, pattern) for pattern in COMPILED_TESTS)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    for item in items:
        if is_compiled_test(item.path):
            item.add_marker(pytest.mark.compiled)


def _compile_our_packages() -> None:
    """Write our packages' bytecode once, before any test starts a process.

    The tests start hundreds of Python processes (servers, clients, bots); where
    PYTHONDONTWRITEBYTECODE is set, as in many container images, none of them caches
    what it compiles, so each compiled every module of ours it imported from source
    again: about 0.45 s a start on a 2-core machine. An installed wheel's modules were
    compiled by pip; the editable install's are the checkout's, compiled here. The
    files are checked against their sources' times as usual, so none is ever stale."""
    for name in ("pisyedili.protocol", "pisyedili.server", "pisyedili.client"):
        for folder in importlib.import_module(name).__path__:
            compileall.compile_dir(folder, quiet=2)


def pytest_configure(config: pytest.Config) -> None:
    if not hasattr(config, "workerinput"):  # once a run, before the workers start
        _compile_our_packages()
    for name in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        os.environ[name] = os.path.join(_HOME, name.lower())


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_HOME, ignore_errors=True)


@pytest.fixture(scope="session")
def postgres_cluster() -> Iterator[pg_kit.Cluster | str]:
    """The session's cluster, started at its first use; or why there is none."""
    with pg_kit.cluster() as found:
        yield found


@pytest.fixture
def postgres(postgres_cluster: pg_kit.Cluster | str) -> pg_kit.Cluster:
    """A PostgreSQL to make databases on (the test skips, or fails in CI, without one)."""
    if isinstance(postgres_cluster, str):
        pg_kit.unavailable(postgres_cluster)
    assert isinstance(postgres_cluster, pg_kit.Cluster)
    return postgres_cluster


@pytest.fixture(params=["sqlite", "postgres"])
def new_db(request: pytest.FixtureRequest, tmp_path: Path) -> Callable[[str], str]:
    """Makes new stores: `new_db(name)` is a fresh store's `--db`, a SQLite file in the
    test's folder, or a new PostgreSQL database's URL. A test that takes it runs once
    per backend."""
    if request.param == "postgres":
        cluster: pg_kit.Cluster = request.getfixturevalue("postgres")
        return lambda name: cluster.store()
    return lambda name: str(tmp_path / f"{name}.sqlite3")


@pytest.fixture
def db(new_db: Callable[[str], str]) -> str:
    """A new store's `--db`, once per backend (`new_db`)."""
    return new_db("server")
