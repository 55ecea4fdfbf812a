"""Running the server: one set of options for `pisyedili-server` and `twistd pisyedili`.

`Options` and `makeService` are what a twistd plugin needs (the dropin in
`twisted/plugins/pisyedili_server.py` points here); `main` is the console script,
which does what twistd would do without daemonising: start logging in the chosen
format, start the service, run the reactor. Listening is on Twisted endpoint strings
(`tcp:`, `ssl:`, `unix:`, `systemd:`), so TLS and socket activation are options,
not code; so is `--web`, which serves the browser client and the protocol over a
WebSocket (server/net/web.py). docs/operating.md documents every option.
"""

from __future__ import annotations

import errno
import gc
import getpass
import random
import secrets
import socket
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO, Any, ClassVar, TypeVar, cast

from twisted.application.internet import StreamServerEndpointService, TimerService
from twisted.application.service import IServiceCollection, MultiService, Service
from twisted.internet.defer import CancelledError, Deferred, DeferredList, fail, maybeDeferred
from twisted.internet.error import CannotListenError
from twisted.internet.interfaces import IStreamServerEndpoint
from twisted.internet.task import deferLater
from twisted.logger import (
    ILogObserver,
    Logger,
    globalLogBeginner,
    textFileLogObserver,
)
from twisted.python import usage
from twisted.python.failure import Failure
from zope.interface import implementer  # type: ignore[import-untyped]

from pisyedili.protocol import passwords
from pisyedili.protocol import text as text_rule
from pisyedili.protocol.limits import MAX_LABEL
from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server import metrics
from pisyedili.server.clock import Clock
from pisyedili.server.cluster import LOCAL, Cluster, ClusterAddress, open_cluster
from pisyedili.server.net import proxied
from pisyedili.server.net.health import READY_CHECKS, HealthSite
from pisyedili.server.net.hello import server_version
from pisyedili.server.net.limits import ServerLimits
from pisyedili.server.net.relay import Relay
from pisyedili.server.net.tcp import ServerFactory
from pisyedili.server.net.web import OriginPolicy, Proxies, make_site
from pisyedili.server.people import accounts as accounts_
from pisyedili.server.people import moderation as moderation_
from pisyedili.server.people import names
from pisyedili.server.people.accounts import OPERATORS_EVERY, Accounts, AccountSettings
from pisyedili.server.people.moderation import Moderation
from pisyedili.server.people.ratings import Ratings
from pisyedili.server.people.session import Sessions
from pisyedili.server.rules import COMPILED
from pisyedili.server.service import status as status_
from pisyedili.server.service.discovery import Announcer
from pisyedili.server.service.logs import JsonLineObserver
from pisyedili.server.service.metrics import COLLECTOR, metrics_resource
from pisyedili.server.service.open_files import fit_open_files
from pisyedili.server.service.recovery import restore
from pisyedili.server.service.takeover import Takeover, store_ids
from pisyedili.server.store import (
    DAY,
    MEMORY,
    Archive,
    Conflict,
    Store,
    StoreError,
    backup_file,
    default_path,
    is_url,
    open_store,
    pg_dump_command,
    public,
)
from pisyedili.server.store.files import FileInUse, FileLock, private_dir
from pisyedili.server.store.journal import Saved, StoreJournal
from pisyedili.server.table.core import TableSettings
from pisyedili.server.table.journal import NO_JOURNAL, Journal
from pisyedili.server.table.lobby import Lobby

log = Logger()
T = TypeVar("T")

DEFAULT_ENDPOINT = "tcp:7707:backlog=1024"
"""Twisted's own listen backlog is 50: a burst of connections would wait in SYN retries."""
DEFAULT_NAME = "Pis Yedili"
BUSY_PORT_HINT = (" Another program (or another server) uses that port: choose another "
                  "with --listen tcp:PORT for the game, or --web tcp:PORT for the browser's.")
"""What an operator can do about a port in use, after the reactor's own words."""
LOG_FORMATS = ("text", "json")

_LIMITS = ServerLimits()
_SETTINGS = TableSettings()


