"""`--listen haproxy:...` (server/net/proxied.py): the server's protocol is connected
once the PROXY line named the client, on real loopback sockets."""

from __future__ import annotations

import socket
import struct
from typing import Any

import pytest
import pytest_twisted
from twisted.internet import reactor, task
from twisted.internet.endpoints import serverFromString
from twisted.internet.protocol import Factory, Protocol
from twisted.internet.threads import deferToThread

from pisyedili.server.net import proxied

V2_SIGNATURE = b"\r\n\r\n\x00\r\nQUIT\n"


class Seen(Protocol):
    """Records the peer it was connected with and what it read; echoes it back."""

    factory: SeenFactory
    transport: Any

    def connectionMade(self) -> None:
        self.factory.peers.append(self.transport.getPeer())

    def dataReceived(self, data: bytes) -> None:
        self.transport.write(data)


class SeenFactory(Factory):
    protocol = Seen  # type: ignore[assignment]

    def __init__(self) -> None:
        self.peers: list[Any] = []


def _talk(port: int, send: bytes, expect: int) -> bytes:
    """Send `send`, then read until `expect` bytes came or the server closed."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as sock:
        sock.sendall(send)
        got = b""
        while len(got) < expect and (chunk := sock.recv(4096)):
            got += chunk
        return got


def _closed(sock: socket.socket) -> bool:
    """Whether the server closed `sock` (an abort resets it)."""
    try:
        return sock.recv(10) == b""
    except ConnectionResetError:
        return True


async def _listening(factory: Any) -> Any:
    return await proxied.listen(reactor, "haproxy:tcp:0:interface=127.0.0.1", factory)


@pytest_twisted.ensureDeferred
async def test_the_protocol_is_connected_with_the_address_the_line_names() -> None:
    seen = SeenFactory()
    port = await _listening(seen)
    try:
        line = b"PROXY TCP4 10.1.2.3 127.0.0.1 5555 7707\r\n"
        assert await deferToThread(_talk, port.getHost().port, line + b"hello", 5) == b"hello"
        # v2, as HAProxy's `send-proxy-v2` sends it, the line and data in one segment.
        v2 = V2_SIGNATURE + bytes([0x21, 0x11]) + struct.pack(
            "!H4s4sHH", 12, socket.inet_aton("10.9.8.7"), socket.inet_aton("127.0.0.1"),
            4242, 7707)
        assert await deferToThread(_talk, port.getHost().port, v2 + b"again", 5) == b"again"
    finally:
        await port.stopListening()
    assert [(p.host, p.port) for p in seen.peers] == [("10.1.2.3", 5555), ("10.9.8.7", 4242)]


@pytest_twisted.ensureDeferred
async def test_a_health_check_and_a_line_that_is_no_proxy_line_never_reach_it() -> None:
    seen = SeenFactory()
    port = await _listening(seen)
    try:
        local = V2_SIGNATURE + bytes([0x20, 0x00]) + struct.pack("!H", 0)  # v2 LOCAL
        assert await deferToThread(_talk, port.getHost().port, local + b"x", 1) == b""
        plain = b"\x00\x00\x00\x05hello"  # a client that skipped the proxy
        assert await deferToThread(_talk, port.getHost().port, plain, 1) == b""
    finally:
        await port.stopListening()
    assert seen.peers == []


@pytest_twisted.ensureDeferred
async def test_a_connection_that_never_sends_the_line_is_dropped() -> None:
    clock = task.Clock()
    seen = SeenFactory()
    endpoint: Any = serverFromString(reactor, "tcp:0:interface=127.0.0.1")  # type: ignore[no-untyped-call]
    port = await endpoint.listen(proxied.ProxyHeaderFactory(seen, clock, header_seconds=5))
    try:
        sock = socket.create_connection(("127.0.0.1", port.getHost().port), timeout=10)
        sock.sendall(b"PROXY TCP4 10.1.2.3")  # and no more
        while not clock.getDelayedCalls():  # until the server accepted it
            await task.deferLater(reactor, 0.01, lambda: None)
        clock.advance(4.9)
        sock.setblocking(False)
        with pytest.raises(BlockingIOError):  # still open, nothing said
            sock.recv(10)
        sock.settimeout(10)
        clock.advance(0.1)
        assert await deferToThread(_closed, sock)
        sock.close()
    finally:
        await port.stopListening()
    assert seen.peers == []
