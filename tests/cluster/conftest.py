"""A real redis-server for the cluster tests, one for the whole run.

It runs on a free loopback port in a folder of its own and is stopped at the end; or
`PISYEDILI_TEST_REDIS=redis://HOST:PORT/N` names one already running. Where neither is
there the tests skip, saying why, except under CI=true, where they fail: CI installs
Debian's redis-server (.ci/run).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from process_output import free_port

from cluster.redis_kit import RedisAt
from pisyedili.server.cluster import ClusterAddress


@pytest.fixture(scope="session")
def redis_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ClusterAddress]:
    named = os.environ.get("PISYEDILI_TEST_REDIS")
    if named:
        yield ClusterAddress.parse(named)
        return
    binary = shutil.which("redis-server")
    if binary is None:
        reason = "redis-server is not installed (Debian: apt-get install redis-server)"
        if os.environ.get("CI") == "true":
            pytest.fail(reason)
        pytest.skip(reason)
    folder: Path = tmp_path_factory.mktemp("redis")
    port = free_port()
    proc = subprocess.Popen(
        [binary, "--port", str(port), "--bind", "127.0.0.1", "--dir", str(folder),
         "--save", "", "--appendonly", "no", "--protected-mode", "yes"],
        stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    address = ClusterAddress("127.0.0.1", port, 0)
    deadline = time.monotonic() + 20
    try:
        while True:
            try:
                if RedisAt(address).command("PING") == "PONG":
                    break
            except OSError:
                if proc.poll() is not None or time.monotonic() > deadline:
                    raise AssertionError("redis-server did not start") from None
                time.sleep(0.05)
        yield address
    finally:
        proc.terminate()
        proc.wait(10)


@pytest.fixture
def redis(redis_server: ClusterAddress) -> RedisAt:
    """The test database, emptied first: each test starts a cluster of its own."""
    at = RedisAt(redis_server)
    at.command("FLUSHDB")
    return at