def _positive(kind: Callable[[str], float]) -> Callable[[str], float]:
    def coerce(text: str) -> float:
        value = kind(text)
        if value < 0:
            raise ValueError("must not be negative")
        return value
    coerce.coerceDoc = "Must not be negative."  # type: ignore[attr-defined]
    return coerce


_float = _positive(float)
_int = _positive(int)


def server_name_refusal(name: str) -> str | None:
    """What is wrong with `--name`, or None: every player sees it (`welcome.server`, the
    LAN announcement), so it follows the text rule for what people write, and fits
    `welcome`'s field."""
    if len(name) > MAX_LABEL:
        return f"must be at most {MAX_LABEL} characters"
    return text_rule.refusal(name)


class ServerOptions(usage.Options):
    """The server's command line (shared by the console script and the twistd plugin)."""

    synopsis = "[--listen ENDPOINT]... [--web ENDPOINT]... [options]"
    longdesc = ("Host a Pis Yedili (Dirty Seven) game server: a lobby, tables, seats, "
                "bots and chat, over a msgpack protocol (docs/protocol.md). "
                "See docs/operating.md for deployment.")

    optParameters: ClassVar[list[list[Any]]] = [
        ["name", None, DEFAULT_NAME, "Server name shown to clients in `welcome`."],
        ["log-format", None, "text", "Log format: text (one line per event) or json "
         "(one JSON object per line, for log shippers)."],
        ["seed", None, None, "Seed every shuffle, for tests and demos ONLY: games become "
         "predictable. Never use on a public server.", int],
        ["turn-seconds", None, _SETTINGS.turn_seconds,
         "Default seconds per decision before the server moves for a seat (0: untimed); "
         "tables may set their own.", _float],
        ["grace-seconds", None, _SETTINGS.grace_seconds,
         "Seconds a dropped player keeps their seat before a bot holds it.", _float],
        ["bot-delay", None, _SETTINGS.bot_delay,
         "Seconds a bot waits before moving, so people can follow.", _float],
        ["deal-pause", None, _SETTINGS.deal_pause,
         "Seconds between the end of a deal and the next, to read the scores.", _float],
        ["max-connections", None, _LIMITS.max_connections,
         "Most connections the server accepts at once.", _int],
        ["max-per-address", None, _LIMITS.max_per_address,
         "Most connections from one IP address at once.", _int],
        ["max-http-per-address", None, _LIMITS.max_http_per_address,
         "Most plain HTTP connections to --web (page loads) from one IP address at once, "
         "counted apart from --max-per-address.", _int],
        ["max-tables", None, _LIMITS.max_tables_per_player,
         "Most open tables one player may host.", _int],
        ["max-tables-per-address", None, _LIMITS.max_tables_per_address,
         "Most open tables opened from one IP address (IPv6: one /64).", _int],
        ["max-tables-total", None, _LIMITS.max_tables_total,
         "Most open tables on the server.", _int],
        ["max-sessions-per-address", None, _LIMITS.max_sessions_per_address,
         "Most sessions opened from one IP address (IPv6: one /64) that are still live, "
         "dropped ones included until their grace period ends.", _int],
        ["max-output-bytes", None, _LIMITS.max_output_bytes,
         "Most bytes waiting to be sent to one client that does not read; past it the "
         "client gets `too_slow` and is closed (at least 1048576).", _int],
        ["handshake-seconds", None, _LIMITS.handshake_seconds,
         "Seconds a new connection has to send `hello`.", _float],
        ["ping-seconds", None, _LIMITS.ping_seconds,
         "Seconds of client silence before the server sends `ping`.", _float],
        ["idle-seconds", None, _LIMITS.idle_seconds,
         "Seconds of client silence before the connection is closed.", _float],
        ["db", None, None, "The SQLite file that keeps finished matches, and the open "
         "tables and sessions a restart carries on with (default: pisyedili.sqlite3 in "
         "the per-user data directory), or a PostgreSQL database's URL "
         "(postgresql://user@host/dbname); :memory: keeps nothing past the process."],
        ["cluster", None, None, "Serve one lobby with the other processes of a cluster, "
         "whose shared state is this Redis database: redis://HOST:PORT/N "
         "(docs/operating.md, \"Running a cluster\")."],
        ["cluster-name", None, "", "What this process is called in the cluster's logs "
         "(the others' too), the same across restarts; default: this host and its game "
         "port, e.g. web1:7711."],
        ["cluster-lease", None, 15.0, "Seconds after which the other processes of a "
         "cluster take this one for gone if it stops renewing its keys (renewed three "
         "times as often); at least 1.", _float],
        ["health", None, None, "Answer liveness and readiness checks over HTTP (GET /live, "
         "GET /ready) on this port of 127.0.0.1, or on a Twisted endpoint string (e.g. "
         "tcp:7911:interface=10.0.0.2); default: none (docs/operating.md, \"Health "
         "checks\")."],
        ["drain-seconds", None, 2.0, "With --health: seconds a stopping server answers "
         "/ready with 503 (draining) while it still serves, so a balancer sends it no new "
         "players, before it closes its ports; 0 stops at once.", _float],
        ["keep-days", None, 0, "Forget finished matches older than this many days "
         "(checked at start and daily); 0 keeps everything.", _float],
        ["rate", None, _LIMITS.rate, "Requests per second one connection may sustain.",
         _float],
        ["burst", None, _LIMITS.burst, "Requests one connection may send in a burst.", _int],
        ["kick-seconds", None, _LIMITS.kick_seconds, "Seconds a kick keeps its player out "
         "(the account, or a guest's address).", _float],
    ]

    optFlags: ClassVar[list[list[Any]]] = [
        ["no-announce", None, "Do not announce the server on the LAN (mDNS/DNS-SD, "
         "_pisyedili._tcp); players then connect by address."],
        ["tls-logins", None, "Refuse passwords (register, login, passwd) over connections "
         "that are neither TLS nor loopback: over plain TCP a password crosses the "
         "network in clear."],
        ["test-decks", None, "For testing clients ONLY: `create_table` may stack the deck "
         "(the host then knows every card; such tables are private and unrated). Never "
         "on a server people play on."],
    ]

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        # An `opt_` method's help is its docstring, whose line breaks and indentation
        # `textwrap` would keep as runs of spaces inside a sentence.
        self.docs = {name: " ".join(doc.split()) if doc else doc
                     for name, doc in self.docs.items()}
        self["listen"] = []
        self["web"] = []
        self["web-origin"] = []
        self["web-proxy"] = []
        self["operators"] = []

    def opt_web(self, endpoint: str) -> None:
        """Serve the browser client at / and the protocol over a WebSocket at /ws on a
        Twisted endpoint string, e.g. tcp:8080, ssl:8443:privateKey=key.pem (repeatable;
        default: none)."""
        self["web"].append(endpoint)

    def opt_web_origin(self, origin: str) -> None:
        """Also let pages of ORIGIN (e.g. https://play.example.org) open the WebSocket;
        * lets every page (repeatable; default: only the server's own pages)."""
        self["web-origin"].append(origin)

    def opt_web_proxy(self, address: str) -> None:
        """Trust the reverse proxy at ADDRESS (an IP address or network, e.g. 127.0.0.1)
        to name each browser's address in X-Forwarded-For, which the per-address limits
        then count by (repeatable; default: none, every peer counts as itself)."""
        self["web-proxy"].append(address)

    def opt_operator(self, name: str) -> None:
        """An existing account's name (or a look-alike): that account is a server
        operator (repeatable). A name no account has at start is warned about and makes
        nobody an operator; `operator add` creates accounts and flags them in the store."""
        self["operators"].append(name)

    def opt_listen(self, endpoint: str) -> None:
        """Listen on a Twisted endpoint string, e.g. tcp:7707, ssl:7708:privateKey=key.pem,
        systemd:domain=INET:index=0 (repeatable; default tcp:7707:backlog=1024)."""
        self["listen"].append(endpoint)

    opt_l = opt_listen

    def postOptions(self) -> None:
        if not self["listen"]:
            self["listen"] = [DEFAULT_ENDPOINT]
        self["db-required"] = self["db"] is not None
        if self["db"] is None:
            self["db"] = str(default_path())
        try:
            self["origins"] = OriginPolicy.from_options(self["web-origin"])
        except ValueError as e:
            raise usage.UsageError(f"--web-origin: {e}") from None
        try:
            self["proxies"] = Proxies.from_options(self["web-proxy"])
        except ValueError as e:
            raise usage.UsageError(f"--web-proxy: {e}") from None
        if self["health"] is not None and self["health"].isdigit():
            self["health"] = f"tcp:{self['health']}:interface=127.0.0.1"
        if float(self["cluster-lease"]) < 1:
            raise usage.UsageError("--cluster-lease must be at least 1 second")
        if self["cluster"] is not None:
            try:
                self["cluster"] = ClusterAddress.parse(self["cluster"])
            except ValueError as e:
                raise usage.UsageError(f"--cluster: {e}") from None
        if self["log-format"] not in LOG_FORMATS:
            raise usage.UsageError(f"--log-format must be one of {', '.join(LOG_FORMATS)}")
        why = server_name_refusal(self["name"])
        if why is not None:
            raise usage.UsageError(f"--name: {why}")
        try:
            self["limits"] = ServerLimits(
                max_connections=int(self["max-connections"]),
                max_per_address=int(self["max-per-address"]),
                max_http_per_address=int(self["max-http-per-address"]),
                max_tables_per_player=int(self["max-tables"]),
                max_tables_per_address=int(self["max-tables-per-address"]),
                max_tables_total=int(self["max-tables-total"]),
                max_sessions_per_address=int(self["max-sessions-per-address"]),
                max_output_bytes=int(self["max-output-bytes"]),
                handshake_seconds=float(self["handshake-seconds"]),
                ping_seconds=float(self["ping-seconds"]),
                idle_seconds=float(self["idle-seconds"]),
                rate=float(self["rate"]),
                burst=int(self["burst"]),
                kick_seconds=float(self["kick-seconds"]),
            )
            self["settings"] = TableSettings(
                turn_seconds=float(self["turn-seconds"]),
                grace_seconds=float(self["grace-seconds"]),
                bot_delay=float(self["bot-delay"]),
                deal_pause=float(self["deal-pause"]),
                # A `hard` search spends its whole budget: off the reactor thread, so
                # other tables and heartbeats go on meanwhile.
                bot_thread=True,
            )
        except ValueError as e:
            raise usage.UsageError(str(e)) from None


