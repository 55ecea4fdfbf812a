"""The WebSocket endpoint and the web client's files, over real loopback sockets.

A browser's connection is a WebSocket to `/ws` whose binary messages are protocol
bodies; it meets the TCP connections in the same lobby and at the same tables, and bad
input on it is answered with the same codes as on TCP while the server goes on.
"""

from __future__ import annotations

import gzip
import posixpath
import random
import re
import ssl
import struct
import urllib.error
import urllib.request
from email.message import Message
from pathlib import Path
from typing import Any

import msgpack
import pytest
import pytest_twisted
from sibling_kit import sibling
from twisted.internet import reactor, task
from twisted.internet.defer import Deferred
from twisted.internet.endpoints import TCP4ClientEndpoint, connectProtocol
from twisted.internet.protocol import Protocol, connectionDone
from twisted.internet.threads import deferToThread
from twisted.python.failure import Failure
from ws_kit import WebServer, with_server, ws_connect

from pisyedili.protocol.codec import encode
from pisyedili.protocol.limits import MAX_CLIENT_FRAME
from pisyedili.server.net.limits import ServerLimits
from pisyedili.server.net.web import (
    HTTP_IDLE_SECONDS,
    OriginPolicy,
    Proxies,
    accepts_gzip,
    parse_origin,
)
from pisyedili.server.net.websocket import WebSocketConnection

Msg = dict[str, Any]


def framed(body: bytes) -> bytes:
    """`body` as a TCP frame: its 4-byte length, then itself."""
    return struct.pack(">I", len(body)) + body


async def still_serves(web: WebServer) -> None:
    """A new browser connection is welcomed and answered: the server was not harmed."""
    other = await web.ws("someone-else")
    assert (await other.request("ping"))["type"] == "pong"


def _get(url: str, headers: dict[str, str]) -> tuple[int, Message, bytes]:
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers),
                                    timeout=10) as response:
            return response.status, response.headers, response.read()
    except urllib.error.HTTPError as e:  # 304 and 4xx: still an answer
        return e.code, e.headers, e.read()


async def http_get(port: int, path: str, headers: dict[str, str] | None = None
                   ) -> tuple[int, Message, bytes]:
    """GET `path` from the site (urllib in a thread: the reactor serves meanwhile)."""
    return await deferToThread(_get, f"http://127.0.0.1:{port}{path}", headers or {})


# -- the handshake and the shared lobby ---------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_hello_over_websocket_is_welcomed_as_over_tcp() -> None:
    async def test(web: WebServer) -> None:
        browser = await web.ws("ayşe")
        tcp = await web.server.connect("bora")
        assert browser.welcome["name"] == "ayşe" and browser.welcome["token"]
        assert browser.welcome["player"] != tcp.welcome["player"]
        assert browser.welcome["limits"] == tcp.welcome["limits"]
        assert browser.welcome["features"] == tcp.welcome["features"]
        assert (await browser.request("ping"))["type"] == "pong"

    await with_server(test)


@pytest_twisted.ensureDeferred
async def test_a_browser_and_a_tcp_player_at_one_table_see_each_others_moves() -> None:
    async def test(web: WebServer) -> None:
        browser = await web.ws("browser")
        tcp = await web.server.connect("terminal")
        snap = await browser.ok("create_table", rules="classic", seats=2,
                                options={"match_end": "deals:1"})
        joined = await tcp.ok("join_table", table=snap["table"]["id"])
        assert joined["you"]["seat"] is not None
        await tcp.ok("ready", ready=True)
        await browser.ok("start")
        rng = random.Random(3)
        seen_by_other = 0
        for _ in range(6):  # a few turns each way
            mover = await pending(browser, tcp)
            other = tcp if mover is browser else browser
            decision = mover.decision()
            assert decision is not None
            move = rng.choice(decision["moves"])
            other.cursor = len(other.received)
            assert (await mover.request("move", move=move))["type"] == "ok"
            update = await other.wait(lambda m: m["type"] == "update")
            seats = {e.get("seat") for e in update["events"]}
            assert update["events"] and seats - {None}, update
            seen_by_other += 1
            if any(e["event"] in ("deal_end", "match_end") for e in update["events"]):
                break
        assert seen_by_other >= 2
        # The lobby is one: a browser sees the TCP player's table.
        lobby = await browser.ok("lobby_subscribe")
        assert snap["table"]["id"] in [t["id"] for t in lobby["tables"]]

    await with_server(test)


