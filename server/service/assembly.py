"""The server's object graph, assembled in one place.

`make_factory` builds the server's state behind one protocol factory (sessions,
accounts, moderation, ratings, the relay, the lobby), each part given its
collaborators as it is made; tests and the offline client use it alone.
`make_service` opens the store and the cluster from the command line and puts
the service around that state.
"""

from __future__ import annotations

import random
import secrets
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, cast

from twisted.logger import Logger

from pisyedili.server.clock import Clock
from pisyedili.server.cluster import LOCAL, Cluster, open_cluster
from pisyedili.server.net.limits import ServerLimits
from pisyedili.server.net.relay import Relay
from pisyedili.server.net.sweeps import Sweeps
from pisyedili.server.net.tcp import ServerFactory
from pisyedili.server.people import accounts as accounts_
from pisyedili.server.people import moderation as moderation_
from pisyedili.server.people.accounts import Accounts, AccountSettings
from pisyedili.server.people.invitations import Invitations
from pisyedili.server.people.moderation import Moderation
from pisyedili.server.people.processes import OtherProcesses
from pisyedili.server.people.ratings import Ratings
from pisyedili.server.people.session import Sessions
from pisyedili.server.service.recovery import restore
from pisyedili.server.service.server import ServerService
from pisyedili.server.service.takeover import Takeover, store_ids
from pisyedili.server.store import MEMORY, Archive, StoreError, is_url, open_store, public
from pisyedili.server.store.files import FileInUse, FileLock, private_dir
from pisyedili.server.store.journal import Saved, StoreJournal
from pisyedili.server.table.core import TableSettings
from pisyedili.server.table.journal import NO_JOURNAL, Journal
from pisyedili.server.table.lobby import Lobby

log = Logger()

DEFAULT_NAME = "Pis Yedili"


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
                 sweeps: Sweeps | None = None,
                 test_decks: bool = False) -> ServerFactory:
    """The whole server state (lobby, sessions, limits) behind one protocol factory.

    With `archive`, every finished match is handed to its store (rated ones rated), and
    accounts and moderation are on, their registry read from the file `community_from`
    (the store's, already migrated) before anything listens. With `journal`, open
    tables and sessions are written down as they change, and what it holds from the
    last run (`saved`, or what it reads now) is rebuilt first (`recovery.py`). With a
    shared `cluster`, ids, names and codes are claimed there (`server/cluster/`); and
    with a `shared_journal` (the `--db` every process of it uses) nothing is restored
    here: once joined, this process takes over the tables nobody holds (`make_service`
    makes its `Takeover`, which joins `sweeps`, the relay's stand-in for it)."""
    limits = limits or ServerLimits()
    settings = settings or TableSettings()
    kept: Journal = journal if journal is not None else NO_JOURNAL
    # A cycle among the parts: the sessions, accounts and moderation reach the other
    # processes through the relay, which is made from them (and from the server, which
    # makes it: `ServerFactory`'s `relay`). Each is given `elsewhere`, which stands for
    # the relay, and the relay joins it once the server made it; what the journal kept
    # is restored after that (a relay that holds nothing yet: nobody is elsewhere).
    elsewhere = OtherProcesses() if cluster.shared else None
    on_shared_store = elsewhere if shared_journal is not None else None
    registry, sanctions = read_community(community_from, clock.seconds()) \
        if archive is not None else (None, None)
    registry = registry or ({}, {})
    sessions = Sessions(clock, settings.grace_seconds, kept, cluster, elsewhere=elsewhere,
                        reserved=registry[1] if archive is not None else frozenset())
    accounts = moderation = ratings = None
    if archive is not None:
        moderation = Moderation(archive, clock, sanctions, limits.kick_seconds,
                                elsewhere=on_shared_store)
        accounts = Accounts(archive, sessions, clock, account_settings, registry,
                            ban_check=moderation.account_banned, elsewhere=on_shared_store)
        ratings = Ratings(archive, accounts)
    invitations = Invitations(clock)
    lobby = Lobby(clock, rng_factory(seed), settings, limits, sessions.deliver,
                  sessions.left_table,
                  on_match=ratings.on_match if ratings is not None else None, journal=kept,
                  cluster=cluster, test_decks=test_decks,
                  watchers=(invitations.table_changed,))

    def relay(server: ServerFactory) -> Relay:
        return Relay(cluster, sessions, clock, server, shared_store=shared_journal is not None,
                     sweeps=sweeps)

    factory = ServerFactory(name, lobby, sessions, limits, clock, invitations,
                            archive=archive, journal=kept, cluster=cluster,
                            accounts=accounts, moderation=moderation, ratings=ratings,
                            relay=relay if cluster.shared else None)
    if elsewhere is not None:
        assert factory.relay is not None
        elsewhere.join(factory.relay)
    if journal is not None and (shared_journal is None or not cluster.shared):
        restore(saved if saved is not None else journal.load(), lobby, sessions)
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


def make_service(options: Mapping[str, Any]) -> ServerService:
    """The server as a Service, from its parsed command line (`tap.ServerOptions`):
    the store locked and its journal read, the cluster opened, the state built
    (`make_factory`) and the service around it."""
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
    shared_journal = path if cluster.shared and is_url(path) else None
    # On one shared journal, the tables nobody holds are taken over once joined. The
    # relay tells the takeover of a process gone, and waits on it; the takeover is made
    # from the relay: `sweeps` stands for it until it joins.
    sweeps = Sweeps() if journal is not None and shared_journal is not None else None
    factory = make_factory(cast(Clock, reactor), name=options["name"], seed=options["seed"],
                           limits=options["limits"], settings=options["settings"],
                           archive=archive, journal=journal, saved=saved,
                           account_settings=account_settings,
                           community_from=path if journal is not None else None,
                           cluster=cluster, shared_journal=shared_journal, sweeps=sweeps,
                           test_decks=bool(options["test-decks"]))
    takeover = None
    if sweeps is not None:
        assert journal is not None and shared_journal is not None and factory.relay is not None
        takeover = Takeover(shared_journal, journal, factory.lobby, factory.sessions,
                            factory.relay, cluster, cast(Clock, reactor), factory.protocols)
        sweeps.join(takeover)
    return ServerService(factory, options["listen"], reactor, seed=options["seed"],
                         log_format=options["log-format"],
                         announce=not options["no-announce"], archive=archive,
                         keep_days=float(options["keep-days"]),
                         store_required=bool(options["db-required"]),
                         web=options["web"], origins=options["origins"],
                         proxies=options["proxies"], journal=journal, lock=lock,
                         health=options["health"],
                         drain_seconds=float(options["drain-seconds"]),
                         cluster_name=str(options["cluster-name"]),
                         on_joined=(takeover.start,) if takeover is not None else ())


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