def rng_factory(seed: int | None) -> Callable[[], random.Random]:
    """Where each table's randomness comes from: the OS (`secrets`), or a seeded chain."""
    if seed is None:
        return secrets.SystemRandom
    master = random.Random(seed)
    return lambda: random.Random(master.getrandbits(64))


def make_factory(clock: Clock, *, name: str = DEFAULT_NAME, seed: int | None = None,
                 limits: ServerLimits | None = None,
                 settings: TableSettings | None = None,
                 archive: Archive | None = None,
                 journal: StoreJournal | None = None,
                 saved: Saved | None = None,
                 account_settings: AccountSettings | None = None,
                 community_from: str | None = None,
                 cluster: Cluster = LOCAL,
                 shared_journal: str | None = None,
                 test_decks: bool = False) -> ServerFactory:
    """The whole server state (lobby, sessions, limits) behind one protocol factory.

    With `archive`, every finished match is handed to its store (rated ones rated), and
    accounts and moderation are on, their registry read from the file `community_from`
    (the store's, already migrated) before anything listens. With `journal`, open
    tables and sessions are written down as they change, and what it holds from the
    last run (`saved`, or what it reads now) is rebuilt first (`recovery.py`). With a
    shared `cluster`, ids, names and codes are claimed there (`server/cluster/`); and
    with a `shared_journal` (the `--db` every process of it uses) nothing is restored
    here: once joined, this process takes over the tables nobody holds (`takeover.py`)."""
    limits = limits or ServerLimits()
    settings = settings or TableSettings()
    kept: Journal = journal if journal is not None else NO_JOURNAL
    sessions = Sessions(clock, settings.grace_seconds, kept, cluster)
    accounts = moderation = ratings = None
    if archive is not None:
        registry, sanctions = read_community(community_from, clock.seconds())
        accounts = Accounts(archive, sessions, clock, account_settings, registry)
        moderation = Moderation(archive, accounts, clock, sanctions, limits.kick_seconds)
        ratings = Ratings(archive, accounts)
    relay = Relay(cluster, sessions, clock, shared_store=shared_journal is not None) \
        if cluster.shared else None
    lobby = Lobby(clock, rng_factory(seed), settings, limits, sessions.deliver,
                  relay.left_table if relay is not None else sessions.left_table,
                  on_match=ratings.on_match if ratings is not None else None, journal=kept,
                  cluster=cluster, test_decks=test_decks)
    if journal is not None and (shared_journal is None or relay is None):
        restore(saved if saved is not None else journal.load(), lobby, sessions)
    factory = ServerFactory(name, lobby, sessions, limits, clock, archive=archive,
                            journal=kept, cluster=cluster)
    factory.accounts, factory.moderation, factory.ratings = accounts, moderation, ratings
    if relay is not None:
        factory.relay = relay
        relay.attach(factory)
        if journal is not None and shared_journal is not None:
            factory.on_joined.append(Takeover(shared_journal, journal, lobby, sessions,
                                              relay, cluster, clock).start)
    return factory


