"""The HTTP surface of `--web` under abuse: request bodies, odd paths and methods,
header floods, slow and oversize requests, and many page loads from one address.

Each attack goes over a raw loopback socket (in a thread, so the in-process server's
reactor runs meanwhile) and checks the answer's status, that the server logged no
traceback for it, and that a fresh connection still loads the page.
"""

from __future__ import annotations

import os
import socket
import ssl
import threading
from pathlib import Path
from typing import Any

import pytest
import pytest_twisted
from poll_kit import poll_until_async
from sibling_kit import sibling
from twisted.internet import task
from twisted.internet.threads import deferToThread
from twisted.logger import LogEvent, formatEvent, globalLogPublisher
from web_kit import served
from ws_kit import WebServer, with_server

from pisyedili.server.net.limits import ServerLimits
from pisyedili.server.net.web import (
    HTTP_REQUEST_SECONDS,
    MAX_REQUEST_BODY,
    REFUSAL_LINGER,
    static_root,
)

TIMEOUT = 10.0
"""Seconds a raw client waits for an answer (generous: an answer comes at once)."""
GIB = 1 << 30


# -- a raw HTTP client --------------------------------------------------------------------


def _send_body(sock: socket.socket, size: int) -> None:
    """Send `size` zero bytes, stopping quietly when the server closes."""
    block = bytes(64 * 1024)
    try:
        while size > 0:
            sock.sendall(block[:size])
            size -= min(size, len(block))
    except OSError:
        pass


def exchange(port: int, head: bytes, body: int = 0, source: str = "127.0.0.1") -> bytes:
    """Send `head` then `body` bytes of body (from a thread, so a server that answers
    before reading them is heard) and read until the server closes or `TIMEOUT`."""
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT,
                                  source_address=(source, 0)) as sock:
        sock.sendall(head)
        sender = threading.Thread(target=_send_body, args=(sock, body), daemon=True)
        sender.start()
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except ConnectionResetError:
            pass  # closed with the rest of a refused body unread: the answer came first
        except TimeoutError:
            raise AssertionError(f"no close within {TIMEOUT} s; got {answer[:200]!r}") from None
        sender.join(TIMEOUT)
    return answer


def status(answer: bytes) -> int:
    """The status code of the first response in `answer`."""
    assert answer.startswith(b"HTTP/1."), answer[:200]
    return int(answer.split(b" ", 2)[1])


def get(path: bytes, *headers: bytes) -> bytes:
    """A one-off request's head (the server closes after answering)."""
    lines = [b"GET " + path + b" HTTP/1.1", b"Host: localhost", b"Connection: close",
             *headers]
    return b"\r\n".join(lines) + b"\r\n\r\n"


def page_loads(port: int) -> None:
    """A fresh client still gets the page."""
    answer = exchange(port, get(b"/"))
    assert status(answer) == 200 and b"<html" in answer.lower()


# -- the in-process server and its log -------------------------------------------------------


class Logged:
    """Every event the server logs while a test runs."""

    def __init__(self) -> None:
        self.events: list[LogEvent] = []

    def __call__(self, event: LogEvent) -> None:
        self.events.append(event)

    def tracebacks(self) -> list[str]:
        """Events that carry a failure or print a traceback."""
        return [formatEvent(e) or repr(e) for e in self.events
                if "log_failure" in e or "Traceback" in (formatEvent(e) or "")
                or e.get("isError")]


async def in_thread(function: Any, *args: Any, **kwargs: Any) -> Any:
    return await deferToThread(function, *args, **kwargs)


async def attack(head: bytes, body: int = 0, **server: Any) -> tuple[int, bytes, Logged]:
    """Send one request to a fresh in-process server; its status, whole answer and
    log, once a fresh client has loaded the page after it."""
    events = Logged()
    web = await WebServer.start(**server)
    globalLogPublisher.addObserver(events)  # type: ignore[arg-type]
    try:
        answer = await in_thread(exchange, web.web_port, head, body)
        await in_thread(page_loads, web.web_port)
    finally:
        globalLogPublisher.removeObserver(events)  # type: ignore[arg-type]
        await web.stop()
    return status(answer), answer, events