async def pending(*clients: Any) -> Any:
    """The client that must decide now (a ping round trip on each first: see
    tests/server/net_match.py)."""
    for c in clients:
        await c.request("ping")
    for c in clients:
        c.cursor = len(c.received)
        if c.decision() is not None:
            return c
    raise AssertionError("nobody has a decision to make")


# -- bad input ------------------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_a_text_message_is_answered_and_the_connection_stays() -> None:
    async def test(web: WebServer) -> None:
        browser = await web.ws("texter")
        browser.send_text('{"type": "ping"}')
        err = await browser.wait_type("error")
        assert err["code"] == "text_message" and "binary" in err["message"]
        assert (await browser.request("ping"))["type"] == "pong"  # still in step
        await still_serves(web)

    await with_server(test)


@pytest_twisted.ensureDeferred
async def test_a_text_message_before_hello_is_answered_then_closed() -> None:
    async def test(web: WebServer) -> None:
        browser = await web.ws()
        browser.send_text("hello")
        err = await browser.wait_type("error")
        assert err["code"] == "text_message"
        await browser.closed  # before hello, anything but a valid hello closes
        assert browser.received == [err]  # for it, not by the handshake timer

    await with_server(test)


BODIES: list[tuple[str, bytes]] = [
    ("an array", msgpack.packb([1, 2, 3])),
    ("a string", msgpack.packb("ping")),
    ("not msgpack", b"\xc1\xc1"),
    ("two values", msgpack.packb({"type": "ping"}) + msgpack.packb({"type": "ping"})),
    ("no type", msgpack.packb({"id": 5})),
    ("unknown type", msgpack.packb({"type": "teleport", "id": 901})),
    ("wrong field type", msgpack.packb({"type": "sit", "seat": "zero", "id": 902})),
    ("missing field", msgpack.packb({"type": "move", "id": 904})),
    ("chat too long", msgpack.packb({"type": "chat", "text": "y" * 301})),
    ("too deep", msgpack.packb({"type": "ping", "x": [[[[[[1]]]]]]})),
    ("empty", b""),
]


@pytest.mark.parametrize(("what", "body"), BODIES, ids=[b[0] for b in BODIES])
@pytest_twisted.ensureDeferred
async def test_a_bad_body_gets_the_same_error_as_over_tcp(what: str, body: bytes) -> None:
    async def test(web: WebServer) -> None:
        browser = await web.ws("browser")
        tcp = await web.server.connect("terminal")
        browser.send_body(body)
        tcp.send_raw(framed(body))
        over_ws, over_tcp = await browser.wait_type("error"), await tcp.wait_type("error")
        assert over_ws == over_tcp
        assert (await browser.request("ping"))["type"] == "pong"

    await with_server(test)


@pytest_twisted.ensureDeferred
async def test_an_oversize_message_is_refused_as_an_oversize_frame_and_closed() -> None:
    async def test(web: WebServer) -> None:
        browser = await web.ws("big")
        tcp = await web.server.connect("big-tcp")
        body = msgpack.packb({"type": "ping", "x": "z" * MAX_CLIENT_FRAME})
        browser.send_body(body)
        tcp.send_raw(framed(body))
        over_ws, over_tcp = await browser.wait_type("error"), await tcp.wait_type("error")
        assert over_ws["code"] == over_tcp["code"] == "frame_too_large"
        assert over_ws["limit"] == over_tcp["limit"] == MAX_CLIENT_FRAME
        await browser.closed
        await tcp.closed
        assert browser.close_code == 1009  # WebSocket's "message too big"
        await still_serves(web)

    await with_server(test)


@pytest_twisted.ensureDeferred
async def test_a_message_at_the_limit_is_read() -> None:
    async def test(web: WebServer) -> None:
        browser = await web.ws("edge")
        # A body of exactly the limit is read (and refused for its string, not its size).
        overhead = len(msgpack.packb({"type": "ping", "pad": "p" * 60_000})) - 60_000
        body = msgpack.packb({"type": "ping", "pad": "p" * (MAX_CLIENT_FRAME - overhead)})
        assert len(body) == MAX_CLIENT_FRAME
        browser.send_body(body)
        err = await browser.wait_type("error")
        assert err["code"] == "value_too_large"
        assert (await browser.request("ping"))["type"] == "pong"

    await with_server(test)


