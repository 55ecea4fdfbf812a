"""Announcing the server on the LAN: mDNS/DNS-SD (`_pisyedili._tcp.local.`).

One DNS-SD service per TCP port the server listens on (TLS or not; UNIX sockets cannot
be reached over a network and are not announced), with the addresses that port is bound
to: a port bound to one address announces that address only, a port bound to every
address (`0.0.0.0`, `::`) announces every address of the machine but loopback (a peer
on the LAN cannot use 127.0.0.1), or loopback when there is nothing else. TXT records
carry the server name, version, protocol versions, TLS and the table count, so a client
can list servers without connecting to each.

zeroconf does blocking I/O (probing and announcing take a second or two, and its
threaded API waits for them): every call into it runs on one private worker thread,
never on the reactor thread. The threaded API is used rather than AsyncZeroconf because
the server normally runs Twisted's default reactor, not the asyncio one; one worker
thread also keeps register, update and unregister in order, and keeps them from waiting
behind bot searches in the reactor's shared thread pool.

Announcing is a convenience: if it fails (no multicast, no interface, a sandbox without
netlink), one warning is logged and the server goes on serving.
"""

from __future__ import annotations

import ipaddress
import logging
import socket
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from twisted.internet.defer import Deferred, succeed
from twisted.internet.task import LoopingCall
from twisted.internet.threads import deferToThreadPool
from twisted.logger import Logger
from twisted.protocols.tls import TLSMemoryBIOFactory
from twisted.python.failure import Failure

from pisyedili.protocol.version import SUPPORTED_VERSIONS
from pisyedili.server.worker import serial_pool

log = Logger()
_zeroconf_log = Logger(namespace="zeroconf")

SERVICE_TYPE = "_pisyedili._tcp.local."
UPDATE_SECONDS = 3.0
"""How often the table count is checked; the service is updated at most this often."""

TXT_VERSION = "1"
_NAME_ROOM = 48  # of a DNS label's 63 bytes: the rest is for " (port N)" and "-2"
_MAX_TXT_VALUE = 240  # a TXT string is at most 255 bytes, "name=" included

Address = ipaddress.IPv4Address | ipaddress.IPv6Address


@dataclass(frozen=True)
class Listing:
    """What one listening port announces: where it is and whether it speaks TLS."""

    port: int
    tls: bool
    addresses: tuple[str, ...]
    interfaces: tuple[str, ...] | None
    """The interface addresses to announce on; None: every interface."""


def _truncate(text: str, limit: int) -> str:
    """`text` cut to at most `limit` UTF-8 bytes, on a character boundary."""
    return text.encode("utf-8")[:limit].decode("utf-8", "ignore")


def instance_base(name: str) -> str:
    """A server name as a DNS-SD instance name: one label, so no dots, no controls."""
    cleaned = "".join(" " if not c.isprintable() else "-" if c == "." else c for c in name)
    return _truncate(" ".join(cleaned.split()), _NAME_ROOM).strip() or "Pis Yedili"


def host_label() -> str:
    """This machine's name as one DNS label, for the SRV records' target host."""
    raw = socket.gethostname().split(".")[0].lower()
    label = "".join(c if c.isascii() and (c.isalnum() or c == "-") else "-" for c in raw)
    return label.strip("-")[:30] or "host"


def machine_addresses() -> list[Address]:
    """Every address of every interface (IPv6 link-local ones left out: they need a
    scope that a DNS record cannot carry)."""
    import ifaddr

    found: list[Address] = []
    for adapter in ifaddr.get_adapters():
        for ip in adapter.ips:
            text = ip.ip if isinstance(ip.ip, str) else ip.ip[0]
            try:
                address = ipaddress.ip_address(text.split("%")[0])
            except ValueError:
                continue
            if not address.is_link_local or address.version == 4:
                found.append(address)
    return found


def addresses_for(host: str, dual_stack: bool,
                  machine: Callable[[], Iterable[Address]] = machine_addresses,
                  ) -> tuple[str, ...]:
    """The addresses a port bound to `host` can be reached at (see the module's doc)."""
    bound = ipaddress.ip_address(host.split("%")[0])
    if not bound.is_unspecified:
        if isinstance(bound, ipaddress.IPv6Address) and bound.ipv4_mapped is not None:
            return (str(bound.ipv4_mapped),)
        return (str(bound),)
    versions = {4, 6} if bound.version == 6 and dual_stack else {bound.version}
    every = sorted({a for a in machine() if a.version in versions},
                   key=lambda a: (a.version, a.packed))
    outside = [a for a in every if not a.is_loopback]
    return tuple(str(a) for a in (outside or every))