# -- request bodies ------------------------------------------------------------------------


def _temporary_files(pid: int, folder: Path) -> list[str]:
    """The files under `folder` the process holds open (an unlinked temporary file
    shows as `folder/#123 (deleted)`)."""
    held = []
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        try:
            target = os.readlink(fd)
        except OSError:
            continue  # closed meanwhile
        if target.startswith(str(folder)):
            held.append(target)
    return held


@pytest.mark.skipif(not Path("/proc/self/fd").is_dir(), reason="needs /proc")
def test_a_4_gib_body_is_refused_with_413_before_any_of_it_is_spooled(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """16 connections from one address each announce 4 GiB and send 2 MB of it: each
    gets 413 and the close, and the server holds no temporary file meanwhile."""
    spool = tmp_path / "tmp"
    spool.mkdir()
    monkeypatch.setenv("TMPDIR", str(spool))  # the server process's temporary files
    head = (b"GET / HTTP/1.1\r\nHost: localhost\r\nContent-Type: text/plain\r\n"
            b"Content-Length: %d\r\n\r\n" % (4 * GIB))
    with served() as server:
        answers: list[bytes] = []
        held: list[str] = []

        def one() -> None:
            answers.append(exchange(server.web_port, head, 2 * 1024 * 1024))
            held.extend(_temporary_files(server.process.pid, spool))

        threads = [threading.Thread(target=one) for _ in range(16)]
        for t in threads:
            t.start()
        for t in threads:
            t.join(2 * TIMEOUT)
        assert len(answers) == 16
        assert {status(a) for a in answers} == {413}
        assert all(a.endswith(b"request bodies over 4 KiB are refused\n") for a in answers)
        assert held == [] and list(spool.iterdir()) == []
        page_loads(server.web_port)
        assert "Traceback" not in server.log()


def _read_to_end(sock: socket.socket) -> bytes:
    """What the server sends until it closes its side."""
    answer = b""
    while chunk := sock.recv(65536):
        answer += chunk
    return answer


@pytest_twisted.ensureDeferred
async def test_a_refused_body_that_keeps_coming_is_cut_after_the_linger() -> None:
    """The refusal goes out first (and no `100 Continue` before it); the body's rest is
    dropped unread for `REFUSAL_LINGER` seconds, then the connection is cut."""
    clock = task.Clock()
    web = await WebServer.start(clock=clock)
    try:
        sock = await in_thread(socket.create_connection, ("127.0.0.1", web.web_port),
                               TIMEOUT)
        try:
            head = get(b"/", b"Content-Length: %d" % (4 * GIB), b"Expect: 100-continue")
            await in_thread(sock.sendall, head + bytes(64 * 1024))
            answer = await in_thread(_read_to_end, sock)  # our side is closed: EOF
            assert status(answer) == 413 and b"100 Continue" not in answer
            await in_thread(_send_quietly, sock, bytes(256 * 1024))  # still coming
            assert web.server.factory.connections.total == 1
            clock.advance(REFUSAL_LINGER)
            await until_counted(web, 0)
            await in_thread(page_loads, web.web_port)
        finally:
            sock.close()
    finally:
        await web.stop()


@pytest_twisted.ensureDeferred
async def test_a_chunked_body_is_refused_with_413_once_it_outgrows_the_cap() -> None:
    chunk = b"400\r\n" + bytes(1024) + b"\r\n"
    head = (b"GET / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n"
            + chunk * (MAX_REQUEST_BODY // 1024 + 1))  # one chunk over, never the end
    code, _, events = await attack(head, 1024 * 1024)
    assert code == 413 and events.tracebacks() == []


@pytest_twisted.ensureDeferred
async def test_a_chunked_body_over_the_cap_and_its_end_in_one_read_is_not_served() -> None:
    """The end of the body is read with its refusal: the request is not served after."""
    body = b"1400\r\n" + bytes(0x1400) + b"\r\n0\r\n\r\n"
    head = b"GET / HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n" + body
    code, answer, events = await attack(head)
    assert code == 413 and answer.count(b"HTTP/1.1") == 1
    assert events.tracebacks() == []


@pytest.mark.parametrize("encoding", ["length", "chunked"])
@pytest_twisted.ensureDeferred
async def test_a_small_body_is_read_and_the_request_answered(encoding: str) -> None:
    body = b"x" * MAX_REQUEST_BODY
    if encoding == "length":
        head = get(b"/", b"Content-Length: %d" % len(body)) + body
    else:
        head = get(b"/", b"Transfer-Encoding: chunked") + b"%x\r\n%s\r\n0\r\n\r\n" % (
            len(body), body)
    code, _, events = await attack(head)
    assert code == 200 and events.tracebacks() == []


def _refused_over_tls(port: int, roots: Path) -> bytes:
    context = ssl.create_default_context(cafile=str(roots))
    with socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT) as raw, \
            context.wrap_socket(raw, server_hostname="localhost") as sock:
        sock.sendall(get(b"/", b"Content-Length: %d" % (4 * GIB)) + bytes(64 * 1024))
        answer = b""
        try:
            while chunk := sock.recv(65536):
                answer += chunk
        except (ssl.SSLError, ConnectionResetError):
            pass  # closed with the body's rest unread: the answer came first
        return answer


@pytest_twisted.ensureDeferred
async def test_over_tls_a_huge_body_is_refused_with_413_too(tmp_path: Path) -> None:
    key, cert = sibling("client", "test_client_tls").make_certificate(tmp_path)

    async def test(web: WebServer) -> None:
        answer = await in_thread(_refused_over_tls, web.web_port, cert)
        assert status(answer) == 413
        await until_counted_in(web.server, 0)

    await with_server(test, tls=(key, cert))


# -- paths ---------------------------------------------------------------------------------


BAD_PATHS = [
    b"/index.html%00.js",
    b"/%00",
    b"/%c0%ae%c0%ae/%c0%ae%c0%ae/pyproject.toml",  # overlong UTF-8 dots
    b"/%c0%af",  # an overlong slash
    b"/%ff%fe",
    b"/../pyproject.toml",
    b"/../../../../etc/passwd",
    b"/%2e%2e/pyproject.toml",
    b"/%2e%2e%2fpyproject.toml",
    b"/..%2fpyproject.toml",
    b"/vendor/..%2f..%2f..%2fpyproject.toml",
    b"/..%5cpyproject.toml",
    b"/..\\..\\pyproject.toml",
    b"/vendor\\..\\index.html",
    b"//etc/passwd",
    b"/%2fetc%2fpasswd",
    b"/sounds/%2e%2e/%2e%2e/pyproject.toml",
    b"/.hidden",
    b"/%2ehidden",
]


@pytest.mark.parametrize("path", BAD_PATHS, ids=[p.decode("latin-1") for p in BAD_PATHS])
@pytest_twisted.ensureDeferred
async def test_a_path_out_of_the_folder_or_unreadable_is_a_quiet_404(path: bytes) -> None:
    code, answer, events = await attack(get(path))
    assert code in (400, 404), answer[:300]
    assert b"Traceback" not in answer and b"root:" not in answer and b"[project]" not in answer
    assert events.tracebacks() == []


@pytest_twisted.ensureDeferred
async def test_a_request_s_access_line_is_short_and_escaped_whatever_it_holds() -> None:
    """A path, `User-Agent` and `Referer` of kilobytes each (a terminal's escape
    sequence in one): one short access line, in which the escape is written out."""
    code, _, events = await attack(get(b"/" + b"p" * 6000, b"User-Agent: \x1b[2J" + b"a" * 6000,
                                       b"Referer: " + b"r" * 3000))
    lines = [text for text in map(formatEvent, events.events) if text and "pppp" in text]
    assert code == 404 and len(lines) == 1
    assert len(lines[0]) < 1000 and "\x1b" not in lines[0] and "\\x1b[2J" in lines[0]


@pytest_twisted.ensureDeferred
async def test_an_absolute_uri_is_served_as_its_path_and_cannot_leave_the_folder() -> None:
    code, _, events = await attack(get(b"http://localhost/../../etc/passwd"))
    assert code in (400, 404) and events.tracebacks() == []


# -- methods -------------------------------------------------------------------------------


METHODS = [b"POST", b"PUT", b"DELETE", b"OPTIONS", b"TRACE", b"PATCH", b"BREW", b"CONNECT"]


@pytest.mark.parametrize("method", METHODS, ids=[m.decode() for m in METHODS])
@pytest_twisted.ensureDeferred
async def test_a_method_other_than_get_or_head_is_refused(method: bytes) -> None:
    target = b"localhost:443" if method == b"CONNECT" else b"/index.html"
    head = (method + b" " + target + b" HTTP/1.1\r\nHost: localhost\r\n"
            b"Connection: close\r\nContent-Length: 0\r\n\r\n")
    code, answer, events = await attack(head)
    assert code in (400, 405), answer[:300]
    assert b"<script" not in answer  # the page is not sent for it
    assert events.tracebacks() == []


@pytest_twisted.ensureDeferred
async def test_no_answer_names_the_web_server_or_its_version() -> None:
    code, answer, _ = await attack(get(b"/"))
    head = answer.split(b"\r\n\r\n", 1)[0].lower()
    assert code == 200 and b"\r\nserver:" not in head and b"twisted" not in head
    code, answer, _ = await attack(get(b"/nothing-here"))
    assert code == 404 and b"twisted" not in answer.lower()


@pytest_twisted.ensureDeferred
async def test_head_is_answered_without_a_body() -> None:
    code, answer, _ = await attack(b"HEAD / HTTP/1.1\r\nHost: localhost\r\n"
                                   b"Connection: close\r\n\r\n")
    assert code == 200 and answer.endswith(b"\r\n\r\n")


# -- header floods and long lines ----------------------------------------------------------


FLOODS = {
    "many headers": get(b"/", *(b"X-Flood-%d: 1" % i for i in range(1000))),
    "one huge header": get(b"/", b"X-Huge: " + b"a" * 64 * 1024),
    "a huge cookie": get(b"/", b"Cookie: " + b"a=b; " * 8000),
    "a request line too long": get(b"/" + b"a" * 64 * 1024),
    "a header line without end": b"GET / HTTP/1.1\r\nX-Endless: " + b"a" * 256 * 1024,
    "a malformed request line": b"GET\r\n\r\n",
    "a header without a colon": get(b"/", b"no colon here"),
    "two lengths": get(b"/", b"Content-Length: 1", b"Content-Length: 2") + b"xx",
    "a negative length": get(b"/", b"Content-Length: -1"),
    "a bad chunk": get(b"/", b"Transfer-Encoding: chunked") + b"zz\r\n",
}


@pytest.mark.parametrize("head", list(FLOODS.values()), ids=list(FLOODS))
@pytest_twisted.ensureDeferred
async def test_a_flood_of_headers_or_a_line_too_long_is_refused_with_400(head: bytes) -> None:
    code, answer, events = await attack(head)
    assert code == 400, answer[:300]
    assert events.tracebacks() == []


# -- slow requests --------------------------------------------------------------------------


SLOW = {
    "a head that stops": b"GET / HTTP/1.1\r\nHost: localhost\r\n",
    "a body that stops": get(b"/", b"Content-Length: 100") + b"x" * 10,
    "a chunked body that stops": get(b"/", b"Transfer-Encoding: chunked") + b"64\r\nxx",
}


@pytest.mark.parametrize("first", list(SLOW.values()), ids=list(SLOW))
@pytest_twisted.ensureDeferred
async def test_a_request_that_stops_halfway_is_closed_at_the_deadline(first: bytes) -> None:
    """A slowloris sends part of a request and then a byte now and then: the request's
    deadline closes it, however it keeps the connection busy."""
    clock = task.Clock()
    web = await WebServer.start(clock=clock)
    try:
        sock = await in_thread(socket.create_connection, ("127.0.0.1", web.web_port),
                               TIMEOUT)
        try:
            await in_thread(sock.sendall, first)
            await until_counted(web, 1)
            for _ in range(int(HTTP_REQUEST_SECONDS)):  # a byte a second, each too late
                clock.advance(1)
                if web.server.factory.connections.total == 1:
                    await in_thread(_send_quietly, sock, b"x")
            clock.advance(1)
            assert await in_thread(sock.recv, 65536) == b""
            await until_counted(web, 0)
            await in_thread(page_loads, web.web_port)
        finally:
            sock.close()
    finally:
        await web.stop()


def _send_quietly(sock: socket.socket, data: bytes) -> None:
    try:
        sock.sendall(data)
    except OSError:
        pass


async def until_counted(web: WebServer, total: int) -> None:
    """Wait (polling, with a generous deadline) until the server counts `total`
    connections."""
    await until_counted_in(web.server, total)


async def until_counted_in(server: Any, total: int) -> None:
    """`until_counted` for a `wireclient.Server`."""
    await poll_until_async(
        lambda: server.factory.connections.total == total, TIMEOUT,
        lambda: f"a count of {total} (the server counts {server.factory.connections.total})")


# -- many page loads from one address ------------------------------------------------------


def page_files() -> list[str]:
    """Every file the page may load: the client's folder, its hidden files aside."""
    root = static_root()
    return sorted("/" + str(p.relative_to(root)) for p in root.rglob("*")
                  if p.is_file() and not any(part.startswith(".")
                                             for part in p.relative_to(root).parts))


def _load_all(port: int, files: list[str], start: threading.Barrier) -> list[int]:
    """One keep-alive connection, opened before `start`, that then fetches `files`."""
    import http.client

    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=TIMEOUT)
    try:
        connection.connect()
        start.wait(TIMEOUT)
        codes = []
        for path in files:
            connection.request("GET", path)
            response = connection.getresponse()
            response.read()
            codes.append(response.status)
        return codes
    finally:
        connection.close()


def load_in_parallel(port: int, files: list[str], count: int) -> list[list[int]]:
    """`count` connections, all open at once, each fetching `files`: their statuses."""
    start = threading.Barrier(count)
    results: list[list[int]] = []
    failures: list[BaseException] = []

    def one() -> None:
        try:
            results.append(_load_all(port, files, start))
        except Exception as e:
            failures.append(e)
            start.abort()

    threads = [threading.Thread(target=one) for _ in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not failures, failures[:3]
    return results


@pytest_twisted.ensureDeferred
async def test_24_connections_from_one_address_all_load_the_whole_page() -> None:
    """Three browsers behind one NAT load the page at once, six connections each and
    more: none is refused, whatever `--max-per-address` holds for players."""
    web = await WebServer.start(limits=ServerLimits(max_per_address=16))
    try:
        files = page_files()
        assert "/index.html" in files and len(files) > 30
        results = await in_thread(load_in_parallel, web.web_port, files, 24)
        assert all(codes == [200] * len(files) for codes in results)
        player = await web.ws("player")  # a player's place is still free
        assert (await player.request("ping"))["type"] == "pong"
    finally:
        await web.stop()


@pytest_twisted.ensureDeferred
async def test_http_connections_past_their_own_allowance_are_closed() -> None:
    """The allowance for page loads is larger, but there is one."""
    web = await WebServer.start(limits=ServerLimits(max_http_per_address=3))
    try:
        socks = [await in_thread(socket.create_connection, ("127.0.0.1", web.web_port),
                                 TIMEOUT) for _ in range(4)]
        try:
            assert await in_thread(socks[3].recv, 1) == b""  # closed as it was accepted
            await until_counted(web, 3)
        finally:
            for s in socks:
                s.close()
        await until_counted(web, 0)
        await in_thread(page_loads, web.web_port)
    finally:
        await web.stop()