def read_community(path: str | None, now: float) -> tuple[
        tuple[dict[int, accounts_.Account], dict[str, int]] | None,
        list[moderation_.Sanction] | None]:
    """The accounts and the sanctions in force, read from the store's file at start."""
    if path is None or path == MEMORY or not (is_url(path) or Path(path).is_file()):
        return None, None
    store = open_store(path)
    try:
        return accounts_.load(store), moderation_.load(store, now)
    finally:
        store.close()


def make_observer(fmt: str, out: IO[str]) -> ILogObserver:
    """The log observer for `--log-format`: JSON lines (service/logs.py) or Twisted's text."""
    if fmt == "json":
        return cast(ILogObserver, JsonLineObserver(out))
    return cast(ILogObserver, textFileLogObserver(out))


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
                 cluster_name: str = "") -> None:
        super().__init__()  # type: ignore[no-untyped-call]
        self.factory = factory
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
            for joined in self.factory.on_joined:
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


Options = ServerOptions
"""twistd's `ServiceMaker` reads a module's `Options` and `makeService`."""


def makeService(options: ServerOptions) -> ServerService:
    """The twistd entry point (and the console script's): the server as a Service."""
    from twisted.internet import reactor

    path = options["db"]
    cluster = LOCAL if options["cluster"] is None else open_cluster(
        options["cluster"], reactor, float(options["cluster-lease"]))
    archive = Archive(lambda: open_store(path), reactor)
    lock = lock_store(path, required=bool(options["db-required"]))
    try:
        journal, saved = open_journal(path, cast(Clock, reactor),
                                      required=bool(options["db-required"]))
    except BaseException:
        if lock is not None:
            lock.release()
        raise
    if journal is not None:  # the cluster's ids go on above the store's (`count_from`)
        cluster.count_from(store_ids(path))
    account_settings = AccountSettings(tls_required=bool(options["tls-logins"]),
                                       operators=frozenset(options["operators"]))
    factory = make_factory(cast(Clock, reactor), name=options["name"], seed=options["seed"],
                           limits=options["limits"], settings=options["settings"],
                           archive=archive, journal=journal, saved=saved,
                           account_settings=account_settings,
                           community_from=path if journal is not None else None,
                           cluster=cluster,
                           shared_journal=path if cluster.shared and is_url(path) else None,
                           test_decks=bool(options["test-decks"]))
    return ServerService(factory, options["listen"], reactor, seed=options["seed"],
                         log_format=options["log-format"],
                         announce=not options["no-announce"], archive=archive,
                         keep_days=float(options["keep-days"]),
                         store_required=bool(options["db-required"]),
                         web=options["web"], origins=options["origins"],
                         proxies=options["proxies"], journal=journal, lock=lock,
                         health=options["health"],
                         drain_seconds=float(options["drain-seconds"]),
                         cluster_name=str(options["cluster-name"]))


