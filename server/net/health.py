"""Liveness and readiness over HTTP (`--health`), for a balancer and a supervisor.

- `GET /live`: `200 {"live": true}` whenever the reactor answers: a process that does
  not (frozen, wedged in a long call) does not answer at all.
- `GET /ready`: `200 {"ready": true, "failed": []}` when this process should get new
  players, else `503 {"ready": false, "failed": [...]}` naming the checks that failed
  (`READY_CHECKS`, in that order).
- `GET /metrics`: the process's Prometheus metrics (`pisyedili.server.service.metrics`,
  given as `metrics`), for a Prometheus that scrapes this port.

The port is its own, not `--web`'s: a balancer reaches it on loopback while the game's
ports face the players, its checks are not counted as players' connections, and it
keeps answering (503, `draining`) while the game's ports close. Each answer reads what
the process already knows (the cluster link's state, the journal's last commit), so a
check costs no round trip. Only `GET` and `HEAD` of these paths, with no query and
no body, are answered; a body is refused as its headers end, before it is read; a
request must arrive whole within `HTTP_REQUEST_SECONDS`; at most `MAX_CONNECTIONS`
connections at once. Requests are not written to the access log: a balancer checks
every second.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from typing import Any, cast

from twisted.internet.interfaces import IAddress
from twisted.logger import Logger
from twisted.web import http
from twisted.web.http import _GenericHTTPChannelProtocol
from twisted.web.resource import IResource, Resource
from twisted.web.server import Request, Site

from pisyedili.server.net.web import HTTP_IDLE_SECONDS, HTTP_REQUEST_SECONDS, WebChannel, WebRequest

log = Logger()

READY_CHECKS = ("listening", "store", "cluster", "draining")
"""What `/ready` checks, as it names a failed one: every game port listens (in a
cluster, only once it is joined); the store took the journal's last commit; the
cluster's Redis answers and this process's lease is not in doubt; the process is not
stopping."""
MAX_CONNECTIONS = 16
"""Connections to the health port at once; more are closed as they open."""


def _json(status: int, body: dict[str, Any]) -> tuple[int, bytes]:
    return status, json.dumps(body, separators=(",", ":")).encode() + b"\n"


_BODY_REFUSED = _json(413, {"error": "no_body"})[1]
BODY_REFUSED = (b"HTTP/1.1 413 Content Too Large\r\nConnection: close\r\n"
                b"Content-Type: application/json\r\nContent-Length: %d\r\n\r\n%s"
                % (len(_BODY_REFUSED), _BODY_REFUSED))
"""The whole answer to a request with a body: no path here takes one."""


class HealthResource(Resource):
    """`/live`, `/ready` and `/metrics`, and a short JSON 404 or 400 for anything else."""

    isLeaf = True

    def __init__(self, failed: Callable[[], Sequence[str]],
                 metrics: Resource | None = None) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self._failed = failed
        self._metrics = metrics

    def render_GET(self, request: Request) -> bytes | int:
        if request.path == b"/metrics" and self._metrics is not None \
                and b"?" not in request.uri:
            rendered: bytes | int = self._metrics.render(request)  # type: ignore[no-untyped-call]
            return rendered
        status, body = self._answer(request)
        request.setResponseCode(status)
        for name, value in ((b"content-type", b"application/json"),
                            (b"cache-control", b"no-store"),
                            (b"content-length", b"%d" % len(body))):
            request.setHeader(name, value)  # type: ignore[no-untyped-call]
        return b"" if request.method == b"HEAD" else body

    render_HEAD = render_GET

    def _answer(self, request: Request) -> tuple[int, bytes]:
        if b"?" in request.uri:
            return _json(400, {"error": "no_query"})
        if request.path == b"/live":
            return _json(200, {"live": True})
        if request.path == b"/ready":
            failed = list(self._failed())
            return _json(503 if failed else 200, {"ready": not failed, "failed": failed})
        return _json(404, {"error": "not_found"})


class HealthChannel(WebChannel):
    """The web port's hardened channel (a deadline for each whole request, methods other
    than GET and HEAD answered 405), refusing any request body at all."""

    refusal = BODY_REFUSED

    def allHeadersReceived(self) -> None:
        if self.length != 0:  # a Content-Length over 0, or chunked (None)
            self.refuse_body()
            return
        super().allHeadersReceived()


class HealthSite(Site):
    """The health port's site: at most `MAX_CONNECTIONS` at once, no access log."""

    requestFactory = WebRequest
    noisy = False

    def __init__(self, failed: Callable[[], Sequence[str]], clock: Any,
                 metrics: Resource | None = None) -> None:
        super().__init__(cast(IResource, HealthResource(failed, metrics)),  # type: ignore[no-untyped-call]
                         timeout=HTTP_IDLE_SECONDS, reactor=clock)
        self.request_seconds = HTTP_REQUEST_SECONDS
        self.open = 0
        self.displayTracebacks = False

    def protocol(self) -> Any:
        return _GenericHTTPChannelProtocol(HealthChannel())

    def buildProtocol(self, addr: IAddress | None) -> Any:
        if self.open >= MAX_CONNECTIONS:
            log.info("health check connection from {peer} refused: {count} open already",
                     peer=str(addr), count=self.open)
            return None  # closed at once
        proto = super().buildProtocol(addr)  # type: ignore[no-untyped-call]
        self.open += 1
        cast(HealthChannel, proto._channel).counted = ("health", False)
        return proto

    def release(self, key: str, per_address: bool) -> None:
        """A connection closed (`WebChannel.uncount`)."""
        self.open -= 1

    def log(self, request: http.Request) -> None:
        """No access log line: a balancer asks every second."""
