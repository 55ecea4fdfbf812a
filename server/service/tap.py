"""Running the server: one set of options for `pisyedili-server` and `twistd pisyedili`.

`Options` and `makeService` are what a twistd plugin needs (the dropin in
`twisted/plugins/pisyedili_server.py` points here); `main` is the console script,
which does what twistd would do without daemonising: start logging in the chosen
format, start the service, run the reactor. Listening is on Twisted endpoint strings
(`tcp:`, `ssl:`, `unix:`, `systemd:`), so TLS and socket activation are options,
not code; so is `--web`, which serves the browser client and the protocol over a
WebSocket (server/net/web.py, server/net/websocket.py). docs/operating.md documents
every option.

The rest lives beside it: `assembly.py` builds the server from the parsed options,
`server.py` is the service that runs it, `admin.py` holds the subcommands that work
on the store instead (`backup`, `operator`, `status`).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from typing import Any, ClassVar

from twisted.logger import globalLogBeginner
from twisted.python import usage

from pisyedili.protocol import text as text_rule
from pisyedili.protocol.limits import MAX_LABEL
from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.cluster import ClusterAddress
from pisyedili.server.net.hello import server_version
from pisyedili.server.net.limits import ServerLimits
from pisyedili.server.net.web import OriginPolicy, Proxies
from pisyedili.server.service import admin
from pisyedili.server.service.assembly import DEFAULT_NAME, make_service
from pisyedili.server.service.logs import make_observer
from pisyedili.server.service.server import ServerService
from pisyedili.server.store import default_path
from pisyedili.server.table.core import TableSettings

DEFAULT_ENDPOINT = "tcp:7707:backlog=1024"
"""Twisted's own listen backlog is 50: a burst of connections would wait in SYN retries."""
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


Options = ServerOptions
"""twistd's `ServiceMaker` reads a module's `Options` and `makeService`."""


def makeService(options: ServerOptions) -> ServerService:
    """The twistd entry point (and the console script's): the server as a Service."""
    return make_service(options)


class ScriptOptions(ServerOptions):
    """`pisyedili-server`'s command line: the server's, and the subcommands that work
    on its store instead (`twistd pisyedili` runs a server only: `ServerOptions`)."""

    subCommands: ClassVar[list[list[Any]]] = [
        ["backup", None, admin.BackupOptions, "Copy the database, the server running or not."],
        ["operator", None, admin.OperatorOptions, "Make an account a server operator, or not; "
         "list the operators."],
        ["status", None, admin.StatusOptions, "The cluster's processes, their tables and "
         "sessions; or the store's."],
    ]

    def opt_version(self) -> None:
        """Print the game's version, its protocol's and Twisted's, and exit."""
        from twisted import copyright

        print(f"pisyedili-server {server_version()} (protocol {PROTOCOL_VERSION}, "
              f"Twisted {copyright.version})")
        raise SystemExit(0)


SUBCOMMANDS: dict[str, Callable[[Any], None]] = {"backup": admin.backup,
                                                 "operator": admin.operator,
                                                 "status": admin.status}


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
