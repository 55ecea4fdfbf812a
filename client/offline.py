"""`pisyedili play`: an embedded server on loopback, a table full of bots, play at once.

The server is the real one (`server.tap.make_factory`), listening on
`tcp:0:interface=127.0.0.1` on the same reactor and the same asyncio loop as the
client, so offline play exercises exactly the code a networked game does.  A small
autopilot then types, in effect, what a host would: create the table, sit, add the
bots, ready, start.

The embedded server journals its table to a file of its own in the user's data
directory, and the client keeps its token there too (`TokenStore`, key `offline`), so
`pisyedili play --continue` restarts that server on that file and takes the seat back
where the last one left it — after a closed terminal, a crash or a reboot.

`pisyedili play --web` serves the web client instead (`serve_web`): the same embedded
server behind `server.web`'s site on a loopback port, and a URL whose query string
(`play_url`) tells the page to do what the autopilot does here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlencode

from twisted.internet.endpoints import TCP4ClientEndpoint, serverFromString
from twisted.internet.interfaces import IStreamClientEndpoint
from twisted.python.failure import Failure

from pisyedili.server.clock import Clock
from pisyedili.server.journal import SqliteJournal
from pisyedili.server.limits import ServerLimits
from pisyedili.server.net import ServerFactory
from pisyedili.server.store import default_path
from pisyedili.server.table_core import TableSettings
from pisyedili.server.tap import make_factory
from pisyedili.server.web import make_site

from .app import ClientApp
from .token_store import TokenStore
from .wire import Link, Message, RequestFailed

LOOPBACK = "tcp:0:interface=127.0.0.1"
OFFLINE_KEY = "offline"
"""The token store's key for the embedded server's session."""


def offline_db() -> Path:
    """The embedded server's journal: beside the server's own database, never it."""
    return default_path().with_name("offline.sqlite3")


def forget_offline(path: Path) -> None:
    """A new offline match: the last one's file goes (with SQLite's WAL files)."""
    for file in (path, path.with_name(path.name + "-wal"), path.with_name(path.name + "-shm")):
        file.unlink(missing_ok=True)


@dataclass(frozen=True)
class OfflineOptions:
    rules: str = "classic"
    bots: int = 3
    seed: int | None = None
    level: str | None = None
    turn_seconds: float = 0.0
    """Offline, a person may think as long as they like (0: no turn timer)."""
    bot_delay: float = 0.8
    deal_pause: float = 4.0
    """Seconds to read the scores before the next deal."""
    resume: bool = False
    """`--continue`: the unfinished match of the last offline session, if there is one."""
    db: Path | None = None
    """The journal's file (default `offline_db()`); None in tests that keep nothing."""


def embedded_server(reactor: Any, opts: OfflineOptions) -> ServerFactory:
    """The embedded server's state, set up for one player against bots; with `opts.db`,
    it journals there (and first rebuilds what the file holds: `opts.resume`)."""
    # `hard` bots search in a thread, so the prompt never freezes while they think.
    settings = TableSettings(turn_seconds=opts.turn_seconds, bot_delay=opts.bot_delay,
                             deal_pause=opts.deal_pause, bot_thread=True)
    # The only client is this one: the per-connection rate limit guards a public server
    # against floods and has nothing to guard here (scripted input would trip it).
    limits = ServerLimits(rate=1000.0, burst=1000)
    journal = None
    if opts.db is not None:
        if not opts.resume:
            forget_offline(opts.db)
        opts.db.parent.mkdir(parents=True, exist_ok=True)
        journal = SqliteJournal(opts.db, cast(Clock, reactor))
    return make_factory(cast(Clock, reactor), name="pisyedili play", seed=opts.seed,
                        settings=settings, limits=limits, journal=journal)


async def start_server(reactor: Any, opts: OfflineOptions) -> Any:
    """The embedded server, listening on an ephemeral loopback port."""
    endpoint: Any = serverFromString(reactor, LOOPBACK)  # type: ignore[no-untyped-call]
    factory = embedded_server(reactor, opts)
    return await endpoint.listen(factory).asFuture(asyncio.get_running_loop())


def play_url(port: int, name: str, opts: OfflineOptions) -> str:
    """The page of the embedded web server, with the match to set up in its query:
    `?play=1&name=NAME&rules=RULES&bots=N[&level=LEVEL]` (no level: the server's)."""
    query = {"play": "1", "name": name, "rules": opts.rules, "bots": str(opts.bots)}
    if opts.level:
        query["level"] = opts.level
    return f"http://127.0.0.1:{port}/?{urlencode(query)}"


def serve_web(reactor: Any, name: str, opts: OfflineOptions,
              ready: Callable[[str], None]) -> bool:
    """Run the embedded server with the web client on a loopback port until the reactor
    stops (Ctrl-C); `ready` gets the page's URL once it listens. False if it could
    not listen."""
    factory = embedded_server(reactor, opts)
    endpoint: Any = serverFromString(reactor, LOOPBACK)  # type: ignore[no-untyped-call]
    failed: list[Failure] = []
    ports: list[Any] = []

    def listening(port: Any) -> None:
        ports.append(port)
        ready(play_url(port.getHost().port, name, opts))

    def cannot_listen(failure: Failure) -> None:
        failed.append(failure)
        reactor.stop()

    def shutdown() -> Any:
        factory.shutdown()  # tells the page the server is going, stops the tables
        return ports[0].stopListening() if ports else None

    def start() -> None:
        endpoint.listen(make_site(factory)).addCallbacks(listening, cannot_listen)

    reactor.callWhenRunning(start)
    reactor.addSystemEventTrigger("before", "shutdown", shutdown)
    reactor.run()  # with Twisted's signal handlers: Ctrl-C and SIGTERM stop it cleanly
    return not failed


