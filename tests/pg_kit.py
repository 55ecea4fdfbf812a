"""A real PostgreSQL for the tests: a throwaway cluster, or the server a variable names.

With `PISYEDILI_TEST_POSTGRES=postgresql://...` the tests use that server (its user
may create databases). Otherwise `Cluster` makes one in a temporary folder from
Debian's binaries (/usr/lib/postgresql/*/bin), listening on a free loopback port,
with fsync off (it is thrown away): as `nobody` when the tests run as root, since
initdb refuses root. Each test gets a fresh store (`Cluster.database`): a schema of
its own in one database of the session's, named by the URL's search_path. A schema is
as empty and as separate as a new database for the store (whose tables are
unqualified) and costs a millisecond, where CREATE DATABASE costs a second on a busy
machine. Where neither is possible the
PostgreSQL tests skip, saying why, except under CI=true, where they fail.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import psycopg
import pytest

from pisyedili.server.bench.services import free_port, pg_bindir

ENV = "PISYEDILI_TEST_POSTGRES"
USER = "pisyedili"
RUN_AS = "nobody"
"""Who runs the cluster when the tests run as root."""


def unavailable(why: str) -> None:
    """Skip the test that needs PostgreSQL, or fail it in CI (where it must run)."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"PostgreSQL tests cannot run in CI: {why}", pytrace=False)
    pytest.skip(f"no PostgreSQL to test against: {why}")


class Cluster:
    """A PostgreSQL server the tests may make databases on, and (if it is our own)
    stop and start again."""

    def __init__(self, admin_url: str, own: Path | None = None,
                 bin_dir: Path | None = None) -> None:
        self.admin_url = admin_url
        """Where to connect to create and drop databases."""
        self.own = own
        """The cluster's folder if this kit started it (None: a server we were given)."""
        self._bin = bin_dir
        self._names = itertools.count()
        self._prefix = f"pisyedili_test_{os.getpid()}_"
        self.made: list[str] = []

    @classmethod
    def start(cls) -> Cluster:
        """A new cluster in a folder of its own, running; raises RuntimeError if it cannot."""
        bin_dir = pg_bindir()
        if bin_dir is None:
            raise RuntimeError("initdb is not installed (Debian: apt-get install postgresql)")
        folder = Path(tempfile.mkdtemp(prefix="pisyedili-pg-"))
        as_root = os.geteuid() == 0
        if as_root:
            if shutil.which("runuser") is None:
                raise RuntimeError("the tests run as root and runuser is missing")
            shutil.chown(folder, RUN_AS)
        port = free_port()
        cluster = cls(f"postgresql://{USER}@127.0.0.1:{port}/postgres", folder, bin_dir)
        cluster._port = port
        try:
            cluster._pg("initdb", "-D", str(folder / "data"), "-U", USER, "-A", "trust",
                        "-E", "UTF8", "--no-sync", "--no-instructions")
            cluster.resume()
        except BaseException:
            cluster.remove()
            raise
        return cluster

    _port = 0

    def _pg(self, tool: str, *args: str) -> None:
        assert self._bin is not None
        command = [str(self._bin / tool), *args]
        if os.geteuid() == 0:
            command = ["runuser", "-u", RUN_AS, "--", *command]
        done = subprocess.run(command, capture_output=True, text=True, timeout=120,
                              cwd=self.own)
        if done.returncode != 0:
            raise RuntimeError(f"{tool} failed ({done.returncode}): "
                               f"{done.stderr.strip() or done.stdout.strip()}")

    def resume(self) -> None:
        """Start our cluster (again), and wait until it takes connections."""
        assert self.own is not None
        options = (f"-p {self._port} -k {self.own} -c listen_addresses=127.0.0.1 "
                   "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
        self._pg("pg_ctl", "-D", str(self.own / "data"), "-l", str(self.own / "log"),
                 "-o", options, "-w", "-t", "60", "start")

    def halt(self) -> None:
        """Stop our cluster at once, as a crash or an operator's `pg_ctl stop` would."""
        assert self.own is not None
        self._pg("pg_ctl", "-D", str(self.own / "data"), "-m", "fast", "-w", "stop")

    def database(self) -> str:
        """A new, empty store's URL: a schema of its own in the session's database."""
        if not self.made:
            with psycopg.connect(self.admin_url, autocommit=True) as conn:
                conn.execute(f"CREATE DATABASE {self._prefix}db TEMPLATE template0")
            self.made.append(f"{self._prefix}db")
        url = self.admin_url.rsplit("/", 1)[0] + f"/{self.made[0]}"
        schema = f"store_{next(self._names)}"
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(f"CREATE SCHEMA {schema}")
        return f"{url}?options=-csearch_path%3D{schema}"

    def remove(self) -> None:
        """Stop our cluster and delete it; on a server we were given, drop what we made."""
        if self.own is not None:
            with contextlib.suppress(RuntimeError, OSError, subprocess.TimeoutExpired):
                self._pg("pg_ctl", "-D", str(self.own / "data"), "-m", "immediate",
                         "-w", "stop")
            shutil.rmtree(self.own, ignore_errors=True)
            return
        with contextlib.suppress(psycopg.Error), \
                psycopg.connect(self.admin_url, autocommit=True) as conn:
            for name in self.made:
                conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")


@contextlib.contextmanager
def cluster() -> Iterator[Cluster | str]:
    """The cluster the tests use, or why there is none (a test then calls `unavailable`)."""
    given = os.environ.get(ENV)
    try:
        found = Cluster(given) if given else Cluster.start()
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        yield str(e)
        return
    try:
        yield found
    finally:
        found.remove()
