"""What the LAN discovery tests share (tests/server/test_discovery.py and
tests/client/test_client_discovery.py): loopback to browse, a deadline, a test key, and
a server that announces itself."""

from pathlib import Path

from pisyedili.server.service import tap

LOOPBACK = ["127.0.0.1"]
"""The interfaces the tests browse and announce on."""

DEADLINE = 30.0
"""Seconds to keep browsing: browsing is time-based, and a loaded machine answers late."""

PEM = Path(__import__("twisted").__file__).parent / "test" / "server.pem"  # type: ignore[arg-type]
"""Twisted's own test key and certificate, for a TLS port."""


async def announced(service: tap.ServerService) -> tap.ServerService:
    """`service` started, listening and announced."""
    service.startService()
    assert service.ready is not None
    await service.ready
    assert service.announced is not None
    await service.announced
    return service
