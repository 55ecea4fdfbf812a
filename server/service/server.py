"""The server as a Twisted service: a port per endpoint, the store's timers, and
an orderly stop (clients told, tables saved or handed on, the store closed)."""

from __future__ import annotations

import errno
import gc
import socket
import sys
from collections.abc import Callable, Sequence
from typing import Any, TypeVar

from twisted.application.internet import StreamServerEndpointService, TimerService
from twisted.application.service import IServiceCollection, MultiService, Service
from twisted.internet.defer import CancelledError, Deferred, DeferredList, fail, maybeDeferred
from twisted.internet.error import CannotListenError
from twisted.internet.interfaces import IStreamServerEndpoint
from twisted.internet.task import deferLater
from twisted.logger import ILogObserver, Logger
from twisted.python.failure import Failure
from zope.interface import implementer  # type: ignore[import-untyped]

from pisyedili.server import metrics
from pisyedili.server.net import proxied
from pisyedili.server.net.health import READY_CHECKS, HealthSite
from pisyedili.server.net.hello import server_version
from pisyedili.server.net.tcp import ServerFactory
from pisyedili.server.net.web import OriginPolicy, Proxies, make_site
from pisyedili.server.people.accounts import OPERATORS_EVERY
from pisyedili.server.rules import COMPILED
from pisyedili.server.service.discovery import Announcer
from pisyedili.server.service.logs import make_observer
from pisyedili.server.service.metrics import COLLECTOR, metrics_resource
from pisyedili.server.service.open_files import fit_open_files
from pisyedili.server.store import DAY, Archive
from pisyedili.server.store.files import FileLock
from pisyedili.server.store.journal import StoreJournal

log = Logger()
T = TypeVar("T")

BUSY_PORT_HINT = (" Another program (or another server) uses that port: choose another "
                  "with --listen tcp:PORT for the game, or --web tcp:PORT for the browser's.")
"""What an operator can do about a port in use, after the reactor's own words."""


@implementer(IStreamServerEndpoint)
class _Endpoint:
    """An endpoint string, parsed when the server starts listening, whose `listen`
    also tells `bound` the port, or why there is none.

    `StreamServerEndpointService` only logs a port it could not bind, but a server
    that cannot listen where it was told must stop: `bound` lets it. The service
    itself gets the port, or None (it then has nothing to stop), never the failure.
    """

    def __init__(self, reactor: Any, description: str) -> None:
        self._reactor = reactor
        self.description = description
        self.bound: Deferred[Any] = Deferred()

    def listen(self, factory: Any) -> Deferred[Any]:
        try:  # `haproxy:` in front: behind a proxy that speaks the PROXY protocol
            listening = proxied.listen(self._reactor, self.description, factory)
        except Exception as e:  # a bad string, or systemd: without an inherited socket
            listening = fail(ValueError(f"bad endpoint {self.description!r}: {e!r}"))

        def bound(port: Any) -> Any:
            self.bound.callback(port)
            return port

        def unbound(failure: Failure) -> None:
            self.bound.errback(failure)

        return listening.addCallbacks(bound, unbound)


def _port_in_use(error: BaseException | None) -> bool:
    """Whether a port could not be bound because something else has it."""
    return (isinstance(error, CannotListenError)
            and isinstance(error.socketError, OSError)
            and error.socketError.errno == errno.EADDRINUSE)


