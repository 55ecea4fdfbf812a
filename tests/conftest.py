"""Shared test settings: hypothesis profiles ("dev" by default, "ci" when CI is set),
per-user folders of their own for the whole run, the `compiled` and `integration`
markers, and a real
PostgreSQL (pg_kit.py): one cluster for the session, a fresh store per test, and
`db`, which runs a test once per backend of the store.

The server keeps its database and the client its session tokens in the platform's
per-user folders (platformdirs). Tests, and the servers and clients they start as
processes, must never read or write the real ones, so the XDG variables point into a
throwaway folder before any test runs (on Linux, where the tests run).

pytest puts this folder on the import path (it holds this conftest and is no package),
so the kits here (pg_kit.py, poll_kit.py, process_output.py) import by bare name from
every test folder.
"""

import ast
import compileall
import fnmatch
import importlib
import os
import re
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pg_kit
import pytest
import reactor_kit
from hypothesis import HealthCheck, settings

settings.register_profile("dev", deadline=None)
settings.register_profile(
    "ci", deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci" if os.environ.get("CI") else "dev"))

reactor_kit.install()

_HOME = tempfile.mkdtemp(prefix="pisyedili-tests-")

TESTS = Path(__file__).resolve().parent

COMPILED_TESTS = (
    "rules/test_*.py",
    "bots/test_*.py",
    "server/test_table_*.py",
    "server/test_journal.py",
    "server/test_restart.py",
    "server/test_restart_process.py",
    "server/test_stacked_decks.py",
    "server/test_net_play.py",  # whole matches over loopback, hard bots in threads
    "packaging/test_packaging_compiled_flag.py",  # proves the pass ran the compiled engine
    "protocol/test_*.py",
)
"""The test modules (globs under tests/) marked `compiled`: those whose outcome the mypyc
build of `_build_backend.COMPILED` can change. CI runs them again against that build
(``pytest -m compiled``); the rest import the same Python source either way."""

INTEGRATION_TESTS = (
    "attack/test_attack_health.py",  # servers as processes (health_kit)
    "attack/test_attack_http.py",  # a `pisyedili-server --web` process (web_kit)
    "attack/test_attack_logins.py",  # Chromium
    "attack/test_attack_terminal.py",  # `pisyedili play` in tmux
    "bots/test_bots_cli_signal.py",
    "client/test_client_catalogs.py",  # msgfmt
    "client/test_client_cli.py",  # `pisyedili --version`, the console script
    "client/test_client_connect.py",
    "client/test_client_discovery.py",
    "client/test_client_friction_tmux.py",
    "client/test_client_languages_tmux.py",
    "client/test_client_no_english_tmux.py",
    "client/test_client_pairing_tmux.py",  # `pisyedili` in tmux, a server process
    "client/test_client_ratings_tmux.py",  # a server process, `pisyedili` in tmux
    "client/test_client_replay.py",
    "client/test_client_sessions.py",
    "client/test_client_sheet_tmux.py",  # `pisyedili play` and `replay` in tmux
    "client/test_client_tmux.py",
    "client/test_client_token_store.py",
    "cluster/test_*.py",  # Redis, and servers as processes
    "packaging/test_packaging_layers.py",  # lint-imports
    "packaging/test_packaging_mypyc.py",  # builds wheels
    "packaging/test_packaging_twistd_plugin.py",
    "protocol/test_asyncapi.py",  # the generator, as a command; Node validates
    "protocol/test_doc.py",  # the generators, as commands
    "protocol/test_doc_client.py",
    "protocol/test_reference.py",
    "test_fork_kit.py",  # processes forked and started
    "test_reactor_kit.py",  # pytest, as a process
    "server/test_accounts.py",
    "server/test_backup_modes.py",  # the documented pg_dump line, in a shell
    "server/test_bot_guide.py",  # the guide's bots, as processes
    "server/test_console_script.py",
    "server/test_discovery.py",
    "server/test_health.py",  # servers as processes (health_kit)
    "server/test_*_bench.py",
    "server/test_logs.py",
    "server/test_metrics_process.py",  # a server and Debian's prometheus, as processes
    "server/test_moderation.py",
    "server/test_restart_process.py",
    "server/test_stacked_decks.py",
    "server/test_status.py",
    "server/test_store_files.py",
    "server/test_store_interface.py",  # PostgreSQL
    "server/test_store_postgres.py",
    "server/test_systemd_units.py",  # systemd-analyze
    "web/test_web_accounts.py",
    "web/test_web_bot_accounts.py",
    "web/test_web_boot.py",  # Chromium, from here down
    "web/test_web_browser.py",
    "web/test_web_export_rules.py",
    "web/test_web_friction.py",  # Chromium
    "web/test_web_pairing.py",  # Chromium
    "web/test_web_i18n.py",
    "web/test_web_no_english.py",
    "web/test_web_scripts.py",
    "web/test_web_play.py",
    "web/test_web_sheet.py",  # Chromium
    "web/test_web_sheet_fit.py",  # Chromium
    "web/test_web_process.py",
    "web/test_web_ratings.py",  # Chromium
    "web/test_web_reach.py",  # Chromium
    "web/test_web_sanctions.py",  # Chromium
    "web/test_web_table.py",
)
"""The test modules (globs under tests/) marked `integration`: those that start a
process, a browser, Redis or PostgreSQL, or use a kit that does (`uses_services`). The
rest are the fast tier, ``pytest -m "not integration"``, which needs no service
(docs/development.md). tests/test_tiers.py fails when the list and the modules differ."""

LONGEST_FIRST = (
    "cluster/test_cluster_nemesis.py",
    "web/test_web_sheet_fit.py",
    "web/test_web_browser.py",
    "web/test_web_table.py",
    "client/test_client_tmux.py",
    "web/test_web_accounts.py",
    "web/test_web_i18n.py",
    "cluster/test_cluster_outage.py",
    "cluster/test_cluster_accounts.py",
    "web/test_web_ratings.py",
    "cluster/test_cluster_failover.py",
    "cluster/test_cluster_moderation.py",
    "web/test_web_sheet.py",
    "cluster/test_cluster_bench.py",
    "cluster/test_cluster_play.py",
    "server/test_restart_process.py",
    "packaging/test_packaging_mypyc.py",
)
"""The long suite's slowest modules, slowest first, by their time in `.ci/run`'s long
suite. The workers take whole modules (`--dist loadfile`) in collection order
(`--no-loadscope-reorder`: by default pytest-xdist puts the modules with the most
tests first), and these are collected first, so that the longest start at once and
no long one is left running alone at the end while the other workers idle."""

SERVICE_SIGNS = re.compile(
    r"\b(subprocess|spawnProcess|Popen|sys\.executable|selenium|webdriver|tmux"
    r"|pg_kit|redis_kit|cluster_kit|multiprocessing)\b"
    r"|[(,]\s*postgres(_cluster)?\s*[:,)]"
)
"""What in a module's text (or a kit's it imports) says that it starts a process or a
service: the ways the tests do, and the kits and fixtures that do it for them."""

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


def _relative(path: Path) -> str | None:
    path = path.resolve()
    return path.relative_to(TESTS).as_posix() if path.is_relative_to(TESTS) else None


def is_compiled_test(path: Path) -> bool:
    """Whether the test module at `path` is one of `COMPILED_TESTS`."""
    relative = _relative(path)
    return relative is not None and any(
        fnmatch.fnmatchcase(relative, pattern) for pattern in COMPILED_TESTS)


def is_integration_test(path: Path) -> bool:
    """Whether the test module at `path` is one of `INTEGRATION_TESTS`."""
    relative = _relative(path)
    return relative is not None and any(
        fnmatch.fnmatchcase(relative, pattern) for pattern in INTEGRATION_TESTS)


def _local_imports(path: Path, kits: dict[str, Path]) -> set[str]:
    """The kits of tests/ (by module name) whose code the module at `path` imports: a
    kit it takes only constants from (`from process_output import BACKSTOP`) starts
    nothing for it."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not all(
                alias.name.isupper() for alias in node.names):
            names.add(node.module.split(".")[-1 if node.level else 0])
    return names & kits.keys()


def uses_services(path: Path) -> bool:
    """Whether the module at `path`, or a kit of tests/ it imports (at any depth),
    starts a process or a service (`SERVICE_SIGNS`)."""
    kits = {p.stem: p for p in TESTS.rglob("*.py") if not p.name.startswith("test_")}
    kits.pop("conftest", None)
    seen: set[Path] = set()
    todo = [path.resolve()]
    while todo:
        current = todo.pop()
        if current in seen:
            continue
        seen.add(current)
        if SERVICE_SIGNS.search(current.read_text(encoding="utf-8")):
            return True
        todo.extend(kits[name].resolve() for name in _local_imports(current, kits))
    return False


def longest_first_rank(path: Path) -> int:
    """Where the module at `path` comes in `LONGEST_FIRST`; after all of them if not there."""
    relative = _relative(path)
    return LONGEST_FIRST.index(relative) if relative in LONGEST_FIRST else len(LONGEST_FIRST)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    items.sort(key=lambda item: longest_first_rank(item.path))  # stable: the rest as found
    for item in items:
        if is_compiled_test(item.path):
            item.add_marker(pytest.mark.compiled)
        if is_integration_test(item.path):
            item.add_marker(pytest.mark.integration)


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


def _keep_rewritten_tests() -> None:
    """Let pytest keep each test module as it rewrote its asserts.

    pytest keeps a test module rewritten for its assertion messages in __pycache__,
    unless no bytecode is to be written (PYTHONDONTWRITEBYTECODE, as above): then each
    pytest process (a run's, and each of its workers) rewrote every test module from
    its source again, some 8 s of CPU each. The files are pytest's own, checked
    against their sources as usual."""
    sys.dont_write_bytecode = False


def pytest_configure(config: pytest.Config) -> None:
    _keep_rewritten_tests()
    if not hasattr(config, "workerinput"):  # once a run, before the workers start
        _compile_our_packages()
    for name in ("XDG_DATA_HOME", "XDG_STATE_HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME"):
        os.environ[name] = os.path.join(_HOME, name.lower())


def pytest_unconfigure(config: pytest.Config) -> None:
    shutil.rmtree(_HOME, ignore_errors=True)


@pytest.fixture(autouse=True)
def _reactor_wakeup_kept() -> Iterator[None]:
    """The reactor keeps hearing of signals (SIGCHLD) after a test that ran an asyncio
    loop in this process (reactor_kit.py)."""
    yield from reactor_kit.wakeup_kept()


@pytest.fixture
def english() -> Iterator[None]:
    """The client's language, a process-wide setting, English with its own digits from
    the start to the end of a test, whatever one before it set (a module asks for it
    with `pytestmark = pytest.mark.usefixtures("english")`)."""
    from pisyedili.client import i18n

    i18n.set_language("en")
    i18n.set_digits("default")
    yield
    i18n.set_language("en")
    i18n.set_digits("default")


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


@pytest.fixture(params=["sqlite", pytest.param("postgres", marks=pytest.mark.integration)])
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
