"""A WebSocket client that writes the bytes a test spells out, for the attack tests.

autobahn's client (ws_kit.py) only sends well-formed frames; an attacker sends anything:
unmasked frames, reserved opcodes, floods of pings or empty continuation frames,
frames before the upgrade. `RawWebSocket` sends the upgrade request itself (or not),
writes frames built by `frame`, and parses what the server sends back (its frames are
unmasked), so a test can read the `error` messages, the pongs and the close frame.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Callable
from typing import Any, cast

import msgpack
from twisted.internet import reactor
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.protocol import Protocol
from twisted.python.failure import Failure

from pisyedili.protocol.codec import encode
from pisyedili.protocol.version import PROTOCOL_VERSION

TIMEOUT = 20.0
"""Seconds a wait may take before the test fails (generous: the machine is shared)."""

CONTINUATION, TEXT, BINARY, CLOSE, PING, PONG = 0, 1, 2, 8, 9, 10
"""RFC 6455's opcodes."""


def frame(opcode: int, payload: bytes = b"", *, fin: bool = True, masked: bool = True,
          rsv: int = 0, length: int | None = None) -> bytes:
    """One client frame; `length` overrides the length its header claims."""
    claimed = len(payload) if length is None else length
    head = bytes([(0x80 if fin else 0) | (rsv << 4) | opcode])
    mask_bit = 0x80 if masked else 0
    if claimed < 126:
        head += bytes([mask_bit | claimed])
    elif claimed < 65536:
        head += bytes([mask_bit | 126]) + struct.pack("!H", claimed)
    else:
        head += bytes([mask_bit | 127]) + struct.pack("!Q", claimed)
    if not masked:
        return head + payload
    key = os.urandom(4)
    return head + key + bytes(b ^ key[i % 4] for i, b in enumerate(payload))


def close_frame(code: int, reason: bytes = b"") -> bytes:
    return frame(CLOSE, struct.pack("!H", code) + reason)


def upgrade_request(port: int, path: str = "/ws") -> bytes:
    return (f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nUpgrade: websocket\r\n"
            "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
            "Sec-WebSocket-Version: 13\r\n\r\n").encode()


class RawWebSocket(Protocol):
    """The client side of one connection to the web port, byte by byte."""

    def __init__(self) -> None:
        self.head: bytes | None = None  # the HTTP response's head, once read
        self.frames: list[tuple[int, bytes]] = []  # (opcode, payload) from the server
        self.is_closed = False
        self._buffer = b""
        self._waiters: list[Deferred[None]] = []

    # -- what the server sent ---------------------------------------------------------

    @property
    def status(self) -> int | None:
        """The HTTP response's status code (101 once upgraded)."""
        return None if self.head is None else int(self.head.split(b" ", 2)[1])

    @property
    def messages(self) -> list[dict[str, Any]]:
        return [msgpack.unpackb(p) for op, p in self.frames if op == BINARY]

    @property
    def pongs(self) -> int:
        return sum(1 for op, _ in self.frames if op == PONG)

    @property
    def close(self) -> tuple[int | None, str] | None:
        """The server's close frame: its code (None if it had none) and reason."""
        for op, payload in self.frames:
            if op == CLOSE:
                if len(payload) < 2:
                    return None, ""
                return struct.unpack("!H", payload[:2])[0], payload[2:].decode()
        return None

    def errors(self, code: str) -> list[dict[str, Any]]:
        return [m for m in self.messages if m["type"] == "error" and m["code"] == code]

    # -- sending ----------------------------------------------------------------------

    def send(self, *frames: bytes) -> None:
        if not self.is_closed:
            cast(Any, self.transport).write(b"".join(frames))

    def send_message(self, msg: dict[str, Any]) -> None:
        self.send(frame(BINARY, encode(msg)))

    async def upgrade(self, port: int) -> None:
        """Send the upgrade request and wait for the server's 101."""
        self.send(upgrade_request(port))
        await self.until(lambda: self.head is not None, "the upgrade's answer")
        assert self.status == 101, self.head

    async def hello(self, name: str) -> dict[str, Any]:
        self.send_message({"type": "hello", "protocol": PROTOCOL_VERSION, "name": name,
                           "id": 1})
        await self.until(lambda: any(m.get("id") == 1 for m in self.messages), "welcome")
        (welcome,) = [m for m in self.messages if m.get("id") == 1]
        assert welcome["type"] == "welcome", welcome
        return welcome

    # -- waiting ----------------------------------------------------------------------

    async def until(self, done: Callable[[], bool], what: str) -> None:
        """Wait until `done()` holds (checked as bytes arrive); fail after `TIMEOUT`, or
        when the connection ends first."""
        while not done():
            if self.is_closed:
                raise AssertionError(f"closed before {what}: {self.frames[-3:]}")
            waiter: Deferred[None] = Deferred()
            waiter.addTimeout(TIMEOUT, reactor)
            self._waiters.append(waiter)
            await waiter

    async def closed(self) -> None:
        """Wait until the server ends the connection (fail after `TIMEOUT`)."""
        while not self.is_closed:
            waiter: Deferred[None] = Deferred()
            waiter.addTimeout(TIMEOUT, reactor)
            self._waiters.append(waiter)
            await waiter

    def _wake(self) -> None:
        waiters, self._waiters = self._waiters, []
        for waiter in waiters:
            if not waiter.called:
                waiter.callback(None)

    # -- the protocol -----------------------------------------------------------------

    def dataReceived(self, data: bytes) -> None:
        self._buffer += data
        if self.head is None:
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                return
            self.head, self._buffer = self._buffer[:end], self._buffer[end + 4:]
        while self._parse_frame():
            pass
        if self.close is not None and self.transport is not None and not self.is_closed:
            # As a browser does once the server has closed: answer, and drop the
            # connection rather than wait for a server that reads no more.
            transport = cast(Any, self.transport)
            transport.write(frame(CLOSE))
            transport.loseConnection()
        self._wake()

    def _parse_frame(self) -> bool:
        data = self._buffer
        if len(data) < 2:
            return False
        opcode, length, at = data[0] & 0x0F, data[1] & 0x7F, 2
        if length == 126:
            if len(data) < 4:
                return False
            length, at = struct.unpack("!H", data[2:4])[0], 4
        elif length == 127:
            if len(data) < 10:
                return False
            length, at = struct.unpack("!Q", data[2:10])[0], 10
        if len(data) < at + length:
            return False
        self.frames.append((opcode, data[at:at + length]))
        self._buffer = data[at + length:]
        return True

    def connectionLost(self, reason: Failure | None = None) -> None:
        self.is_closed = True
        self._wake()


async def raw_connect(port: int) -> RawWebSocket:
    """A TCP connection to the web port, nothing sent yet."""
    endpoint = TCP4ClientEndpoint(reactor, "127.0.0.1", port, timeout=int(TIMEOUT))
    raw: RawWebSocket = await connectProtocol(endpoint, RawWebSocket())  # type: ignore[no-untyped-call]
    return raw


async def raw_ws(port: int, name: str | None = None) -> RawWebSocket:
    """An upgraded raw WebSocket to `/ws`; with `name`, it has said hello."""
    raw = await raw_connect(port)
    await raw.upgrade(port)
    if name is not None:
        await raw.hello(name)
    return raw
