"""`pisyedili play`: an embedded server on loopback, a table full of bots, play at once.

The server is the real one (`server.service.assembly.make_factory`), listening on
`tcp:0:interface=127.0.0.1` on the same reactor and the same asyncio loop as the
client, so offline play exercises exactly the code a networked game does.  A small
autopilot then types, in effect, what a host would: create the table, sit, add the
bots, ready, start.

The embedded server journals its match to a file of the match's own, in `offline/`
in the user's data directory, and the client keeps its token beside it (a
`TokenStore` file, key `offline`). The `play` running the match holds the file's lock
(`server.files.FileLock`) until it ends, so matches in two terminals never share a
journal, and `pisyedili play --continue` takes up the most recent unfinished match no
running `play` holds: it restarts the server on that file and takes the seat back
where the last one left it — after a closed terminal, a `/quit`, a crash or a reboot.
A journal goes once its match is over (or was never started), and at most
`KEEP_UNFINISHED` unfinished ones are kept. A finished match goes to the offline
history instead (`history_path()`, a store the embedded server keeps its matches in),
where `/history`, `/replay` and `/export` find it in every later `play`.

`pisyedili play --web` serves the web client instead (`serve_web`): the same embedded
server behind `server.web`'s site on a loopback port, and a URL whose query string
(`play_url`) tells the page to do what the autopilot does here.
"""

from __future__ import annotations

import asyncio
import os
import secrets
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast
from urllib.parse import urlencode

from twisted.internet import task
from twisted.internet.endpoints import TCP4ClientEndpoint, serverFromString
from twisted.internet.interfaces import IStreamClientEndpoint
from twisted.logger import Logger
from twisted.python.failure import Failure

from pisyedili.server.clock import Clock
from pisyedili.server.net.limits import ServerLimits
from pisyedili.server.net.tcp import ServerFactory
from pisyedili.server.net.web import make_site
from pisyedili.server.service.assembly import make_factory
from pisyedili.server.store import StoreError, default_path, open_store
from pisyedili.server.store.archive import Archive
from pisyedili.server.store.files import SQLITE_SIDECARS, FileInUse, FileLock, private_dir
from pisyedili.server.store.journal import StoreJournal, token_hash
from pisyedili.server.table.core import TablePhase, TableSettings

from .app import ClientApp
from .i18n import _, date
from .token_store import TokenStore
from .wire import Link, Message, RequestFailed

LOOPBACK = "tcp:0:interface=127.0.0.1"
OFFLINE_KEY = "offline"
"""The token store's key for the embedded server's session."""


KEEP_UNFINISHED = 10
"""Unfinished offline matches kept for `--continue`; older ones go."""
JOURNAL_SUFFIX = ".sqlite3"

log = Logger()


def offline_dir() -> Path:
    """The offline journals, one per match: beside the server's database, never it."""
    return default_path().with_name("offline")


def history_path() -> Path:
    """The offline matches finished, every one of them the player's (`/history`,
    `/replay`, `/export` read it): a store of its own beside the journals' folder, in the
    user's data directory (platformdirs: Linux, macOS and Windows alike)."""
    return default_path().with_name("offline-matches.sqlite3")


@dataclass(frozen=True)
class Resumable:
    """What `--continue` tells the player about the match it takes up."""

    rules: str
    seat: int
    deal_no: int
    started_at: float

    def describe(self) -> str:
        return _("continuing the {rules} match started {when}: deal {deal}, you in seat "
                 "{seat}", rules=self.rules, when=date(self.started_at, with_time=True),
                 deal=self.deal_no, seat=self.seat + 1)


