"""A real PostgreSQL for the tests: a throwaway cluster, or the server a variable names.

With `PISYEDILI_TEST_POSTGRES=postgresql://...` the tests use that server (its user
may create schemas in the URL's database). Otherwise `Cluster.start` makes one in a
temporary folder from Debian's binaries, on a free loopback port, with fsync off (it
is thrown away), as the load bench does: the starter is the bench's
(`pisyedili.server.bench.services.Postgres`). Each test gets a fresh store
(`Cluster.store`), a schema of its own. Where neither is possible the PostgreSQL
tests skip, saying why, except under CI=true, where they fail.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator

import psycopg
import pytest

from pisyedili.server.bench.services import Postgres

ENV = "PISYEDILI_TEST_POSTGRES"


def unavailable(why: str) -> None:
    """Skip the test that needs PostgreSQL, or fail it in CI (where it must run)."""
    if os.environ.get("CI") == "true":
        pytest.fail(f"PostgreSQL tests cannot run in CI: {why}", pytrace=False)
    pytest.skip(f"no PostgreSQL to test against: {why}")


class Cluster(Postgres):
    """The bench's PostgreSQL, its statements run through psycopg: a test makes many
    stores, and a connection is quicker than starting `psql` for each."""

    def sql(self, statement: str) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            conn.execute(statement)


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
        found.stop()


@contextlib.contextmanager
def own_cluster() -> Iterator[Cluster]:
    """A cluster of the test's own, to stop and start (the session's serves the rest)."""
    try:
        cluster = Cluster.start()
    except (RuntimeError, OSError) as e:
        unavailable(str(e))
        raise
    try:
        yield cluster
    finally:
        cluster.stop()