def listing_for(port: Any, machine: Callable[[], Iterable[Address]] = machine_addresses,
                ) -> Listing | None:
    """What to announce for a Twisted listening port; None for one not on TCP/IP."""
    host = port.getHost()
    if getattr(host, "type", None) != "TCP" or not isinstance(getattr(host, "host", None), str):
        return None
    sock = getattr(port, "socket", None)
    dual_stack = False
    if sock is not None and sock.family == socket.AF_INET6:
        try:
            dual_stack = not sock.getsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY)
        except OSError:
            dual_stack = False
    addresses = addresses_for(host.host, dual_stack, machine)
    if not addresses:
        return None
    bound = ipaddress.ip_address(host.host.split("%")[0])
    interfaces = None if bound.is_unspecified else addresses
    return Listing(port=int(host.port), tls=isinstance(getattr(port, "factory", None),
                                                       TLSMemoryBIOFactory),
                   addresses=addresses, interfaces=interfaces)


def txt(name: str, version: str, tls: bool, tables: int) -> dict[str, str]:
    """The TXT records a client lists a server by (docs/operating.md, "LAN discovery")."""
    return {
        "txtvers": TXT_VERSION,
        "name": _truncate(name, _MAX_TXT_VALUE),
        "version": _truncate(version, _MAX_TXT_VALUE),
        "protocol": ",".join(str(v) for v in SUPPORTED_VERSIONS),
        "tls": "1" if tls else "0",
        "tables": str(tables),
    }


@dataclass
class _Group:
    """One zeroconf instance, for the listings that share a set of interfaces."""

    interfaces: tuple[str, ...] | None
    listings: list[tuple[str, str, Listing]] = field(default_factory=list)
    """(instance name, SRV target host, listing) for each service."""
    zeroconf: Any = None
    infos: list[Any] = field(default_factory=list)  # the registered ServiceInfo objects


class _ToTwisted(logging.Handler):
    """zeroconf logs through the standard library; without a handler those lines reach
    stderr raw (and break JSON logs). They go to the server's log, at debug level:
    the announcer itself warns once when announcing fails."""

    def __init__(self, reactor: Any) -> None:
        super().__init__()
        self.reactor = reactor

    def emit(self, record: logging.LogRecord) -> None:
        text = record.getMessage()  # the message only: no traceback in the server's log
        self.reactor.callFromThread(_zeroconf_log.debug, "{text}", text=text)


_handler: _ToTwisted | None = None


def _route_zeroconf_logs(reactor: Any) -> None:
    global _handler
    if _handler is None:
        _handler = _ToTwisted(reactor)
        logging.getLogger("zeroconf").addHandler(_handler)
    _handler.reactor = reactor


