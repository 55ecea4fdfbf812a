"""WebSocket abuse at `/ws`, byte by byte: each case is closed or refused with the code
docs/protocol.md ("WebSocket") promises, and the server goes on serving others.

Floods of frames are in test_attack_flood.py; the well-formed cases (a text message,
an oversize message from autobahn's own client) in tests/web/test_web_endpoint.py.
"""

from __future__ import annotations

import struct
from typing import Any, cast

import pytest
import pytest_twisted
from poll_kit import poll_until_async
from raw_ws_kit import (
    BINARY,
    CLOSE,
    CONTINUATION,
    PING,
    TEXT,
    TIMEOUT,
    RawWebSocket,
    close_frame,
    frame,
    raw_connect,
    raw_ws,
    upgrade_request,
)
from twisted.internet import task
from ws_kit import WebServer

from pisyedili.protocol.codec import encode
from pisyedili.protocol.limits import MAX_CLIENT_FRAME
from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.net.limits import ServerLimits

PROTOCOL_ERROR, MESSAGE_TOO_BIG, INVALID_PAYLOAD = 1002, 1009, 1007
"""RFC 6455's close codes the server fails a connection with."""


async def with_web(test: Any, **kwargs: Any) -> None:
    web = await WebServer.start(**kwargs)
    try:
        canary = await web.server.connect("canary")
        await test(web)
        assert (await canary.request("ping"))["type"] == "pong"  # the server goes on
        browser = await web.ws("browser")
        assert (await browser.request("ping"))["type"] == "pong"
        await released(web)
    finally:
        await web.stop()


async def released(web: WebServer) -> None:
    """Every connection a test dropped is gone from the server too (it learns of the
    close a moment after the client): none without a session is left."""
    def left() -> list[Any]:
        return [c for c in web.server.factory.protocols if c.session is None]

    await poll_until_async(lambda: not left(), TIMEOUT, lambda: f"the close of {left()}")


async def closed_with(raw: RawWebSocket, code: int, reason: str | None = None) -> None:
    await raw.closed()
    assert raw.close is not None, raw.frames
    assert raw.close[0] == code, raw.close
    if reason is not None:
        assert raw.close[1] == reason


@pytest_twisted.ensureDeferred
async def test_an_oversize_frame_is_refused_with_frame_too_large_as_its_close_reason() -> None:
    """The near-miss of issue 40: the close after `frame_too_large` says that code, not
    autobahn's text. The frame's header claims the size; its payload never comes."""
    async def test(web: WebServer) -> None:
        for claimed in (MAX_CLIENT_FRAME + 1, 2**62):
            raw = await raw_ws(web.web_port, "big")
            raw.send(frame(BINARY, length=claimed))
            await closed_with(raw, MESSAGE_TOO_BIG, "frame_too_large")
            (error,) = raw.errors("frame_too_large")
            assert error["limit"] == MAX_CLIENT_FRAME

    await with_web(test)


