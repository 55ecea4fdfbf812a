"""What the LAN discovery tests share (tests/server/test_discovery.py and
tests/client/test_client_discovery.py): loopback to browse, a deadline, a test key, and
a server that announces itself, and a network namespace without it."""

import os
import shutil
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from pisyedili.server.service.server import ServerService

LOOPBACK = ["127.0.0.1"]
"""The interfaces the tests browse and announce on."""

DEADLINE = 30.0
"""Seconds to keep browsing: browsing is time-based, and a loaded machine answers late."""

PEM = Path(__import__("twisted").__file__).parent / "test" / "server.pem"  # type: ignore[arg-type]
"""Twisted's own test key and certificate, for a TLS port."""


async def announced(service: ServerService) -> ServerService:
    """`service` started, listening and announced."""
    service.startService()
    assert service.ready is not None
    await service.ready
    assert service.announced is not None
    await service.announced
    return service


@contextmanager
def network_namespace(prefix: str, loopback_up: bool) -> Iterator[str]:
    """A network namespace of the test's own (skipped without root and iproute2), its
    loopback up or down (down: mDNS cannot work there); deleted after."""
    if os.geteuid() != 0 or shutil.which("ip") is None:
        pytest.skip("needs root and iproute2 for a network namespace")
    name = f"{prefix}-{os.getpid()}"
    made = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot make a network namespace: {made.stderr.strip()}")
    try:
        if loopback_up:
            subprocess.run(["ip", "netns", "exec", name, "ip", "link", "set", "lo", "up"],
                           check=True)
        yield name
    finally:
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