class OfflineMatch:
    """One offline match's journal and token file, this process's own while it holds
    the journal's lock."""

    def __init__(self, path: Path, lock: FileLock) -> None:
        self.path = path
        self.lock = lock
        self.tokens = TokenStore(path.with_name(path.name.removesuffix(JOURNAL_SUFFIX)
                                                + ".session.json"), shared=False)

    @classmethod
    def new(cls, folder: Path) -> OfflineMatch:
        """A fresh journal in `folder` (made 0700), named by the time, this pid and a
        random tail (never an older match's name)."""
        private_dir(folder)
        name = f"{time.strftime('%Y%m%d-%H%M%S')}-{os.getpid()}-{secrets.token_hex(4)}"
        path = folder / f"{name}{JOURNAL_SUFFIX}"
        return cls(path, FileLock.acquire(path))

    def read(self) -> Resumable | None:
        """The match the journal holds, if it is under way with the player still seated."""
        saved = self.tokens.load(OFFLINE_KEY)
        if saved is None or not self.path.is_file():
            return None
        clock = task.Clock()
        try:
            journal = StoreJournal.open(self.path, cast(Clock, clock))
            try:
                kept = journal.load()
            finally:
                journal.close()
        except (StoreError, OSError, RuntimeError) as e:
            log.warn("offline journal {path} unreadable ({error}): dropped",
                     path=str(self.path), error=str(e))
            return None
        mine = [s for s in kept.sessions if s.token == token_hash(saved.token)]
        if len(kept.tables) != 1 or not mine:
            return None
        try:  # on a clock of its own: nothing it sets up runs
            core = make_factory(cast(Clock, clock)).lobby.rebuild(kept.tables[0]).core
        except Exception:
            log.failure("offline journal {path}: its match could not be rebuilt",
                        path=str(self.path))
            return None
        seat = core.seat_of(str(mine[0].player_id))
        if core.phase != TablePhase.PLAYING or core.match is None or seat is None:
            return None
        return Resumable(core.options.rules, seat, core.match.deal_no,
                         kept.tables[0].opened_at)

    def forget(self) -> None:
        """The journal, its token and its lock file go (the match is over)."""
        for path in (self.path, *(self.path.with_name(self.path.name + suffix)
                                  for suffix in SQLITE_SIDECARS), self.tokens.path):
            path.unlink(missing_ok=True)
        try:  # while still held: nobody takes a lock on a file about to go
            Path(self.lock.path).unlink(missing_ok=True)
        except OSError:
            pass  # Windows: an open file is not removed; it is reused
        self.lock.release()


def _last_change(path: Path) -> float:
    """When the journal was last written (its WAL, mostly)."""
    times = [p.stat().st_mtime for p in (path, path.with_name(path.name + "-wal"))
             if p.exists()]
    return max(times, default=0.0)


def survey(folder: Path, pick: bool) -> tuple[OfflineMatch, Resumable] | None:
    """Go through the journals no running `play` holds, newest first: with `pick`, the
    first unfinished one is taken (its lock kept); journals of matches over, and
    unfinished ones past the newest `KEEP_UNFINISHED`, are removed."""
    if not folder.is_dir():
        return None
    found: tuple[OfflineMatch, Resumable] | None = None
    kept = 0
    for path in sorted(folder.glob(f"*{JOURNAL_SUFFIX}"), key=_last_change, reverse=True):
        try:
            match = OfflineMatch(path, FileLock.acquire(path))
        except (FileInUse, OSError):
            continue  # another `play` plays it
        about = match.read()
        if about is None:
            match.forget()
        elif pick and found is None:
            found = match, about
        elif kept < KEEP_UNFINISHED:
            kept += 1
            match.lock.release()
        else:
            match.forget()
    return found


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
    """`--continue`: take up the most recent unfinished match no running `play` holds."""
    journals: Path | None = None
    """The folder of the offline journals (`offline_dir()`); None keeps nothing."""
    db: Path | None = None
    """The journal of this match (`play` sets it); None keeps nothing."""
    history: Path | None = None
    """The store of finished offline matches (`history_path()`); None keeps none."""


def embedded_server(reactor: Any, opts: OfflineOptions,
                    archive: Archive | None = None) -> ServerFactory:
    """The embedded server's state, set up for one player against bots; with `opts.db`,
    it journals there (and first rebuilds what the file holds: `opts.resume`); with an
    open `archive`, it keeps finished matches there and offers `history`."""
    # `hard` bots search in a thread, so the prompt never freezes while they think.
    settings = TableSettings(turn_seconds=opts.turn_seconds, bot_delay=opts.bot_delay,
                             deal_pause=opts.deal_pause, bot_thread=True)
    # The only client is this one: the per-connection rate limit guards a public server
    # against floods and has nothing to guard here (scripted input would trip it).
    limits = ServerLimits(rate=1000.0, burst=1000)
    journal = None
    if opts.db is not None:
        private_dir(opts.db.parent)
        journal = StoreJournal.open(opts.db, cast(Clock, reactor))
    return make_factory(cast(Clock, reactor), name="pisyedili play", seed=opts.seed,
                        settings=settings, limits=limits, journal=journal, archive=archive)


