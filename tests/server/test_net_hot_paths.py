"""The copies made for speed on the send path put on the wire exactly the bytes of the
general path they copy, for the same messages: `Connection.send_message` (the general
`send` plus `send_body` in one), `ServerProtocol._flush` (`Connection._flush` with the
frame's write inline) and `Sessions.deliver` (`Session.send` inline).

Each path sends the same messages, small and large, to a client over a real loopback
socket: once while the client reads (frames go straight to an idle socket) and once
while it does not (the socket fills and frames queue in the transport), and what the
client reads is compared byte for byte with the frames the codec makes.
"""

from __future__ import annotations

import random
import struct
from collections.abc import Callable
from socket import SO_SNDBUF, SOL_SOCKET
from typing import Any

import pytest
import pytest_twisted
from poll_kit import BACKSTOP, poll_until_async
from wireclient import Msg, Server, WireClient

from pisyedili.protocol.codec import encode
from pisyedili.server.net.connection import Connection
from pisyedili.server.net.limits import ServerLimits


def messages(seed: int, count: int = 40) -> list[Msg]:
    """Chat lines of every size from empty to about 400 KB (in strings of up to 5,000
    characters: a client refuses longer ones), with varied values beside them."""
    rng = random.Random(seed)
    letters = "".join(rng.choice("aşğüö 7♠ بیت") for _ in range(20_000))

    def text(size: int) -> str:
        start = rng.randrange(len(letters) - size)
        return letters[start:start + size]

    drawn: list[Msg] = []
    for n in range(count):
        pieces = rng.choice([0, 1, 2, 40])
        drawn.append({"type": "chat", "scope": "lobby", "name": f"p{n}",
                      "text": text(rng.choice([0, 1, 10, 200, 4_000])),
                      "spectator": rng.random() < 0.5, "n": rng.randint(-2**40, 2**40),
                      "pieces": [text(5_000) for _ in range(pieces)]})
    return drawn


def frames(sent: list[Msg]) -> bytes:
    """The wire's bytes for `sent`: each body after its 4-byte length."""
    return b"".join(struct.pack("!I", len(body)) + body for body in map(encode, sent))


QUIET = ServerLimits(rate=10_000, burst=10_000, ping_seconds=3600, idle_seconds=7200,
                     max_output_bytes=64 * 1024 * 1024)
"""No ping among the frames compared, and no close for what the paused client leaves
unread."""

Send = Callable[[Server, Any, Msg], None]
"""One way of sending: the server, the reader's side of the connection, a message."""

PATHS: dict[str, Send] = {
    "send": lambda server, proto, msg: proto.send(msg),
    "send_message": lambda server, proto, msg: proto.send_message(msg),
    "Connection._flush": lambda server, proto, msg: Connection._flush(proto, encode(msg)),
    "ServerProtocol._flush": lambda server, proto, msg: proto._flush(encode(msg)),
    "Session.send": lambda server, proto, msg: proto.session.send(msg),
    "Sessions.deliver": lambda server, proto, msg: server.factory.sessions.deliver(
        proto.session.player_id, msg),
}


def recorded(client: WireClient) -> bytearray:
    """Every byte `client` reads from now on."""
    raw = bytearray()
    read = client.dataReceived

    def recording(data: bytes) -> None:
        raw.extend(data)
        read(data)  # type: ignore[no-untyped-call]

    client.dataReceived = recording  # type: ignore[method-assign]
    return raw


async def wire_of(send: Send, sent: list[Msg], reading: bool) -> bytes:
    """The bytes a client reads when the server sends it `sent` one way. Not
    `reading`: the client stops reading first and starts again once all is sent, so
    the frames meet a full socket and wait in the transport."""
    server = await Server.start(limits=QUIET)
    try:
        client = await server.connect("reader")
        assert (await client.request("ping"))["type"] == "pong"  # all before it is read
        raw = recorded(client)
        proto = next(p for p in server.factory.protocols
                     if p.session is not None and p.session.name == "reader")
        if not reading:
            client.transport.pauseProducing()  # type: ignore[union-attr]
            # A small send buffer, so that a few frames fill it. (The client's receive
            # buffer stays as it is: shrunk under an open window, it stalls the flow.)
            proto.transport.socket.setsockopt(SOL_SOCKET, SO_SNDBUF, 4096)
        for msg in sent:
            send(server, proto, msg)
        if not reading:
            assert proto.transport.dataBuffer or proto.transport._tempDataLen, \
                "the socket never filled: nothing waited in the transport"
            client.transport.resumeProducing()  # type: ignore[union-attr]
        expected = len(frames(sent))
        await poll_until_async(lambda: len(raw) >= expected, BACKSTOP,
                               lambda: f"{expected} bytes (read {len(raw)})")
        client.invalid.clear()  # the schema is not at issue: these lines are outsized
        return bytes(raw)
    finally:
        await server.stop()


@pytest.mark.parametrize("reading", [True, False], ids=["reading", "not reading"])
@pytest.mark.parametrize(("fast", "general"), [
    ("send_message", "send"),
    ("ServerProtocol._flush", "Connection._flush"),
    ("Sessions.deliver", "Session.send"),
])
@pytest_twisted.ensureDeferred
async def test_the_fast_copy_writes_what_the_general_path_writes(
        fast: str, general: str, reading: bool) -> None:
    sent = messages(seed=7)
    expected = frames(sent)
    for path in (general, fast):
        wire = await wire_of(PATHS[path], sent, reading)
        assert wire == expected, f"{path}: {first_difference(wire, expected)}"


def first_difference(wire: bytes, expected: bytes) -> str:
    """Where `wire` parts from `expected`, briefly (the streams are megabytes long)."""
    at = next((i for i, (a, b) in enumerate(zip(wire, expected, strict=False)) if a != b),
              min(len(wire), len(expected)))
    return (f"{len(wire)} bytes for {len(expected)}; from byte {at}: "
            f"{wire[at:at + 16]!r} for {expected[at:at + 16]!r}")