class Autopilot:
    """Hosts one table for the player: create, sit, bots, ready, start — then gets out of
    the way.  Each step is sent when the reply to the last one came, so it never races
    the server."""

    def __init__(self, app: ClientApp, opts: OfflineOptions) -> None:
        self.app = app
        self.opts = opts
        self.steps: list[dict[str, Any]] = []
        self.started = False
        self.done = False

    def plan(self, snapshot: Message) -> list[dict[str, Any]]:
        """The requests that turn a fresh table into a started match."""
        seats = snapshot.get("table", {}).get("seats", [])
        open_seats = [int(s["seat"]) for s in seats if s.get("kind") == "open"]
        steps: list[dict[str, Any]] = []
        if snapshot.get("you", {}).get("seat") is None and open_seats:
            steps.append({"type": "sit", "seat": open_seats.pop(0)})
        bot: dict[str, Any] = {"type": "add_bot"}
        if self.opts.level:
            bot["level"] = self.opts.level
        steps += [{**bot, "seat": s} for s in open_seats]
        steps += [{"type": "ready", "ready": True}, {"type": "start"}]
        return steps

    def on_message(self, msg: Message) -> None:
        """Called before the app sees each message: the first `welcome` starts it."""
        if msg.get("type") == "welcome" and not self.started:
            self.started = True
            self._send({"type": "create_table", "rules": self.opts.rules,
                        "seats": self.opts.bots + 1, "name": "offline", "private": True})

    def _send(self, msg: dict[str, Any]) -> None:
        link = self.app.link
        if link is None:
            self.done = True
            return
        d = link.request(msg)
        d.addCallback(self._replied)
        d.addErrback(self._failed)

    def _replied(self, reply: Message) -> None:
        if reply["type"] == "error":
            self.done = True  # the app shows the error; the player can take over
            return
        if reply["type"] == "table" and not self.steps:
            self.steps = self.plan(reply)
        if self.steps:
            self._send(self.steps.pop(0))
        else:
            self.done = True

    def _failed(self, failure: Failure) -> None:
        if not isinstance(failure.value, RequestFailed):
            failure.raiseException()  # a bug in a callback: let it be logged
        self.done = True  # the connection went; the player can take over once it is back


def wire(app: ClientApp, reactor: Any, endpoint: IStreamClientEndpoint, name: str,
         before: Callable[[Message], None] | None = None) -> Link:
    """A link from `app` to the server at `endpoint`; `before` sees each message
    before the app does."""

    def on_message(msg: Message) -> None:
        if before is not None:
            before(msg)
        app.on_message(msg)

    link = Link(endpoint, name, on_message, clock=reactor, on_status=app.on_status,
                on_unreadable=app.on_unreadable)
    app.attach(link)
    return link


def unfinished(path: Path | None, store: TokenStore) -> str | None:
    """The token of the last offline session, if its file still holds a table."""
    saved = store.load(OFFLINE_KEY)
    if path is None or saved is None or not path.exists():
        return None
    import sqlite3

    try:
        with sqlite3.connect(f"file:{path}?mode=ro", uri=True) as conn:
            (tables,) = conn.execute("SELECT count(*) FROM live_tables").fetchone()
    except sqlite3.Error:
        return None
    return saved.token if tables else None


async def play(app: ClientApp, reactor: Any, name: str, opts: OfflineOptions,
               store: TokenStore | None = None) -> None:
    """Run a whole offline session: server up, table hosted (or, with `--continue`,
    taken back), the prompt until quit."""
    store = store or TokenStore()
    token = unfinished(opts.db, store) if opts.resume else None
    if opts.resume and token is None:
        app.on_status("no unfinished offline match to continue: a new one starts")
    opts = OfflineOptions(**{**vars(opts), "resume": token is not None})
    port = await start_server(reactor, opts)
    if opts.seed is not None:
        app.on_status(f"--seed {opts.seed}: the shuffles are predictable (tests and demos)")
    pilot = Autopilot(app, opts)
    pilot.started = token is not None  # the table exists: nothing to host
    app.subscribe_lobby = False
    app.state.deal_pause = opts.deal_pause  # the server sends no countdown to the next deal
    endpoint = cast(IStreamClientEndpoint,
                    TCP4ClientEndpoint(reactor, "127.0.0.1", port.getHost().port, timeout=10))
    link = wire(app, reactor, endpoint, name, before=pilot.on_message)
    link.token = token

    def changed(new: str | None, who: str) -> None:
        if new is not None and opts.db is not None:
            store.save(OFFLINE_KEY, new, who)

    link.on_token = changed
    link.start()
    try:
        await app.run()
    finally:
        stopped = port.stopListening()
        if stopped is not None:
            await stopped.asFuture(asyncio.get_running_loop())