async def open_history(reactor: Any, path: Path | None) -> Archive | None:
    """The store of finished offline matches at `path`, open; None without a path or
    when it cannot be opened (play goes on, keeping no history: logged)."""
    if path is None:
        return None
    archive = Archive(lambda: open_store(path), reactor)
    try:
        await archive.open().asFuture(asyncio.get_running_loop())
    except Exception as e:  # a file that is no store, a full disk, a folder not ours
        log.warn("offline matches cannot be kept in {path}: {error}", path=str(path),
                 error=str(e))
        await archive.close().asFuture(asyncio.get_running_loop())
        return None
    return archive


async def start_server(reactor: Any, opts: OfflineOptions,
                       archive: Archive | None = None) -> tuple[Any, ServerFactory]:
    """The embedded server, listening on an ephemeral loopback port; and its state."""
    endpoint: Any = serverFromString(reactor, LOOPBACK)  # type: ignore[no-untyped-call]
    factory = embedded_server(reactor, opts, archive)
    port = await endpoint.listen(factory).asFuture(asyncio.get_running_loop())
    return port, factory


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
            # Public on a server nobody else knows of: its matches are then shown to
            # the player of every later `play`, whose session is another (`/history`).
            self._send({"type": "create_table", "rules": self.opts.rules,
                        "seats": self.opts.bots + 1})

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


def take_match(app: ClientApp, opts: OfflineOptions) -> tuple[OfflineMatch | None, str | None]:
    """This process's journal and, with `--continue`, the token of the match it takes
    up (and the player is told which, or that there is none)."""
    if opts.journals is None:
        if opts.resume:
            app.on_status(_("no unfinished offline match to continue: a new one starts"))
        return None, None
    try:
        found = survey(opts.journals, pick=opts.resume)
    except OSError as e:  # the folder cannot be read: play on, a new match
        log.warn("offline journals unreadable: {error}", error=str(e))
        found = None
    if found is not None:
        match, about = found
        saved = match.tokens.load(OFFLINE_KEY)
        if saved is not None:
            app.on_status(about.describe())
            return match, saved.token
        match.forget()
    if opts.resume:
        app.on_status(_("no unfinished offline match to continue (another `pisyedili "
                        "play` may be playing one): a new one starts"))
    try:
        return OfflineMatch.new(opts.journals), None
    except OSError as e:
        app.on_status(_("the match cannot be kept for --continue ({error})", error=str(e)))
        return None, None


async def play(app: ClientApp, reactor: Any, name: str, opts: OfflineOptions) -> None:
    """Run a whole offline session: server up, table hosted (or, with `--continue`,
    taken back), the prompt until quit; then the journal goes if the match is over."""
    match, token = take_match(app, opts)
    opts = OfflineOptions(**{**vars(opts), "resume": token is not None,
                             "db": match.path if match is not None else None})
    archive = await open_history(reactor, opts.history)
    app.state.local_history = archive is not None
    port, factory = await start_server(reactor, opts, archive)
    if opts.seed is not None:
        app.on_status(_("--seed {seed}: the shuffles are predictable (tests and demos)",
                        seed=str(opts.seed)))
    pilot = Autopilot(app, opts)
    pilot.started = token is not None  # the table exists: nothing to host
    app.subscribe_lobby = False
    app.keep_seat_on_quit = match is not None  # `--continue` takes it back
    app.state.deal_pause = opts.deal_pause  # the server sends no countdown to the next deal
    app.state.offline = True
    endpoint = cast(IStreamClientEndpoint,
                    TCP4ClientEndpoint(reactor, "127.0.0.1", port.getHost().port, timeout=10))
    link = wire(app, reactor, endpoint, name, before=pilot.on_message)
    link.token = token

    def changed(new: str | None, who: str) -> None:
        if new is not None and match is not None:
            match.tokens.save(OFFLINE_KEY, new, who)

    link.on_token = changed
    link.start()
    try:
        await app.run()
    finally:
        stopped = port.stopListening()
        if stopped is not None:
            await stopped.asFuture(asyncio.get_running_loop())
        if match is not None:  # a match over (or never begun) is not kept
            if isinstance(factory.journal, StoreJournal):
                factory.journal.close()
            if not any(t.core.phase == TablePhase.PLAYING for t in factory.lobby.tables()):
                match.forget()
            else:
                match.lock.release()
        if archive is not None:  # the last match's record is written before it closes
            await archive.close().asFuture(asyncio.get_running_loop())