class ServerService(MultiService):
    """The server: a `StreamServerEndpointService` per endpoint; once the store is
    open, the daily pruning and the reading of operator flags as `TimerService`s; on
    stop, the ports stop, clients are told, the tables saved and the store closed.

    `ready` fires once every endpoint listens, or fails with the first that could not:
    a server that cannot listen where it was told must not run quietly.
    """

    def __init__(self, factory: ServerFactory, endpoints: Sequence[str], clock: Any,
                 seed: int | None = None, log_format: str = "text",
                 announce: bool = False, archive: Archive | None = None,
                 keep_days: float = 0, store_required: bool = True,
                 web: Sequence[str] = (), origins: OriginPolicy | None = None,
                 proxies: Proxies | None = None,
                 journal: StoreJournal | None = None,
                 lock: FileLock | None = None,
                 health: str | None = None, drain_seconds: float = 0,
                 cluster_name: str = "",
                 on_joined: Sequence[Callable[[], None]] = ()) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.factory = factory
        self.on_joined = tuple(on_joined)
        """Called once the cluster answers, before any port listens (a `Takeover`)."""
        self.cluster_name = cluster_name
        """`--cluster-name`: "" names the process by its host and game port."""
        self.journal = journal
        self.lock = lock
        """The store file's lock: let go once the store is closed."""
        self.site = make_site(factory, origins, proxies) if web else None
        self.archive = archive
        self.keep_days = keep_days
        self.store_required = store_required
        self.seed = seed
        self.log_format = log_format
        self._reactor = clock
        self._endpoints: list[tuple[_Endpoint, Callable[[Any, str], Any]]] = []
        for descriptions, serving, told in ((endpoints, factory, self._listening),
                                            (web, self.site, self._serving_web)):
            for desc in descriptions:
                endpoint = _Endpoint(clock, desc)
                self._endpoints.append((endpoint, told))
                port = StreamServerEndpointService(  # type: ignore[no-untyped-call]
                    endpoint, serving)
                port.setServiceParent(self)  # type: ignore[no-untyped-call]
        self.ports: list[Any] = []  # IListeningPort
        self.web_ports: list[Any] = []  # IListeningPort, for `--web`: never announced
        self.ready: Deferred[Any] | None = None
        self.failed = False
        self.listening = False
        """Every port listens (`ready` fired): `/ready`'s `listening`."""
        self.draining = False
        """Stopping: `/ready` answers 503 from then on, before any port closes."""
        self.drain_seconds = drain_seconds
        self.health_port: Any = None  # IListeningPort, for `--health`
        self._health: StreamServerEndpointService | None = None
        """`--health`'s port: not one of this service's children, since it answers from
        the start (a cluster's ports wait for the cluster) until the very end of a stop."""
        if health is not None:
            endpoint = _Endpoint(clock, health)
            self._endpoints.append((endpoint, self._serving_health))
            self._health = StreamServerEndpointService(  # type: ignore[no-untyped-call]
                endpoint, HealthSite(self.not_ready, clock, metrics_resource()))
            COLLECTOR.watch(factory, journal)  # what /metrics reads as it is scraped
        self.announcer = Announcer(clock, factory.name, server_version(),
                                   lambda: len(factory.lobby.tables())) if announce else None
        self.announced: Deferred[None] | None = None
        """Fires once the ports are announced on the LAN (or announcing failed)."""

    def setServiceParent(self, parent: IServiceCollection) -> None:
        """Under twistd, `--log-format json` replaces twistd's text log (stdout)."""
        super().setServiceParent(parent)  # type: ignore[no-untyped-call]
        set_component = getattr(parent, "setComponent", None)
        if self.log_format == "json" and set_component is not None:
            set_component(ILogObserver, make_observer("json", sys.stdout))

    def privilegedStartService(self) -> None:
        """Nothing listens before `startService`: twistd calls this before the reactor
        runs, when a port that cannot be bound could not stop it."""
        Service.privilegedStartService(self)  # type: ignore[no-untyped-call]

    def startService(self) -> None:
        log.info("Pis Yedili server {version} ({name!r}) starting", version=server_version(),
                 name=self.factory.name)
        # The bots' strength depends on it (docs/operating.md, "The compiled engine").
        log.info("rules engine: {engine}", compiled=COMPILED,
                 engine="compiled (mypyc)" if COMPILED else "interpreted")
        fit_open_files(self.factory.limits.max_connections)
        if self._health is not None:
            self._health.startService()  # type: ignore[no-untyped-call]
        if self.seed is not None:
            log.warn("!!! --seed {seed} is set: every shuffle is PREDICTABLE. Use it for "
                     "tests and demos only, never on a server people play on. !!!",
                     seed=self.seed)
        if self.factory.lobby.test_decks:
            log.warn("!!! --test-decks is set: a table's host may stack its deck and know "
                     "every card. Use it for testing clients only, never on a server people "
                     "play on. !!!")
        if self.archive is not None:
            self.archive.open().addCallbacks(self._store_open, self._cannot_store)
        if self.factory.cluster.shared:  # the ports listen once the cluster answers
            Service.startService(self)  # type: ignore[no-untyped-call]
            self.factory.cluster.start().addCallbacks(self._joined, self._cannot_join)
        else:
            super().startService()  # type: ignore[no-untyped-call]  # the ports listen
        listening = [endpoint.bound.addCallback(told, endpoint.description)
                     for endpoint, told in self._endpoints]
        self.ready = DeferredList(listening, fireOnOneErrback=True, consumeErrors=True)
        self.ready.addCallback(self._all_listening)
        self.ready.addErrback(self._cannot_listen)
        self.ready.addCallback(self._announce)
        self.ready.addCallback(settle_heap)

    def _store_open(self, _: object) -> None:
        assert self.archive is not None
        log.info("keeping finished matches in {path}",
                 path=self.archive.store.path)
        if not self.running:
            return
        timers: list[tuple[float, Callable[..., Any], tuple[Any, ...]]] = []
        if self.keep_days > 0:
            timers.append((DAY, self.archive.prune, (self.keep_days,)))  # prunes now
        accounts = self.factory.accounts
        if accounts is not None:  # flags changed by `operator` while this runs
            timers.append((OPERATORS_EVERY,
                           lambda: Deferred.fromCoroutine(accounts.refresh_operators()), ()))
        for step, call, args in timers:
            timer = TimerService(step, call, *args)  # type: ignore[no-untyped-call]
            timer.clock = self._reactor
            timer.setServiceParent(self)  # type: ignore[no-untyped-call]

    def _cannot_store(self, failure: Failure) -> None:
        """A server told where to keep matches (`--db`) must not run without keeping them;
        one left to the default keeps serving (an old unit file without `--db`)."""
        assert self.archive is not None
        self.archive.close()
        if not self.store_required:
            log.error("cannot open the store: {error}; finished matches are NOT kept: "
                      "set --db to a writable file", error=failure.getErrorMessage())
            return
        log.critical("cannot open the store: {error}", error=failure.getErrorMessage())
        self.failed = True
        self._stop_reactor()

    def _joined(self, _: object) -> None:
        if self.running:
            for joined in self.on_joined:
                joined()
            for service in self:
                if not service.running:
                    service.startService()

    def _cannot_join(self, failure: Failure) -> None:
        """A server told to join a cluster must not serve a lobby of its own instead."""
        log.critical("cannot join the cluster: {error}", error=failure.getErrorMessage())
        self.failed = True
        self._stop_reactor()

    def _listening(self, port: Any, desc: str) -> Any:
        self.ports.append(port)
        log.info("listening on {endpoint} ({address})", endpoint=desc,
                 address=str(port.getHost()), port=getattr(port.getHost(), "port", None))
        return port

    def _serving_web(self, port: Any, desc: str) -> Any:
        self.web_ports.append(port)
        log.info("serving the web client on {endpoint} ({address})", endpoint=desc,
                 address=str(port.getHost()), port=getattr(port.getHost(), "port", None))
        return port

    def _serving_health(self, port: Any, desc: str) -> Any:
        self.health_port = port
        log.info("answering health checks on {endpoint} ({address})", endpoint=desc,
                 address=str(port.getHost()), port=getattr(port.getHost(), "port", None))
        return port

    def _all_listening(self, result: T) -> T:
        self.listening = True
        if self.factory.cluster.shared:
            self.factory.cluster.named(self.cluster_name, self._address())
        return result

    def _address(self) -> str:
        """This host and its (first) game port: where an operator finds this process,
        the same across restarts, unlike its number in the cluster."""
        ports = self.ports or self.web_ports
        if not ports:
            return socket.gethostname()
        where = ports[0].getHost()
        return f"{socket.gethostname()}:{getattr(where, 'port', None) or where}"

    def not_ready(self) -> list[str]:
        """The readiness checks that fail now, in `READY_CHECKS`' order (`/ready`)."""
        cluster = self.factory.cluster
        passed = {
            "listening": self.listening,
            "store": self.journal is None or self.journal.keeping_up,
            "cluster": cluster.reachable and not cluster.lease_in_doubt,
            "draining": not self.draining,
        }
        return [check for check in READY_CHECKS if not passed[check]]

    def _announce(self, result: Any) -> Any:
        """Once every port listens, announce them (in the background: `ready` does not
        wait for it, and a failure to announce only logs a warning)."""
        if self.announcer is not None and self.running and not self.failed:
            self.announced = self.announcer.start(self.ports)
        return result

    def _cannot_listen(self, failure: Failure) -> None:
        """Log why, and stop: better no server than one that is not where it was told."""
        sub = getattr(failure.value, "subFailure", failure)
        if sub.check(CancelledError):
            return  # stopped before it listened
        log.critical("cannot listen: {error}{hint}", error=sub.getErrorMessage(),
                     hint=BUSY_PORT_HINT if _port_in_use(sub.value) else "")
        self.failed = True
        self._stop_reactor()

    def _stop_reactor(self) -> None:
        """Stop the server's reactor: at once if it runs, else as soon as it has started
        (twistd starts its services before it runs the reactor). A clock that is no
        reactor (tests) is left alone."""
        if self._reactor.running:
            self._reactor.stop()
            return
        when = getattr(self._reactor, "addSystemEventTrigger", None)
        if when is not None:  # a reactor already started never fires this: no harm
            when("after", "startup", self._reactor.stop)

    def stopService(self) -> Deferred[Any]:
        """Not ready from now on; with `--health`, still serving for `drain_seconds`
        (a balancer that checks `/ready` sends no new players meanwhile), then stopped
        (`_stop`)."""
        if self.draining:
            return self._stop()
        self.draining = True
        self.factory.cluster.draining()  # `pisyedili-server status` shows it
        metrics.DRAINS.inc()
        if self._health is None or self.drain_seconds <= 0 or not self.listening:
            return self._stop()
        log.info("stopping: /ready answers 503 (draining) from now on; the ports close "
                 "in {seconds:g} s", seconds=self.drain_seconds)
        return deferLater(self._reactor, self.drain_seconds, self._stop)

    def _stop(self) -> Deferred[Any]:
        """The goodbyes on the LAN, the ports and the pruning stopped, then the clients
        told and the tables saved (what the goodbyes tell of first); in a cluster, the
        sessions handed to the live processes; then `_close`."""
        gone = [self.announcer.stop()] if self.announcer is not None else []
        # MultiService's stop, but of the services that started: in a cluster the
        # ports start once it is joined, and a port never started cannot stop.
        Service.stopService(self)  # type: ignore[no-untyped-call]
        gone.extend(maybeDeferred(service.stopService)
                    for service in reversed(list(self)) if service.running)
        self.ports, self.web_ports = [], []
        self._say_what_is_left()
        self.factory.shutdown()
        relay = self.factory.relay
        if relay is None or not self.factory.cluster.shared:
            return self._close(gone)
        # Its sessions go to the live processes first (their rows with them, in a
        # shared journal), then its tables: their takers find the members' new homes.
        handed = relay.hand_all()
        handed.addCallback(lambda _: self._close(gone))
        return handed

    def _close(self, gone: list[Deferred[Any]]) -> Deferred[Any]:
        """The store closed (after the writes already queued), the cluster left (its
        tables let go), then the file let go; the health port last."""
        COLLECTOR.forget(self.factory)
        if self.journal is not None:
            self.journal.close()
        if self.archive is not None:
            gone.append(self.archive.close())
        if self.factory.cluster.shared:
            gone.append(self.factory.cluster.stop())
        stopped = DeferredList(gone)
        if self.lock is not None:
            stopped.addBoth(self._let_go, self.lock)
        if self._health is not None and self._health.running:
            health = self._health
            stopped.addBoth(lambda result: maybeDeferred(health.stopService).addBoth(
                lambda _: result))
        return stopped

    def _say_what_is_left(self) -> None:
        """One line at a stop: the tables and sessions this process held, by count and
        id, and what becomes of them (in a cluster the others take the tables over;
        alone, the store keeps them for the next start)."""
        factory = self.factory
        tables = sorted(table.id for table in factory.lobby.tables())
        connected = sorted({proto.session.player_id for proto in factory.protocols
                            if proto.session is not None}, key=_by_number)
        if factory.cluster.shared:
            fate = ("the sessions handed to the other processes, the tables released for "
                    "them to take over")
        elif self.journal is not None:
            fate = "kept in the store for the next start"
        else:
            fate = "closed, kept nowhere (no store)"
        log.info("stopping: {table_count} tables ({table_ids}) and {session_count} "
                 "sessions, {connected_count} of them connected (players {player_ids}) "
                 "and told shutting_down: {fate}", table_count=len(tables),
                 table_ids=", ".join(map(str, tables)) or "none", tables=tables,
                 session_count=len(factory.sessions), connected_count=len(connected),
                 player_ids=", ".join(connected) or "none", players=connected, fate=fate,
                 process=factory.cluster.process)

    @staticmethod
    def _let_go(result: T, lock: FileLock) -> T:
        """Once the store is closed, the file is free for the next server."""
        lock.release()
        return result


def _by_number(player_id: str) -> tuple[int, str]:
    return (int(player_id), "") if player_id.isdigit() else (0, player_id)


def settle_heap(result: T) -> T:
    """Once the server listens, put what start-up made (modules, the store, recovered
    tables) out of the garbage collector's reach (`gc.freeze`).

    A full collection walks every tracked object, and start-up's are most of them:
    every move of every table waits behind it, which makes the slowest moves slow
    (docs/bench.md, "Load"). Frozen, the
    collector walks only what was made since. The cost is bounded: a reference cycle
    among start-up's objects that becomes garbage later is never collected.
    """
    gc.collect()  # start-up's own garbage goes first, not into the frozen heap
    gc.freeze()
    return result