@pytest_twisted.ensureDeferred
async def test_fragments_over_the_limit_together_are_refused_as_one_message() -> None:
    async def test(web: WebServer) -> None:
        raw = await raw_ws(web.web_port, "fragments")
        piece = b"x" * (MAX_CLIENT_FRAME // 2)
        raw.send(frame(BINARY, piece, fin=False), frame(CONTINUATION, piece, fin=False),
                 frame(CONTINUATION, b"xx"))
        await closed_with(raw, MESSAGE_TOO_BIG, "frame_too_large")
        assert raw.errors("frame_too_large")

    await with_web(test)


@pytest_twisted.ensureDeferred
async def test_a_message_in_many_fragments_is_read_within_the_rate() -> None:
    """A `ping` cut into 20 one-byte fragments (within the default burst of 40): read
    whole and answered, each fragment counted against the rate."""
    async def test(web: WebServer) -> None:
        raw = await raw_ws(web.web_port, "fragments")
        body = encode({"type": "ping", "id": 5})
        frames = [frame(BINARY if i == 0 else CONTINUATION, bytes([b]),
                        fin=i == len(body) - 1) for i, b in enumerate(body)]
        raw.send(*frames)
        await raw.until(lambda: any(m.get("id") == 5 for m in raw.messages), "the pong")
        assert raw.messages[-1] == {"type": "pong", "id": 5}

    await with_web(test)


@pytest_twisted.ensureDeferred
async def test_a_text_frame_is_answered_text_message_and_invalid_utf8_closes() -> None:
    async def test(web: WebServer) -> None:
        raw = await raw_ws(web.web_port, "texter")
        raw.send(frame(TEXT, b'{"type": "ping"}'))
        await raw.until(lambda: bool(raw.errors("text_message")), "text_message")
        raw.send(frame(TEXT, b"\xff\xfe"))  # not UTF-8: the framing's own refusal
        await closed_with(raw, INVALID_PAYLOAD)

    await with_web(test)


@pytest_twisted.ensureDeferred
async def test_a_close_reason_that_is_not_utf8_closes_with_1007() -> None:
    async def test(web: WebServer) -> None:
        raw = await raw_ws(web.web_port, "closer")
        raw.send(close_frame(1000, b"\xc3\x28 bad"))
        await closed_with(raw, INVALID_PAYLOAD)

    await with_web(test)


@pytest.mark.parametrize(("what", "bad"), [
    ("unmasked", frame(BINARY, encode({"type": "ping"}), masked=False)),
    ("reserved opcode", frame(3, b"x")),
    ("reserved bits", frame(BINARY, encode({"type": "ping"}), rsv=4)),
    ("continuation outside a message", frame(CONTINUATION, b"x")),
    ("message inside a message", frame(BINARY, b"\x81", fin=False) + frame(BINARY, b"x")),
    ("fragmented control frame", frame(PING, b"x", fin=False)),
    ("control frame over 125 bytes", frame(PING, b"p" * 126)),
    ("close frame of one byte", frame(CLOSE, b"\x03")),
], ids=lambda value: value if isinstance(value, str) else "")  # the masks are random
@pytest_twisted.ensureDeferred
async def test_a_frame_that_breaks_rfc_6455_closes_with_1002(what: str, bad: bytes) -> None:
    async def test(web: WebServer) -> None:
        for name in (None, "player"):  # before hello and after
            raw = await raw_ws(web.web_port, name)
            raw.send(bad)
            await closed_with(raw, PROTOCOL_ERROR)
            assert not raw.errors("rate_limited")

    await with_web(test)


@pytest_twisted.ensureDeferred
async def test_frames_before_the_upgrade_get_http_400() -> None:
    async def test(web: WebServer) -> None:
        raw = await raw_connect(web.web_port)
        raw.send(frame(BINARY, encode({"type": "ping"})) + b"\r\n")  # no HTTP request
        await raw.until(lambda: raw.head is not None, "an HTTP answer")
        assert raw.status == 400
        await raw.closed()

    await with_web(test)


@pytest_twisted.ensureDeferred
async def test_a_hello_sent_with_the_upgrade_request_is_not_read() -> None:
    """A client waits for the 101 before it sends a frame (RFC 6455, 4.1): one sent in
    the same write as the upgrade request is dropped, so its `hello` never arrived."""
    clock = task.Clock()

    async def test(web: WebServer) -> None:
        raw = await raw_connect(web.web_port)
        hello = {"type": "hello", "protocol": PROTOCOL_VERSION, "name": "eager", "id": 1}
        raw.send(upgrade_request(web.web_port), frame(BINARY, encode(hello)))
        await raw.until(lambda: raw.head is not None, "the upgrade's answer")
        assert raw.status == 101
        clock.advance(ServerLimits().handshake_seconds)
        await closed_with(raw, 1000, "handshake_timeout")
        assert [m["code"] for m in raw.messages] == ["handshake_timeout"]

    await with_web(test, clock=clock)


@pytest_twisted.ensureDeferred
async def test_an_upgrade_with_a_bad_key_or_version_is_refused_over_http() -> None:
    async def test(web: WebServer) -> None:
        request = upgrade_request(web.web_port)
        for bad in (request.replace(b"Version: 13", b"Version: 7"),
                    request.replace(b"dGhlIHNhbXBsZSBub25jZQ==", b"short")):
            raw = await raw_connect(web.web_port)
            raw.send(bad)
            await raw.until(lambda r=raw: r.head is not None, "an HTTP answer")  # type: ignore[misc]
            assert raw.status == 400, raw.head
            await raw.closed()

    await with_web(test)


@pytest_twisted.ensureDeferred
async def test_the_upgrade_answer_names_no_server() -> None:
    """autobahn's `Server` header held the factory's `server`, which this factory used
    for the game's state: the answer printed an object's repr (and its address)."""
    async def test(web: WebServer) -> None:
        raw = await raw_ws(web.web_port)
        assert raw.head is not None and b"server:" not in raw.head.lower(), raw.head
        cast(Any, raw.transport).loseConnection()  # rather than wait for the hello timeout

    await with_web(test)


def test_the_raw_frames_are_what_rfc_6455_says() -> None:
    assert frame(PING, masked=False) == b"\x89\x00"
    assert frame(BINARY, b"", fin=False, masked=False) == b"\x02\x00"
    assert frame(BINARY, length=70000, masked=False)[:10] == \
        b"\x82\x7f" + struct.pack("!Q", 70000)