class Announcer:
    """Announces a server's listening ports, keeps the table count up to date, and
    withdraws the services on stop.

    `start` and `stop` return Deferreds that never fail: a failure is logged once.
    """

    def __init__(self, reactor: Any, name: str, version: str, tables: Callable[[], int],
                 *, interval: float = UPDATE_SECONDS,
                 machine: Callable[[], Iterable[Address]] = machine_addresses) -> None:
        self._reactor = reactor
        self.name = name
        self.version = version
        self._tables = tables
        self._interval = interval
        self._machine = machine
        self._pool = serial_pool("pisyedili-mdns")
        self._groups: list[_Group] = []
        self._announced_tables: int | None = None
        self._refresher: LoopingCall | None = None
        self._busy = False
        self._warned = False
        self._stopping = False
        self._stopped: Deferred[None] | None = None
        self.instances: list[str] = []
        """The instance names registered (zeroconf renames one that is taken)."""

    # -- reactor thread -----------------------------------------------------------

    def start(self, ports: Sequence[Any]) -> Deferred[None]:
        """Announce `ports` (Twisted listening ports); fires once they are announced."""
        try:
            self._groups = self._plan(ports)
        except Exception as e:  # ifaddr's netlink refused (a sandbox), an odd address
            self._warn(e)
            return succeed(None)
        if not self._groups:
            log.info("LAN discovery: no TCP port to announce")
            return succeed(None)
        _route_zeroconf_logs(self._reactor)
        self._pool.start()
        tables = self._tables()
        d = self._in_thread(self._open, tables)
        d.addCallback(self._opened, tables)
        d.addErrback(self._warn)
        return d

    def stop(self) -> Deferred[None]:
        """Withdraw every service (goodbye packets) and close zeroconf; fires when done."""
        if self._stopped is None:
            self._stopping = True
            if self._refresher is not None and self._refresher.running:
                self._refresher.stop()
            if self._pool.started:
                d = self._in_thread(self._close)  # runs after any call still pending
                d.addErrback(lambda f: log.debug("LAN discovery: closing: {error}",
                                                 error=f.getErrorMessage()))
                d.addBoth(lambda _: self._pool.stop())  # the worker is idle: joins at once
                self._stopped = d
            else:
                self._stopped = succeed(None)
        waiter: Deferred[None] = Deferred()
        self._stopped.addBoth(lambda _: waiter.callback(None))
        return waiter

    def _in_thread(self, f: Callable[..., Any], *args: Any) -> Deferred[Any]:
        return deferToThreadPool(self._reactor, self._pool, f, *args)

    def _plan(self, ports: Sequence[Any]) -> list[_Group]:
        listings = [x for x in (listing_for(p, self._machine) for p in ports) if x is not None]
        base, taken, machine = instance_base(self.name), set[str](), host_label()
        groups: dict[tuple[str, ...] | None, _Group] = {}
        for n, listing in enumerate(sorted(listings, key=lambda x: (x.tls, x.port))):
            instance = base if base.casefold() not in taken else f"{base} (port {listing.port})"
            taken.add(instance.casefold())
            # The SRV target is a host name of our own, one per service: a shared one
            # would clash with the addresses another responder (avahi) gives this host.
            host = f"pisyedili-{machine}-{listing.port}{f'-{n}' if n else ''}.local."
            group = groups.setdefault(listing.interfaces, _Group(listing.interfaces))
            group.listings.append((instance, host, listing))
        return list(groups.values())

    def _opened(self, errors: list[Exception], tables: int) -> None:
        self._announced_tables = tables
        for error in errors:
            self._warn(error)
        if self._stopping or not any(g.infos for g in self._groups):
            return
        self.instances = [i.get_name() for g in self._groups for i in g.infos]
        log.info("LAN discovery: announced as {instances} ({addresses})",
                 instances=self.instances,
                 addresses=", ".join(f"{a}:{lst.port}" for g in self._groups if g.infos
                                     for _, _, lst in g.listings for a in lst.addresses))
        self._refresher = LoopingCall(self._refresh)
        self._refresher.clock = self._reactor
        self._refresher.start(self._interval, now=False).addErrback(self._warn)

    def _refresh(self) -> None:
        """Update the TXT records when the table count changed (at most once a tick)."""
        if self._busy or self._stopping:
            return
        tables = self._tables()
        if tables == self._announced_tables:
            return
        self._busy = True
        d = self._in_thread(self._update, tables)

        def done(result: Any) -> None:
            self._busy = False
            if not isinstance(result, Failure):
                self._announced_tables = tables
            else:
                self._warn(result)

        d.addBoth(done)

    def _warn(self, error: Exception | Failure) -> None:
        message = error.getErrorMessage() if isinstance(error, Failure) else (
            str(error) or type(error).__name__)
        if self._warned:
            log.debug("LAN discovery: {error}", error=message)
            return
        self._warned = True
        log.warn("LAN discovery: cannot announce the server ({error}); it serves on without "
                 "it, and players connect by address", error=message)

    # -- the worker thread: every call into zeroconf --------------------------------

    def _info(self, name: str, host: str, listing: Listing, tables: int) -> Any:
        from zeroconf import ServiceInfo

        return ServiceInfo(SERVICE_TYPE, name, port=listing.port,
                           parsed_addresses=list(listing.addresses),
                           properties=txt(self.name, self.version, listing.tls, tables),
                           server=host)

    def _open(self, tables: int) -> list[Exception]:
        """Start one zeroconf per interface set and register its services; a group that
        fails is closed and reported, the others go on."""
        from zeroconf import InterfaceChoice, IPVersion, Zeroconf

        errors: list[Exception] = []
        for group in self._groups:
            if self._stopping:
                break
            versions = {ipaddress.ip_address(a).version
                        for _, _, lst in group.listings for a in lst.addresses}
            ip_version = (IPVersion.All if versions == {4, 6} else
                          IPVersion.V6Only if versions == {6} else IPVersion.V4Only)
            try:
                group.zeroconf = Zeroconf(
                    interfaces=InterfaceChoice.All if group.interfaces is None
                    else list(group.interfaces), ip_version=ip_version)
                for instance, host, listing in group.listings:
                    info = self._info(f"{instance}.{SERVICE_TYPE}", host, listing, tables)
                    group.zeroconf.register_service(info, allow_name_change=True)
                    group.infos.append(info)
            except Exception as e:
                errors.append(e)
                if group.zeroconf is not None:
                    zc, group.zeroconf, group.infos = group.zeroconf, None, []
                    try:
                        zc.close()
                    except Exception as closing:
                        errors.append(closing)
        return errors

    def _update(self, tables: int) -> None:
        for group in self._groups:
            if group.zeroconf is None:
                continue
            # infos[n] is listings[n]'s service, under the name zeroconf settled on.
            for n, ((_, host, listing), info) in enumerate(zip(group.listings, group.infos,
                                                                strict=False)):
                fresh = self._info(info.name, host, listing, tables)
                group.zeroconf.update_service(fresh)
                group.infos[n] = fresh

    def _close(self) -> None:
        """Goodbye packets for every service (zeroconf's close sends them), then close."""
        errors: list[Exception] = []
        for group in self._groups:
            zc, group.zeroconf, group.infos = group.zeroconf, None, []
            if zc is None:
                continue
            try:
                zc.close()
            except Exception as e:
                errors.append(e)
        if errors:
            raise errors[0]