def lock_store(path: str, *, required: bool) -> FileLock | None:
    """The store's file, this server's alone while it runs (`files.FileLock`): two
    servers on one file would each take the other's live tables over. A file another
    process holds stops this one, naming that process; None for `:memory:`, and for a
    default file that cannot be reached (that server runs on keeping nothing). A
    PostgreSQL database has no file to lock: one server to a database is the operator's
    to keep (docs/operating.md, "PostgreSQL")."""
    if path == MEMORY or is_url(path):
        return None
    try:
        private_dir(Path(path).parent)
        return FileLock.acquire(path)
    except FileInUse as e:
        by = f"process {e.pid}" if e.pid is not None else "another process"
        raise SystemExit(f"cannot use the store {path}: {by} has it open (another "
                         "server on the same file); stop that one, or give this one a "
                         "--db of its own") from None
    except OSError as e:
        if required:
            raise SystemExit(f"cannot open the store {path}: {e}") from None
        return None  # `open_journal` says why the server keeps nothing


def open_journal(path: str, clock: Clock, *,
                 required: bool) -> tuple[StoreJournal | None, Saved | None]:
    """The journal in the store's file and what it holds, read before anything listens:
    a restart's tables are rebuilt from it first. None for `:memory:`. A file that
    cannot be opened or read stops a server told to use it (`--db`); one left to the
    default runs on, keeping nothing."""
    if path == MEMORY:
        return None, None
    journal = None
    try:
        if not is_url(path):
            private_dir(Path(path).parent)
        journal = StoreJournal.open(path, clock)
        return journal, journal.load()
    except (OSError, StoreError, RuntimeError) as e:
        if journal is not None:
            journal.close()
        if required:
            raise SystemExit(f"cannot open the store {public(path)}: {e}") from None
        log.error("cannot open the store {path}: {error}; open tables will NOT survive a "
                  "restart: set --db to a writable file", path=path, error=str(e))
        return None, None