@pytest_twisted.ensureDeferred
async def test_a_refused_hello_closes_as_over_tcp() -> None:
    async def test(web: WebServer) -> None:
        browser = await web.ws()
        tcp = await web.server.connect()
        for client in (browser, tcp):
            client.send({"type": "ping", "id": 1})  # hello_required
        over_ws, over_tcp = await browser.wait_type("error"), await tcp.wait_type("error")
        assert over_ws == over_tcp and over_ws["code"] == "hello_required"
        await browser.closed
        await tcp.closed
        assert browser.close_code == 1000 and browser.close_reason == "hello_required"

    await with_server(test)


@pytest_twisted.ensureDeferred
async def test_flooding_is_rate_limited_then_closed_as_over_tcp() -> None:
    async def test(web: WebServer) -> None:
        browser = await web.ws("flood-ws")  # hello took one token
        flooder = web.server_side(browser).socket
        tcp = await web.server.connect("flood-tcp")
        for client in (browser, tcp):
            for i in range(100, 120):
                client.send({"type": "ping", "id": i})
        for client in (browser, tcp):  # the first refusals are answered, the rest not
            replies = [await client.wait_for_id(i) for i in range(100, 119)]
            assert [r["type"] for r in replies] == ["pong"] * 9 + ["error"] * 10
            assert {r["code"] for r in replies[9:]} == {"rate_limited"}
        for client in (browser, tcp):
            for i in range(200, 240):
                client.send({"type": "ping", "id": i})
        for client in (browser, tcp):
            err = await client.wait(lambda m: m["type"] == "error" and "closing" in m["message"])
            assert err["code"] == "rate_limited"
            await client.closed
        # The server reads nothing more from the flooder, its answer to the close
        # included: it ended the stream itself rather than wait for that answer.
        assert flooder.droppedByMe and not flooder.wasCloseHandshakeTimeout
        clock.advance(1)
        await still_serves(web)

    clock = task.Clock()  # frozen: the buckets never refill
    await with_server(test, clock=clock,
                      limits=ServerLimits(rate=5, burst=10, flood_close=30))


@pytest_twisted.ensureDeferred
async def test_a_server_message_over_the_client_limit_reaches_the_browser_whole() -> None:
    async def test(web: WebServer) -> None:
        browser = await web.ws("reader")
        tcp = await web.server.connect("host")
        await tcp.ok("create_table", rules="classic", seats=4, name="ş" * 40)
        lobby = web.server.factory.lobby.snapshot()
        (row,) = lobby["tables"]
        # A lobby page as large as a busy server's: far over the client frame limit.
        rows = [{**row, "id": row["id"] + k} for k in range(400)]
        big = {**lobby, "tables": rows, "total": len(rows)}
        assert len(encode(big)) > MAX_CLIENT_FRAME + 1024
        conn = web.server_side(browser)
        assert isinstance(conn, WebSocketConnection)
        conn.send_message(big)
        got = await browser.wait_type("lobby")
        assert got == big
        assert (await browser.request("ping"))["type"] == "pong"

    await with_server(test)


class RawHttp(Protocol):
    """One keep-alive HTTP connection, as a browser leaves it between page loads."""

    def __init__(self) -> None:
        self.data = b""
        self.answered: Deferred[None] = Deferred()
        self.gone: Deferred[None] = Deferred()

    def dataReceived(self, data: bytes) -> None:
        self.data += data
        if not self.answered.called and b"</html>" in self.data.lower():
            self.answered.callback(None)

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self.gone.callback(None)


