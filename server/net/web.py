"""The browser's way in: the web client's files over HTTP, the protocol over a WebSocket.

`make_site` builds one `twisted.web.server.Site`: `/` serves the static files of the
package folder `pisyedili.client/web` (installed with the package, no build step) and
`/ws` is autobahn's WebSocket resource (server/net/websocket.py). Each binary WebSocket
message carries one msgpack map, the body a TCP frame would carry, handed to the same
`Connection` logic as TCP (server/net/connection.py): schema, limits, rate limits,
handshake and error codes are one code path for both transports. The WebSocket only
frames the bodies:

- a text message is answered with `error` `text_message` (the connection stays);
- a message over the client frame limit is answered as an oversize TCP frame is
  (`frame_too_large`, then the close; WebSocket close code 1009), before autobahn
  buffers it;
- a browser's handshake is refused (HTTP 403) unless its `Origin` is allowed
  (`OriginPolicy`), so a page on another site cannot play in its visitor's name;
- behind a reverse proxy every browser arrives from the proxy's address, so for peers
  named as trusted proxies (`Proxies`) the per-address limits count by the address
  the proxy puts last in `X-Forwarded-For`;
- every HTTP connection counts against the server's connection limits (`WebSite`),
  up to all but `web_reserve` of them, by address in an allowance of its own
  (`--max-http-per-address`, larger than a player's: a page load takes several), and
  must send each request whole within `HTTP_REQUEST_SECONDS`, so half-sent requests
  cannot hold every descriptor; a request body over `MAX_REQUEST_BODY` gets 413.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import ipaddress
import os
from collections.abc import Iterable
from dataclasses import dataclass
from importlib.resources import files
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlsplit

from twisted.internet.interfaces import IAddress, ISSLTransport
from twisted.internet.protocol import connectionDone
from twisted.logger import Logger
from twisted.python.failure import Failure
from twisted.web import pages
from twisted.web.http import CACHED, HTTPChannel, _GenericHTTPChannelProtocol
from twisted.web.resource import IResource
from twisted.web.server import Request, Site
from twisted.web.static import File, getTypeAndEncoding

from pisyedili.server.net.limits import ConnectionCounter, address_key, web_reserve
from pisyedili.server.net.tcp import ServerFactory

log = Logger()

WS_PATH = b"ws"
"""The WebSocket's path under the site's root: `/ws`."""

CONTENT_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".css": "text/css; charset=utf-8",
    ".json": "application/json",
    ".map": "application/json",
    ".svg": "image/svg+xml",
    ".png": "image/png",
    ".wav": "audio/wav",
    ".ico": "image/x-icon",
    ".webp": "image/webp",
    ".woff2": "font/woff2",
    ".txt": "text/plain; charset=utf-8",
    ".ogg": "audio/ogg",
    ".opus": "audio/ogg",
    ".mp3": "audio/mpeg",
}
"""Fixed here rather than read from the system's mime.types, which differ: a browser
runs a JS module only when it is served as JavaScript."""
CACHE_CONTROL = b"no-cache"
"""The files keep their names across releases (no build step hashes them), so browsers
revalidate each time; an unchanged file costs a 304 (its ETag, or Last-Modified)."""
CONTENT_SECURITY_POLICY = (b"default-src 'self'; img-src 'self' data:; object-src 'none'; "
                           b"base-uri 'none'; form-action 'self'; frame-ancestors 'none'")
"""The page loads nothing from elsewhere: scripts, styles, sounds and the WebSocket come
from this server (`data:` only for the inline icon); no other site may frame it."""
HTTP_IDLE_SECONDS = 60
"""Seconds an HTTP connection may sit idle (keep-alive between page loads)."""
HTTP_REQUEST_SECONDS = 5.0
"""Seconds a whole request (request line, headers, a WebSocket upgrade's too, and its
body if any) may take to arrive, from its first byte (for a connection's first
request, from the connect): twisted.web's timeout restarts at every byte, so a client
that dribbles a request, or sends part of one and stops, would hold its descriptor for
ever."""
MAX_REQUEST_BODY = 4096
"""Bytes of a request's body at most. No resource here reads a body, and twisted.web
would spool a large one to a temporary file (under a service's PrivateTmp, often RAM)
before any resource sees it: a longer `Content-Length` is refused as its headers end,
a chunked body as it grows past this, with 413 and the close."""
_TOO_LARGE_TEXT = b"request bodies over 4 KiB are refused\n"
TOO_LARGE = (b"HTTP/1.1 413 Content Too Large\r\nConnection: close\r\n"
             b"Content-Type: text/plain; charset=utf-8\r\n"
             b"Content-Length: %d\r\n\r\n%s" % (len(_TOO_LARGE_TEXT), _TOO_LARGE_TEXT))
"""The whole answer to a request whose body is over `MAX_REQUEST_BODY`."""
REFUSAL_LINGER = 2.0
"""Seconds the rest of a refused body is read and dropped before the connection is
cut, so that the refusal reaches the client first."""
ALLOWED_METHODS = (b"GET", b"HEAD")
"""The methods the site answers (a WebSocket's upgrade is a GET); any other gets 405."""
_NOT_ALLOWED_TEXT = b"only GET and HEAD are answered here\n"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def static_root() -> Path:
    """The web client's folder, as installed with `pisyedili.client`."""
    root = files("pisyedili.client").joinpath("web")
    if not isinstance(root, Path):  # a zipped install: twisted.web serves files only
        raise RuntimeError("the web client must be installed as files, not in an archive")
    return root


# -- origins --------------------------------------------------------------------------


Origin = tuple[str, str, int]
"""(scheme, host, port) of a web origin, lowercased, the port made explicit."""


def parse_origin(text: str) -> Origin:
    """`https://example.org[:port]` → ('https', 'example.org', 443); ValueError if the
    text is not an http(s) origin (no path, query or user part)."""
    parts = urlsplit(text.strip())
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS or not parts.hostname or parts.path not in ("", "/") \
            or parts.query or parts.fragment or parts.username is not None:
        raise ValueError(f"{text!r} is not an origin such as https://example.org:8443")
    port = parts.port  # ValueError on a bad port
    return scheme, parts.hostname.lower(), port if port is not None else _DEFAULT_PORTS[scheme]


def _host_header(text: str) -> tuple[str, int | None] | None:
    """A Host header's host and port (None: not given), or None if it cannot be read."""
    try:
        parts = urlsplit("//" + text.strip())
        port = parts.port
    except ValueError:
        return None
    return (parts.hostname.lower(), port) if parts.hostname else None


@dataclass(frozen=True)
class OriginPolicy:
    """Which pages may open the WebSocket.

    By default only the server's own pages: the `Origin`'s host and port are those of
    the request's `Host` (what the browser was told to connect to, so this holds behind
    a reverse proxy that passes `Host` on; the scheme is not compared, as a
    TLS-terminating proxy hides it). `extra` adds origins; `any_origin` (`*`) allows
    every page. A handshake without `Origin` comes from a program, not a browser page,
    and is allowed: the check protects browsers' users, and a program can send any
    header it likes.
    """

    extra: frozenset[Origin] = frozenset()
    any_origin: bool = False

    @classmethod
    def from_options(cls, origins: Iterable[str]) -> OriginPolicy:
        """From `--web-origin` values: origins, or `*`; ValueError on anything else."""
        given = list(origins)
        return cls(frozenset(parse_origin(o) for o in given if o.strip() != "*"),
                   any(o.strip() == "*" for o in given))

    def allows(self, origin: str | None, host: str | None) -> bool:
        if self.any_origin or not origin:
            return True
        try:
            scheme, name, port = parse_origin(origin)  # "null" (a sandboxed page): refused
        except ValueError:
            return False
        if (scheme, name, port) in self.extra:
            return True
        own = _host_header(host or "")
        if own is None:
            return False
        host_name, host_port = own
        return host_name == name and (port == host_port
                                      or (host_port is None and port == _DEFAULT_PORTS[scheme]))


# -- proxies ------------------------------------------------------------------------------


IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


@dataclass(frozen=True)
class Proxies:
    """The reverse proxies trusted to say, in `X-Forwarded-For`, whom they speak for.

    Each proxy appends the address it was reached from, so the header is read from the
    right: the first address that is not a trusted proxy is the client. A header from
    any other peer is ignored (anyone can send one).
    """

    networks: tuple[IPNetwork, ...] = ()

    @classmethod
    def from_options(cls, proxies: Iterable[str]) -> Proxies:
        """From `--web-proxy` values: addresses or networks; ValueError otherwise."""
        return cls(tuple(ipaddress.ip_network(p.strip(), strict=False) for p in proxies))

    def trusts(self, host: str) -> bool:
        try:
            ip = ipaddress.ip_address(host)
        except ValueError:
            return False
        if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
            ip = ip.ipv4_mapped
        return any(ip in network for network in self.networks)

    def client(self, peer: str, forwarded: str | None) -> str | None:
        """The client's address if `peer` is trusted and says one; else None."""
        if not forwarded or not self.trusts(peer):
            return None
        hops = [hop.strip() for hop in forwarded.split(",") if hop.strip()]
        for hop in reversed(hops):
            try:
                ipaddress.ip_address(hop)
            except ValueError:
                return None  # not an address (a port, `unknown`): count by the proxy
            if not self.trusts(hop):
                return hop
        return hops[0] if hops else None


# -- the HTTP connections ------------------------------------------------------------------


class WebChannel(HTTPChannel):
    """twisted.web's HTTP channel, counted among the server's connections
    (`--max-connections`, and by address in `--max-http-per-address`) until it closes
    or becomes a WebSocket (whose `Connection` is counted from then on), with a
    deadline for each whole request (`HTTP_REQUEST_SECONDS`) and a cap on its body
    (`MAX_REQUEST_BODY`)."""

    site: WebSite
    refusal = TOO_LARGE
    """The whole answer to a request whose body is refused (`refuse_body`)."""

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.counted: tuple[str, bool] | None = None
        """The counter's (address, per_address) for this connection, while counted."""
        self.refused_body = False
        """A request's body was over `MAX_REQUEST_BODY`: answered 413, closing."""
        self._request_call: Any = None

    def connectionMade(self) -> None:
        super().connectionMade()  # type: ignore[no-untyped-call]
        self._await_request()

    def dataReceived(self, data: bytes) -> None:
        if self.refused_body:
            return  # a refused body's rest, until the close
        if self._request_call is None and self.line_mode and not self._handlingRequest:
            self._await_request()  # the first bytes of the next request on a kept-alive one
        super().dataReceived(data)  # type: ignore[no-untyped-call]

    def rawDataReceived(self, data: bytes) -> None:
        if not self.refused_body:  # the bytes after a refusal's headers, in one read
            super().rawDataReceived(data)

    def lineLengthExceeded(self, line: bytes) -> None:
        # A request line or header over twisted.web's 16 KiB: an answer, not a silent
        # close (what LineReceiver does).
        self._respondToBadRequestAndDisconnect()  # type: ignore[no-untyped-call]

    def allHeadersReceived(self) -> None:
        if self.length is not None and self.length > MAX_REQUEST_BODY:
            self.refuse_body()  # before any of it is read, and before `100 Continue`
            return
        super().allHeadersReceived()  # type: ignore[no-untyped-call]

    def allContentReceived(self) -> None:
        if self.refused_body:
            return  # a chunked body's end, read in the same bytes as its refusal
        self._request_done()  # the body is in too: a slow one is held to the deadline
        super().allContentReceived()  # type: ignore[no-untyped-call]

    def refuse_body(self) -> None:
        """Answer 413 and close: the request's body is over `MAX_REQUEST_BODY`.

        Our side closes after the answer, and what more of the body arrives is read
        and dropped for `REFUSAL_LINGER` seconds at most: a socket closed with data
        unread resets the connection, and the reset can destroy the answer before the
        client has read it."""
        if self.refused_body:
            return
        self.refused_body = True
        self._request_done()
        transport = cast(Any, self.transport)
        if transport is None:
            return
        transport.write(self.refusal)
        if ISSLTransport.providedBy(transport):  # no half-close: a TLS close follows
            self.loseConnection()  # type: ignore[no-untyped-call]
            return
        self._networkProducer.unregisterProducer()
        transport.loseWriteConnection()
        self._request_call = self.callLater(  # type: ignore[no-untyped-call]
            REFUSAL_LINGER, transport.abortConnection)

    def connectionLost(self, reason: Failure = connectionDone) -> None:
        self._request_done()
        self.uncount()
        super().connectionLost(reason)  # type: ignore[no-untyped-call]

    def uncount(self) -> None:
        """Give this connection's place back (it closed, or became a WebSocket)."""
        counted, self.counted = self.counted, None
        if counted is not None:
            self.site.release(*counted)

    def _await_request(self) -> None:
        self._request_call = self.callLater(self.site.request_seconds, self._request_late)  # type: ignore[no-untyped-call]

    def _request_done(self) -> None:
        call, self._request_call = self._request_call, None
        if call is not None and call.active():
            call.cancel()

    def _request_late(self) -> None:
        self._request_call = None
        log.info("closing an HTTP connection from {peer}: no whole request within "
                 "{seconds:g} seconds", peer=str(cast(Any, self.transport).getPeer()),
                 seconds=self.site.request_seconds)
        self.timeoutConnection()  # type: ignore[no-untyped-call]  # closes; aborts later


class WebRequest(Request):
    """twisted.web's request, its body held in memory and capped: `gotLength` would
    give a body of unknown length (chunked) or of 100 KB or more a temporary file."""

    def gotLength(self, length: int | None) -> None:
        self.content = io.BytesIO()

    def setHeader(self, name: bytes | str, value: bytes | str) -> None:
        if (name if isinstance(name, bytes) else name.encode()).lower() == b"server":
            return  # twisted.web's name and version: only a hint of what to try
        super().setHeader(name, value)  # type: ignore[no-untyped-call]

    def process(self) -> None:
        if self.method in ALLOWED_METHODS:
            super().process()  # type: ignore[no-untyped-call]
            return
        # One short answer for every other method, whichever resource it names:
        # twisted.web's differ (405 or 501) and come as a page.
        self.setResponseCode(405)
        self.setHeader(b"allow", b"GET, HEAD")
        self.setHeader(b"content-type", b"text/plain; charset=utf-8")
        self.setHeader(b"content-length", b"%d" % len(_NOT_ALLOWED_TEXT))
        self.write(_NOT_ALLOWED_TEXT)  # type: ignore[no-untyped-call]
        self.finish()  # type: ignore[no-untyped-call]

    def handleContentChunk(self, data: bytes) -> None:
        content = cast(io.BytesIO, self.content)
        if content.tell() + len(data) > MAX_REQUEST_BODY:
            channel = self.channel
            if isinstance(channel, WebChannel):
                channel.refuse_body()
            return
        content.write(data)


ACCESS_FIELD_MAX = 200
"""Characters of a request's path, `Referer` or `User-Agent` in its access-log line:
each may be up to 16 KiB, so whole they would let anyone fill the log."""


def _log_field(value: bytes | str | None) -> str:
    """A request's field as the access log shows it: escaped as twisted.web escapes it
    (a control character, a terminal's escape sequence among them, is written as
    `\\x1b`, and a quote as `\\"`), cut to `ACCESS_FIELD_MAX` characters."""
    raw = value.encode("utf-8", "backslashreplace") if isinstance(value, str) else value
    text = repr(raw or b"-")[1:]  # b'…' or b"…", without the b
    if text.startswith("'"):
        text = text[1:-1].replace('"', '\\"').replace("\\'", "'")
    else:
        text = text[1:-1]
    return text if len(text) <= ACCESS_FIELD_MAX else text[:ACCESS_FIELD_MAX] + "..."


def access_line(timestamp: str, request: Request) -> str:
    """twisted.web's combined log format, each field that the client writes cut to
    `ACCESS_FIELD_MAX` characters."""
    host = getattr(request.getClientAddress(), "host", None)  # type: ignore[no-untyped-call]
    return (f'"{_log_field(host)}" - - {timestamp} "{_log_field(request.method)} '
            f'{_log_field(request.uri)} {_log_field(request.clientproto)}" {request.code} '
            f'{request.sentLength or "-"} "{_log_field(request.getHeader(b"referer"))}" '
            f'"{_log_field(request.getHeader(b"user-agent"))}"')


class WebSite(Site):
    """The site, whose connections count against the server's connection limits: a
    connection past them is closed at once, and web connections leave
    `web_reserve` places to the TCP port."""

    requestFactory = WebRequest
    noisy = False  # no "Starting factory <...>": the server logs where it serves the web

    def __init__(self, root: IResource, server: ServerFactory, proxies: Proxies,
                 request_seconds: float) -> None:
        # An idle HTTP connection (keep-alive between page loads) is closed after a
        # minute, not twisted.web's 12 hours; a WebSocket is not timed out by it (its
        # request never ends), the protocol's own idle timeout applies.
        super().__init__(root, timeout=HTTP_IDLE_SECONDS,  # type: ignore[no-untyped-call]
                         reactor=server.clock, logFormatter=access_line)
        self.server = server
        self.proxies = proxies
        self.request_seconds = request_seconds
        limits = server.limits
        self.per_address = ConnectionCounter(limits.max_connections,
                                             limits.max_http_per_address)
        """Plain HTTP connections by address (`--max-http-per-address`); the server's
        counter holds them in its total."""

    def protocol(self) -> Any:
        """HTTPFactory's own factory of channels, with `WebChannel` inside."""
        return _GenericHTTPChannelProtocol(WebChannel())

    def buildProtocol(self, addr: IAddress | None) -> Any:
        host = getattr(addr, "host", None)
        key = address_key(host) if isinstance(host, str) and host else "local"
        # Behind a trusted proxy the browser's address is known only from a request's
        # headers: such connections count in the total alone.
        per_address = not (isinstance(host, str) and self.proxies.trusts(host))
        refusal = self.admit(key, per_address)
        if refusal is not None:
            log.info("HTTP connection from {address} refused: {code}", address=key,
                     code=refusal)
            return None  # closed at once
        proto = super().buildProtocol(addr)  # type: ignore[no-untyped-call]
        cast(WebChannel, proto._channel).counted = (key, per_address)
        return proto

    def admit(self, key: str, per_address: bool) -> str | None:
        """Count a new HTTP connection from `key` in the server's total (all but
        `web_reserve` of it) and, if `per_address`, in this site's allowance for the
        address; or return the code that refuses it."""
        total = self.server.connections
        refusal = total.admit(key, reserve=web_reserve(self.server.limits.max_connections),
                              per_address=False)
        if refusal is None and per_address:
            refusal = self.per_address.admit(key)
            if refusal is not None:
                total.release(key, per_address=False)
        return refusal

    def release(self, key: str, per_address: bool) -> None:
        """Give back what `admit` counted."""
        self.server.connections.release(key, per_address=False)
        if per_address:
            self.per_address.release(key)


# -- the static files -------------------------------------------------------------------


@dataclass(frozen=True)
class _Prepared:
    """One file as it is sent: read once, hashed, gzipped (kept while unchanged)."""

    stamp: tuple[int, int]
    """(mtime in ns, size): a change of either reads the file again."""
    body: bytes
    gzipped: bytes | None
    """None where gzip does not make it smaller (images, sounds)."""
    etag: bytes
    """Strong, from the content's SHA-256; the gzipped form's ends in `-gz`."""


def _prepare(path: str, stamp: tuple[int, int]) -> _Prepared:
    with open(path, "rb") as f:
        body = f.read()
    digest = hashlib.sha256(body).hexdigest()[:32]
    packed = gzip.compress(body, compresslevel=9, mtime=0)
    return _Prepared(stamp, body, packed if len(packed) < len(body) else None,
                     f'"{digest}"'.encode())


def accepts_gzip(header: bytes | None) -> bool:
    """Whether an `Accept-Encoding` allows gzip (`gzip` or `*`, with a q above 0)."""
    allowed: dict[str, bool] = {}
    for part in (header or b"").decode("latin-1").split(","):
        coding, _, params = part.strip().partition(";")
        q = 1.0
        for param in params.split(";"):
            key, _, value = param.strip().partition("=")
            if key.strip().lower() == "q":
                try:
                    q = float(value)
                except ValueError:
                    q = 0.0
        allowed[coding.strip().lower()] = q > 0
    return allowed.get("gzip", allowed.get("x-gzip", allowed.get("*", False)))


def _etag_matches(header: bytes, etag: bytes) -> bool:
    """`If-None-Match` names this content (either form of it), or is `*`."""
    tags = {t.strip().removeprefix(b"W/") for t in header.split(b",")}
    return b"*" in tags or etag in tags or etag[:-1] + b'-gz"' in tags


def _plain_segment(segment: bytes) -> bool:
    """Whether a path segment (percent-decoded) could name one of the client's files:
    UTF-8, without NUL, slash or backslash. Anything else is a 404 with no word in the
    log (twisted.web would log a traceback for a NUL or bad UTF-8, a log anyone could
    fill)."""
    if any(c in segment for c in (b"\x00", b"/", b"\\")):
        return False
    try:
        segment.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return True


class StaticFiles(File):
    """The web client's folder: `index.html` at `/`, fixed content types, no directory
    listings and no hidden files. A file is sent gzipped to a browser that accepts it,
    with a strong ETag from its content, so a revalidation costs a 304; each file is
    read and compressed once, again only when it changes on disk."""

    childNotFound = pages.notFound()
    forbidden = pages.forbidden()

    def __init__(self, path: str, prepared: dict[str, _Prepared] | None = None) -> None:
        super().__init__(path, defaultType="application/octet-stream")
        self.contentTypes = dict(CONTENT_TYPES)
        self.indexNames = ["index.html"]
        self.prepared: dict[str, _Prepared] = {} if prepared is None else prepared

    def createSimilarFile(self, path: str) -> StaticFiles:
        return StaticFiles(path, self.prepared)

    def getChild(self, path: bytes, request: Request) -> IResource:
        if path.startswith(b".") or not _plain_segment(path):
            return self.childNotFound
        return cast(IResource, super().getChild(path, request))  # type: ignore[no-untyped-call]

    def directoryListing(self) -> IResource:
        return self.childNotFound

    def _load(self) -> _Prepared | None:
        """This file, prepared; None if it cannot be read (twisted.web says why)."""
        try:
            info = os.stat(self.path)
            stamp = (info.st_mtime_ns, info.st_size)
            entry = self.prepared.get(self.path)
            if entry is None or entry.stamp != stamp:
                entry = self.prepared[self.path] = _prepare(self.path, stamp)
        except OSError:
            return None
        return entry

    def render(self, request: Request) -> Any:
        request.setHeader(b"cache-control", CACHE_CONTROL)  # type: ignore[no-untyped-call]
        request.setHeader(b"x-content-type-options", b"nosniff")  # type: ignore[no-untyped-call]
        request.setHeader(b"content-security-policy",  # type: ignore[no-untyped-call]
                          CONTENT_SECURITY_POLICY)
        entry = self._load() if request.method in (b"GET", b"HEAD") and self.isfile() else None
        if entry is None:
            return super().render(request)  # type: ignore[no-untyped-call]
        kind, _ = getTypeAndEncoding(  # type: ignore[no-untyped-call]
            self.basename(), self.contentTypes, self.contentEncodings, self.defaultType)
        request.setHeader(b"content-type", kind.encode())  # type: ignore[no-untyped-call]
        request.setHeader(b"vary", b"accept-encoding")  # type: ignore[no-untyped-call]
        body, etag = entry.body, entry.etag
        if entry.gzipped is not None and accepts_gzip(request.getHeader(b"accept-encoding")):
            body, etag = entry.gzipped, entry.etag[:-1] + b'-gz"'
            request.setHeader(b"content-encoding", b"gzip")  # type: ignore[no-untyped-call]
        request.setHeader(b"etag", etag)  # type: ignore[no-untyped-call]
        match = request.getHeader(b"if-none-match")
        modified = request.setLastModified(entry.stamp[0] / 1e9)  # type: ignore[no-untyped-call]
        if (match is not None and _etag_matches(match, entry.etag)) \
                or (match is None and modified is CACHED):
            request.setResponseCode(304)
            return b""
        request.setHeader(b"content-length", str(len(body)).encode())  # type: ignore[no-untyped-call]
        return b"" if request.method == b"HEAD" else body


def make_site(server: ServerFactory, origins: OriginPolicy | None = None,
              proxies: Proxies | None = None,
              request_seconds: float = HTTP_REQUEST_SECONDS) -> Site:
    """The web client at `/` and the protocol at `/ws`, for one server."""
    # autobahn is loaded by a server that serves the web only: a TCP-only one (a
    # cluster's processes, say) starts without it.
    from pisyedili.server.net.websocket import WebSocketFactory, WebSocketUpgrade

    root = StaticFiles(str(static_root()))
    proxies = proxies or Proxies()
    socket = WebSocketUpgrade(  # type: ignore[no-untyped-call]
        WebSocketFactory(server, origins or OriginPolicy(), proxies))
    root.putChild(WS_PATH, cast(IResource, socket))
    site = WebSite(cast(IResource, root), server, proxies, request_seconds)
    site.displayTracebacks = False
    return site
