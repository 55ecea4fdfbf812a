"""The health port (`--health`) under abuse: bodies, queries, other paths and methods,
and more connections than it keeps. A balancer asks it every second, so every answer
is short JSON, nothing is read that is not needed, and nothing is logged per request.

One real server process for the module, over raw loopback sockets.
"""

from __future__ import annotations

import json
import socket
from collections.abc import Iterator

import pytest
from health_kit import Served, check, exchange, health_server
from poll_kit import poll_until
from process_output import BACKSTOP

from pisyedili.server.net.health import MAX_CONNECTIONS

GIB = 1 << 30


@pytest.fixture(scope="module")
def served() -> Iterator[Served]:
    with health_server() as served:
        yield served
        assert served.proc.poll() is None, "the server died"
        log = served.out.text
        assert "Traceback" not in log and "Unhandled" not in log, log
        assert "/ready" not in log, "a check was written to the log"


def _status(answer: bytes) -> tuple[int, dict[str, object] | None]:
    head, _, body = answer.partition(b"\r\n\r\n")
    status = int(head.split(b" ", 2)[1])
    return status, json.loads(body) if body.strip().startswith(b"{") else None


@pytest.mark.parametrize("framing", [b"Content-Length: 1", b"Content-Length: %d" % (4 * GIB),
                                     b"Transfer-Encoding: chunked"],
                         ids=["one byte", "4 GiB", "chunked"])
def test_any_body_is_refused_before_it_is_read(served: Served, framing: bytes) -> None:
    answer = exchange(served.health, b"GET /ready HTTP/1.1\r\nHost: x\r\n" + framing +
                      b"\r\n\r\n")
    assert _status(answer) == (413, {"error": "no_body"}), answer
    assert check(served.health, "/ready")[0] == 200


def test_a_query_another_path_or_method_gets_a_short_refusal(served: Served) -> None:
    assert check(served.health, "/ready?verbose=1") == (400, {"error": "no_query"})
    assert check(served.health, "/live?x") == (400, {"error": "no_query"})
    for path in ("/", "/ready/", "/readyz", "/../ready", "/ws"):
        assert check(served.health, path) == (404, {"error": "not_found"}), path
    for method in (b"POST", b"PUT", b"DELETE", b"OPTIONS", b"TRACE"):
        answer = exchange(served.health, method + b" /ready HTTP/1.0\r\n\r\n")
        assert answer.startswith(b"HTTP/1.0 405 "), answer


def test_past_its_connections_a_new_one_is_closed_at_once(served: Served) -> None:
    """`MAX_CONNECTIONS` held open (saying nothing): the next is closed unanswered; once
    they close, a check is answered again."""
    held = [socket.create_connection(("127.0.0.1", served.health), timeout=BACKSTOP)
            for _ in range(MAX_CONNECTIONS)]
    try:
        for sock in held:  # each is accepted and counted before the next is tried
            sock.sendall(b"GET /live HTTP/1.1\r\nHost: x\r\n\r\n")
            assert sock.recv(65536).startswith(b"HTTP/1.1 200 ")
        try:  # closed unanswered (reset, since the request went unread)
            answer = exchange(served.health, b"GET /live HTTP/1.0\r\n\r\n")
        except ConnectionResetError:
            answer = b""
        assert answer == b""
    finally:
        for sock in held:
            sock.close()
    poll_until(lambda: _answered(served.health), BACKSTOP,
               "/live answered once the held connections closed")


def _answered(port: int) -> bool:
    """Whether `/live` is answered now (the held connections' closes reach the server in
    their own time; till then a new one is refused)."""
    try:
        return exchange(port, b"GET /live HTTP/1.0\r\n\r\n").startswith(b"HTTP/1.0 200 ")
    except ConnectionResetError:
        return False