class StoreCommandOptions(usage.Options):
    """The options of a subcommand that works on the store's file, not a server."""

    synopsis = ""
    optParameters: ClassVar[list[list[Any]]] = [
        ["db", None, None, "The server's database (default: the one the server uses by "
         "default, in the per-user data directory)."],
    ]

    def __init__(self) -> None:
        super().__init__()  # type: ignore[no-untyped-call]

    def getSynopsis(self) -> str:
        """The subcommand's own usage line (usage would prefix all the server's)."""
        return f"Usage: pisyedili-server {self.synopsis}"

    @property
    def path(self) -> str:
        """The database this subcommand works on."""
        return str(self["db"] or default_path())


class BackupOptions(StoreCommandOptions):
    """`pisyedili-server backup [--db PATH|URL] DEST`: copy the store, server running or not."""

    synopsis = "backup [--db PATH|URL] DEST"

    def parseArgs(self, *args: str) -> None:
        if len(args) != 1:
            raise usage.UsageError("name one destination file (or, for PostgreSQL, "
                                   "database)")
        self["dest"] = args[0]


def backup(options: BackupOptions) -> None:
    """Copy the database, consistent while the server writes: a SQLite file through
    SQLite's online backup; a PostgreSQL database into another, empty one (COPY from one
    snapshot). To a file, PostgreSQL's own pg_dump does it: the command is printed."""
    source = options.path
    dest = options["dest"]
    if source == MEMORY:
        print(f"{sys.argv[0]} backup: an in-memory database has nothing to back up",
              file=sys.stderr)
        raise SystemExit(2)
    if is_url(source) and not is_url(dest):
        print(f"{sys.argv[0]} backup: a PostgreSQL database is backed up to a file with "
              f"pg_dump:\n  {pg_dump_command(source, dest)}\n(or name an empty "
              "database, postgresql://..., to copy it into)", file=sys.stderr)
        raise SystemExit(2)
    try:
        if is_url(source):
            store = open_store(source)
            try:
                store.backup(dest)
            finally:
                store.close()
        else:
            backup_file(source, dest)
    except (OSError, StoreError, RuntimeError) as e:
        print(f"{sys.argv[0]} backup: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    print(f"backed up {public(source)} to {public(dest)}")


class OperatorOptions(StoreCommandOptions):
    """`pisyedili-server operator [--db PATH] add|remove NAME | list`."""

    synopsis = "operator [--db PATH|URL] add NAME | remove NAME | list"

    def parseArgs(self, *args: str) -> None:
        if args[:1] == ("list",) and len(args) == 1:
            self["action"], self["name"] = "list", None
        elif args[:1] in (("add",), ("remove",)) and len(args) == 2:
            self["action"], self["name"] = args
        else:
            raise usage.UsageError("say add NAME, remove NAME or list")


def operator(options: OperatorOptions, stdin: IO[str] | None = None) -> None:
    """Flag accounts as operators in the store, whether the server runs or not (the
    running server reads the flags every `OPERATORS_EVERY` seconds, and an account new
    to it at its first login; `--operator` needs a restart).
    `add` creates the account when none has the name, asking for its password."""
    path = options.path
    adding = options["action"] == "add"
    if path == MEMORY or not (adding or is_url(path) or Path(path).is_file()):
        print(f"{sys.argv[0]} operator: no database at {path}", file=sys.stderr)
        raise SystemExit(1)
    name = options["name"]
    created = False
    try:
        if adding and not is_url(path):
            Path(path).parent.mkdir(parents=True, exist_ok=True)
        store = open_store(path)
        try:
            if options["action"] == "list":
                for listed in store.operators():
                    print(listed)
                return
            if not accounts_.set_operator(store, name, adding):
                if not adding:
                    print(f"{sys.argv[0]} operator: no account is named {name!r}",
                          file=sys.stderr)
                    raise SystemExit(1)
                name = _new_operator(store, name, sys.stdin if stdin is None else stdin)
                created = True
        finally:
            store.close()
    except (OSError, StoreError, RuntimeError) as e:
        print(f"{sys.argv[0]} operator: {e}", file=sys.stderr)
        raise SystemExit(1) from None
    done = "a new account, now an operator" if created else \
        "now an operator" if adding else "no longer an operator"
    print(f"{name}: {done} (a running server reads it within {OPERATORS_EVERY:g} s)")


def _new_operator(store: Store, name: str, stdin: IO[str]) -> str:
    """Create the account `name` as an operator, its password read from the terminal
    (twice, unechoed) or, when stdin is no terminal, one line of stdin (for scripts).
    Exits with status 1 on a name or password the server would refuse."""
    me = f"{sys.argv[0]} operator"
    try:
        name = names.accept(name)
    except names.BadName as e:
        print(f"{me}: the name {e}", file=sys.stderr)
        raise SystemExit(1) from None
    print(f"{me}: no account is named {name!r}: creating it", file=sys.stderr)
    if stdin.isatty():
        password = getpass.getpass(f"Password for {name}: ")
        if getpass.getpass("Again: ") != password:
            print(f"{me}: the two passwords differ; nothing was changed", file=sys.stderr)
            raise SystemExit(1)
    else:
        password = stdin.readline().removesuffix("\n").removesuffix("\r")
    password = passwords.normalise(password)
    refused = passwords.problem(password)
    if refused is not None:
        print(f"{me}: {refused[1]}; nothing was changed", file=sys.stderr)
        raise SystemExit(1)
    hashed = accounts_.HashCost().hasher().hash(password)  # the server's cost
    try:
        accounts_.add_account(store, name, hashed, time.time(), operator=True)
    except Conflict:  # registered meanwhile, by a look-alike
        print(f"{me}: the name {name!r} was registered meanwhile; run this again",
              file=sys.stderr)
        raise SystemExit(1) from None
    return name


class StatusOptions(StoreCommandOptions):
    """`pisyedili-server status [--db PATH|URL] [--cluster URL] [--json]`."""

    synopsis = "status [--db PATH|URL] [--cluster redis://HOST:PORT/N] [--json]"
    optParameters: ClassVar[list[list[Any]]] = [
        *StoreCommandOptions.optParameters,
        ["cluster", None, None, "The cluster's Redis: its live processes, with what each "
         "holds (without it, the store alone cannot tell whether a server runs)."],
    ]
    optFlags: ClassVar[list[list[Any]]] = [["json", None, "Print JSON, for scripts."]]

    def postOptions(self) -> None:
        if self["cluster"] is not None:
            try:
                ClusterAddress.parse(self["cluster"])
            except ValueError as e:
                raise usage.UsageError(f"--cluster: {e}") from None


def status(options: StatusOptions) -> None:
    """The cluster's live processes (with `--cluster`) and the store's open tables and
    sessions (with `--db`, or without `--cluster`: the default store)."""
    path = options.path if options["db"] or options["cluster"] is None else None
    status_.status(options["cluster"], path, bool(options["json"]))


class ScriptOptions(ServerOptions):
    """`pisyedili-server`'s command line: the server's, and the subcommands that work
    on its store instead (`twistd pisyedili` runs a server only: `ServerOptions`)."""

    subCommands: ClassVar[list[list[Any]]] = [
        ["backup", None, BackupOptions, "Copy the database, the server running or not."],
        ["operator", None, OperatorOptions, "Make an account a server operator, or not; "
         "list the operators."],
        ["status", None, StatusOptions, "The cluster's processes, their tables and "
         "sessions; or the store's."],
    ]

    def opt_version(self) -> None:
        """Print the game's version, its protocol's and Twisted's, and exit."""
        from twisted import copyright

        print(f"pisyedili-server {server_version()} (protocol {PROTOCOL_VERSION}, "
              f"Twisted {copyright.version})")
        raise SystemExit(0)


SUBCOMMANDS: dict[str, Callable[[Any], None]] = {"backup": backup, "operator": operator,
                                                 "status": status}


def main(argv: Sequence[str] | None = None) -> None:
    """`pisyedili-server`: run in the foreground, logging to stdout
    (`pisyedili-server backup DEST` copies the database instead; `pisyedili-server
    operator ...` names operators)."""
    args = list(argv) if argv is not None else sys.argv[1:]
    options = ScriptOptions()
    options.synopsis = f"Usage: pisyedili-server {ServerOptions.synopsis}"
    try:
        options.parseOptions(args)  # type: ignore[no-untyped-call]
    except usage.UsageError as e:
        if options.subCommand is not None:
            print(f"{sys.argv[0]} {options.subCommand}: {e}", file=sys.stderr)
            raise SystemExit(2) from None
        print(f"{sys.argv[0]}: {e}", file=sys.stderr)
        print(f"Try '{sys.argv[0]} --help'.", file=sys.stderr)
        raise SystemExit(2) from None
    if options.subCommand is not None:
        SUBCOMMANDS[options.subCommand](options.subOptions)
        return
    from twisted.internet import reactor as _reactor

    reactor: Any = _reactor
    globalLogBeginner.beginLoggingTo([make_observer(options["log-format"], sys.stdout)],
                                     redirectStandardIO=False)
    service = makeService(options)
    accounts = service.factory.accounts
    for name in accounts.unknown_operators if accounts is not None else options["operators"]:
        print(f"{sys.argv[0]}: warning: --operator {name!r} names no account, so nobody is "
              f"an operator by it; create it with '{sys.argv[0]} operator add {name}'",
              file=sys.stderr)
    reactor.callWhenRunning(service.startService)
    reactor.addSystemEventTrigger(
        "before", "shutdown", lambda: service.stopService() if service.running else None)
    reactor.run()
    if service.failed:
        raise SystemExit(1)