@pytest_twisted.ensureDeferred
async def test_an_idle_http_connection_is_closed_but_a_quiet_websocket_is_not() -> None:
    async def test(web: WebServer) -> None:
        browser = await web.ws("quiet")
        http = await connectProtocol(  # type: ignore[no-untyped-call]
            TCP4ClientEndpoint(reactor, "127.0.0.1", web.web_port), RawHttp())
        assert http.transport is not None
        http.transport.write(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        await http.answered
        clock.advance(HTTP_IDLE_SECONDS - 1)
        assert not http.gone.called
        clock.advance(2)
        await http.gone.addTimeout(10, reactor)
        assert (await browser.request("ping"))["type"] == "pong"  # the WebSocket stays
        assert not browser.is_closed

    clock = task.Clock()
    await with_server(test, clock=clock)


slow_reader = sibling("server", "test_net_slow_reader")


@pytest_twisted.ensureDeferred
async def test_a_browser_that_stops_reading_is_closed_too_slow_as_over_tcp() -> None:
    """The WebSocket connection is its stream's producer (in place of twisted.web's
    channel), so what a browser leaves unread is bounded as on TCP."""
    async def test(web: WebServer) -> None:
        host = await web.server.connect("host")
        snap = await host.ok("create_table", rules="classic", seats=4,
                             options={"match_end": "deals:100"})
        for seat in (1, 2, 3):
            await host.ok("add_bot", seat=seat, level="easy")
        slow = await web.ws("slow")
        await slow.ok("join_table", table=snap["table"]["id"], spectate=True)
        seen = slow_reader.watch(web.server, slow)
        assert isinstance(seen.proto, WebSocketConnection)
        assert slow.socket is not None
        slow.socket.transport.pauseProducing()  # type: ignore[union-attr]  # stops reading: the server's writes pile up
        await host.ok("start")
        await host.ok("leave_table")  # bots only now, at machine speed
        assert await seen.closed_with.addTimeout(30, reactor) == "too_slow"
        slow_reader.assert_bounded(seen)
        slow.socket.transport.resumeProducing()  # type: ignore[union-attr]
        await slow.closed
        last = slow.received[-1]
        assert (last["type"], last["code"]) == ("error", "too_slow")
        await still_serves(web)

    await with_server(test, limits=slow_reader.TIGHT)


@pytest_twisted.ensureDeferred
async def test_a_browser_session_resumed_over_tcp_is_told_replaced() -> None:
    async def test(web: WebServer) -> None:
        browser = await web.ws("roamer")
        tcp = await web.server.connect("roamer", token=browser.welcome["token"])
        assert tcp.welcome["resumed"] and tcp.welcome["player"] == browser.welcome["player"]
        replaced = await browser.wait_type("replaced")
        assert replaced["message"]
        await browser.closed
        assert browser.close_code == 1000
        assert (await tcp.request("ping"))["type"] == "pong"

    await with_server(test)


@pytest_twisted.ensureDeferred
async def test_random_bodies_never_cost_the_connection() -> None:
    async def test(web: WebServer) -> None:
        browser = await web.ws("noise")
        rng = random.Random(11)
        bodies = [bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
                  for _ in range(300)]
        bodies += [msgpack.packb({"type": rng.choice(["sit", "move", "chat", "join_table"]),
                                  "id": 10_000 + k, rng.choice(["seat", "move", "text"]):
                                  rng.choice([None, -1, 2**40, "x", [1], {"a": 1}])})
                   for k in range(100)]
        for body in bodies:
            browser.send_body(body)
        pong = await browser.request("ping")  # after all of them, in order
        assert pong["type"] == "pong"
        errors = [m for m in browser.received if m["type"] == "error"]
        assert errors and not [e for e in errors if e["code"] == "internal_error"]
        assert not browser.is_closed

    await with_server(test)


@pytest_twisted.ensureDeferred
async def test_over_tls_the_page_and_the_websocket_are_https_and_wss(tmp_path: Path) -> None:
    """`--web ssl:...`: twisted.web hands the TLS stream to the WebSocket as it does TCP."""
    key, cert = sibling("client", "test_client_tls").make_certificate(tmp_path)

    async def test(web: WebServer) -> None:
        port = web.web_port
        browser = await ws_connect(port, name="güvenli", host="localhost",
                                   tls_roots=cert.parent)
        assert browser.welcome["name"] == "güvenli"
        browser.send_text("hi")
        assert (await browser.wait_type("error"))["code"] == "text_message"
        with pytest.raises(ConnectionRefusedError, match="403"):  # origins hold over TLS
            await ws_connect(port, origin="https://evil.example", host="localhost",
                             tls_roots=cert.parent)
        browser.send_body(msgpack.packb({"type": "ping", "x": "z" * MAX_CLIENT_FRAME}))
        assert (await browser.wait_type("error"))["code"] == "frame_too_large"
        await browser.closed

        def get() -> tuple[int, str]:
            context = ssl.create_default_context(cafile=str(cert))
            with urllib.request.urlopen(f"https://localhost:{port}/", context=context,
                                        timeout=10) as response:
                return response.status, response.headers["content-type"]

        assert await deferToThread(get) == (200, "text/html; charset=utf-8")

    await with_server(test, tls=(key, cert))


# -- proxies ------------------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_behind_a_trusted_proxy_limits_count_by_the_forwarded_address() -> None:
    async def test(web: WebServer) -> None:
        via_proxy = await web.ws("a", headers={"X-Forwarded-For": "203.0.113.7, 127.0.0.1"})
        assert web.server_side(via_proxy).address == "203.0.113.7"
        direct = await web.ws("b")
        assert web.server_side(direct).address == "127.0.0.1"
        # Two browsers behind the proxy: two addresses, not one proxy's cap.
        other = await web.ws("c", headers={"X-Forwarded-For": "198.51.100.2"})
        assert web.server_side(other).address == "198.51.100.2"
        with pytest.raises(ConnectionError):  # the third from 127.0.0.1 itself: over its cap
            await web.ws("d")

    await with_server(test, proxies=Proxies.from_options(["127.0.0.1"]),
                      limits=ServerLimits(max_per_address=1, rate=1000, burst=1000))


@pytest_twisted.ensureDeferred
async def test_a_forwarded_address_from_an_untrusted_peer_is_ignored() -> None:
    async def test(web: WebServer) -> None:
        liar = await web.ws("liar", headers={"X-Forwarded-For": "203.0.113.7"})
        assert web.server_side(liar).address == "127.0.0.1"

    await with_server(test, proxies=Proxies.from_options(["10.0.0.0/8"]))


def test_proxies_read_the_forwarded_chain_from_the_right() -> None:
    proxies = Proxies.from_options(["127.0.0.1", "10.0.0.0/8", "::1"])
    assert proxies.client("127.0.0.1", "198.51.100.1, 203.0.113.9, 10.1.2.3") == "203.0.113.9"
    assert proxies.client("::ffff:127.0.0.1", "203.0.113.9") == "203.0.113.9"
    assert proxies.client("::1", "2001:db8::5") == "2001:db8::5"
    assert proxies.client("127.0.0.1", "10.0.0.1") == "10.0.0.1"  # all proxies: the first
    assert proxies.client("127.0.0.1", None) is None
    assert proxies.client("127.0.0.1", "unknown") is None
    assert proxies.client("127.0.0.1", "203.0.113.9:4711") is None  # not an address
    assert proxies.client("192.0.2.1", "203.0.113.9") is None  # not a trusted peer
    with pytest.raises(ValueError):
        Proxies.from_options(["proxy.example.org"])


# -- origins ------------------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_only_the_servers_own_pages_may_connect_by_default() -> None:
    async def test(web: WebServer) -> None:
        with pytest.raises(ConnectionRefusedError, match="403"):
            await web.ws(origin="http://evil.example")
        with pytest.raises(ConnectionRefusedError, match="403"):
            await web.ws(origin=f"http://127.0.0.1:{web.web_port + 1}")  # another port
        with pytest.raises(ConnectionRefusedError, match="403"):
            await web.ws(origin="null")  # a sandboxed page or a file
        assert (await web.ws("own", origin="own")).welcome["type"] == "welcome"
        assert (await web.ws("program", origin=None)).welcome["type"] == "welcome"
        await still_serves(web)

    await with_server(test)


@pytest_twisted.ensureDeferred
async def test_added_origins_may_connect_and_a_star_allows_all() -> None:
    async def added(web: WebServer) -> None:
        assert (await web.ws("ok", origin="https://play.example.org")).welcome
        with pytest.raises(ConnectionRefusedError, match="403"):
            await web.ws(origin="http://play.example.org")  # another scheme: another origin

    await with_server(added, origins=OriginPolicy.from_options(["https://play.example.org"]))

    async def star(web: WebServer) -> None:
        assert (await web.ws("any", origin="http://evil.example")).welcome
        assert (await web.ws("file", origin="null")).welcome

    await with_server(star, origins=OriginPolicy.from_options(["*"]))


def test_origin_policy_reads_host_and_default_ports() -> None:
    own = OriginPolicy()
    assert own.allows("http://example.org", "example.org")
    assert own.allows("https://example.org", "example.org")
    assert own.allows("https://Example.org:443", "example.org:443")
    assert own.allows("http://[::1]:8080", "[::1]:8080")
    assert not own.allows("http://example.org:8080", "example.org")
    assert not own.allows("http://example.org", "example.org:8080")
    assert not own.allows("http://example.org.evil", "example.org")
    assert not own.allows("http://example.org", None)
    assert own.allows(None, "example.org")  # a program, not a page
    assert parse_origin("HTTPS://Play.Example.org") == ("https", "play.example.org", 443)
    for bad in ("play.example.org", "ftp://example.org", "https://example.org/path",
                "https://user@example.org", "https://example.org:99999"):
        with pytest.raises(ValueError):
            parse_origin(bad)


# -- the static files -------------------------------------------------------------------


@pytest_twisted.ensureDeferred
async def test_the_page_and_its_modules_are_served_with_their_types() -> None:
    async def test(web: WebServer) -> None:
        code, headers, body = await http_get(web.web_port, "/")
        assert code == 200 and b"<html" in body.lower()
        assert headers["content-type"] == "text/html; charset=utf-8"
        assert headers["cache-control"] == "no-cache"
        assert headers["x-content-type-options"] == "nosniff"
        modules = [m.decode() for m in re.findall(rb'src="\.?/?([\w./-]+\.m?js)"', body)]
        assert modules, "the page loads no JS module"
        entry = "/" + modules[0]
        seen: set[str] = set()
        while modules:  # the page's modules and every module they import
            module = posixpath.normpath(modules.pop())
            if module in seen:
                continue
            seen.add(module)
            code, headers, source = await http_get(web.web_port, "/" + module)
            assert code == 200, module
            assert headers["content-type"] == "text/javascript; charset=utf-8"
            modules += [posixpath.join(posixpath.dirname(module), m.decode()) for m in
                        re.findall(rb'(?:from|import)\s*["\'](\.{1,2}/[^"\']+)["\']', source)]
        assert len(seen) > 1, f"the modules import nothing: {seen}"
        # A browser revalidates (no-cache): an unchanged file costs a 304, not the file.
        _, headers, _ = await http_get(web.web_port, entry)
        code, _, _ = await http_get(web.web_port, entry,
                                    {"If-Modified-Since": headers["last-modified"]})
        assert code == 304

    await with_server(test)


@pytest_twisted.ensureDeferred
async def test_no_listings_no_hidden_files_no_way_out() -> None:
    async def test(web: WebServer) -> None:
        for path in ("/vendor/", "/.hidden", "/../pyproject.toml", "/%2e%2e/pyproject.toml",
                     "/nothing-here.js"):
            code, _, body = await http_get(web.web_port, path)
            assert code == 404, (path, code)
            assert b"Traceback" not in body
        code, _, _ = await http_get(web.web_port, "/ws")  # a plain GET: no upgrade
        assert code == 426
        await still_serves(web)

    await with_server(test)



@pytest_twisted.ensureDeferred
async def test_files_are_gzipped_when_accepted_with_a_strong_etag_and_304() -> None:
    async def test(web: WebServer) -> None:
        code, plain_headers, plain = await http_get(web.web_port, "/app.js")
        assert code == 200 and "content-encoding" not in plain_headers
        code, headers, packed = await http_get(web.web_port, "/app.js",
                                               {"Accept-Encoding": "br, gzip;q=0.8"})
        assert code == 200 and headers["content-encoding"] == "gzip"
        assert headers["vary"] == "accept-encoding"
        assert gzip.decompress(packed) == plain and len(packed) < len(plain) / 2
        assert int(headers["content-length"]) == len(packed)
        etag = headers["etag"]
        assert etag.startswith('"') and not etag.startswith("W/") and etag != plain_headers["etag"]
        _, refused, _ = await http_get(web.web_port, "/app.js", {"Accept-Encoding": "gzip;q=0"})
        assert "content-encoding" not in refused
        # Either form's tag names the content: a revalidation is a 304 with no body.
        for tag in (etag, plain_headers["etag"], f'"other", {etag}'):
            code, _, body = await http_get(web.web_port, "/app.js", {"If-None-Match": tag})
            assert (code, body) == (304, b""), tag
        code, _, body = await http_get(web.web_port, "/app.js", {"If-None-Match": '"other"'})
        assert code == 200 and body == plain
        _, other, _ = await http_get(web.web_port, "/lobby.js")
        assert other["etag"] != plain_headers["etag"]  # the tag follows the content

    await with_server(test)


@pytest_twisted.ensureDeferred
async def test_the_page_may_load_only_from_its_own_server() -> None:
    async def test(web: WebServer) -> None:
        _, headers, _ = await http_get(web.web_port, "/")
        policy = headers["content-security-policy"]
        assert policy.startswith("default-src 'self';")
        assert "frame-ancestors 'none'" in policy

    await with_server(test)


def test_accept_encoding_is_read_with_its_weights() -> None:
    assert accepts_gzip(b"gzip, deflate, br")
    assert accepts_gzip(b"*") and accepts_gzip(b"x-gzip")
    assert accepts_gzip(b"GZIP;q=0.5")
    assert not accepts_gzip(None) and not accepts_gzip(b"") and not accepts_gzip(b"br")
    assert not accepts_gzip(b"gzip;q=0, *") and not accepts_gzip(b"*;q=0")
    assert not accepts_gzip(b"gzip;q=zero")
