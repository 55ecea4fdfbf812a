"""A real redis-server for the cluster tests, one for the whole run.

It runs on a free loopback port in a folder of its own and is stopped at the end; or
`PISYEDILI_TEST_REDIS=redis://HOST:PORT/N` names one already running. Where neither is
there the tests skip, saying why, except under CI=true, where they fail: CI installs
Debian's redis-server (.ci/run).
"""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from cluster.redis_kit import RedisAt, own_redis
from pisyedili.server.cluster import ClusterAddress


@pytest.fixture(scope="session")
def redis_server() -> Iterator[ClusterAddress]:
    named = os.environ.get("PISYEDILI_TEST_REDIS")
    if named:
        yield ClusterAddress.parse(named)
        return
    server = own_redis()
    try:
        yield ClusterAddress.parse(server.url)
    finally:
        server.stop()


@pytest.fixture
def redis(redis_server: ClusterAddress) -> RedisAt:
    """The test database, emptied first: each test starts a cluster of its own."""
    at = RedisAt(redis_server)
    at.command("FLUSHDB")
    return at
