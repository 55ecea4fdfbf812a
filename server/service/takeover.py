"""Tables outlive their process: a cluster on one shared journal takes them over.

With `--cluster` and one PostgreSQL `--db` for every process, the journal holds every
process's open tables. A table's lease is its `table:ID` key in the cluster, renewed
with its process's own; once that process is gone (its lease ran out: `kill -9`, a
crash) or let it go (SIGTERM), a sweep here takes each table nobody holds
(`Cluster.take`: one process wins), reads it back from the journal and rebuilds it as
a restart does (`recovery.py`), for that one table. Its members' sessions are found
where they live: a member connected to this process sits again at once; one whose
home is another live process is told of its table's new owner there (`Relay.call_home`);
one whose home died with the table is restored here from the journal, away, and
resumes by token here, or on any process (the hand-over of `relay.py`), logged in to
the account it was (the journal keeps which). A private table's invite code is held
here from then on (`Cluster.keep_code`, as `Lobby.rebuild` does for any table read
back): its old process's claim runs out with its lease (or went as it stopped), and
the other processes find the table by its code in the cluster only. Nothing a member
saw acknowledged is lost: the journal committed it before any byte about it left.

A sweep runs once this process joined (instead of the restart's own restore, which
would rebuild every process's tables), each time a process is gone, and when a client
resumes here a session whose process is gone (the relay waits for one: `net/sweeps.py`), and
again a little after one that failed (the database out of reach), until one succeeds.
A table whose takeover failed half-way (Redis gone while its members were looked up)
is let go as if another process had taken it, for the next sweep to take whole.

A process taken for dead may be alive: paused (a stopped VM, SIGSTOP) or cut off from
Redis for longer than its lease, it wakes holding tables another process took over.
Each takeover counts the table's holder on in the journal (`Store.hold_table`) before
reading it, and the journal writes a table's rows only for its current holder (its
fence): the first commit of the old holder's after that finds its tables fenced, and
`let_go` drops them here, with what waited on that commit for their members, who are
hung up on and resume by token at the table's new holder.
"""

from __future__ import annotations

from collections.abc import Callable, Collection
from typing import cast

from twisted.internet.defer import Deferred
from twisted.internet.interfaces import IReactorTime
from twisted.internet.task import LoopingCall
from twisted.internet.threads import deferToThread
from twisted.logger import Logger
from twisted.python.failure import Failure

from pisyedili.protocol.errors import ProtocolError
from pisyedili.server import metrics
from pisyedili.server.clock import Clock, Delayed
from pisyedili.server.cluster import Cluster, unavailable
from pisyedili.server.cluster.holdings import (
    Claim,
    ClaimAnswered,
    ClaimLater,
    CountHolder,
    ForgetTable,
    HolderCounted,
    JournalListed,
    LetGo,
    OpenJournal,
    ProcessGone,
    RestoreFailed,
    Sweep,
    SweepEnded,
    WritesRefused,
)
from pisyedili.server.net.connection import Connection
from pisyedili.server.net.forwarding import RelayedConnection
from pisyedili.server.net.relay import Relay
from pisyedili.server.people.session import Session, Sessions
from pisyedili.server.store import id_floors, open_store
from pisyedili.server.store.base import JournalRows, Unreachable
from pisyedili.server.store.journal import (
    Saved,
    SavedSession,
    StoreJournal,
    read_saved,
)
from pisyedili.server.table.commands import MemberId, Reconnected, Restored
from pisyedili.server.table.journal import SavedTable
from pisyedili.server.table.lobby import Lobby
from pisyedili.server.table.runner import TableRunner

log = Logger()

IDS_EVERY = 2.0
"""Seconds between two reads of the journal's counters while Redis is away."""

RETRY_SECONDS = 2.0
"""Seconds before a sweep that failed (the database out of reach, say) runs again.
Sweeps are run by events (a process gone, a resume), and none may come: without a
retry, the tables of a process that died while the database was away would wait for
the next, with their players at them."""


def store_ids(where: str) -> Callable[[], Deferred[dict[str, int]]]:
    """How the cluster reads the ids the store at `where` holds (`Cluster.count_from`):
    on a thread, on a connection of its own."""
    return lambda: deferToThread(id_floors, where)


def journal_ids(where: str) -> Callable[[], Deferred[dict[str, int]]]:
    """How `IdsRead` reads the journal's counters at `where`: on a thread, on a
    connection of its own."""
    def counters() -> dict[str, int]:
        store = open_store(where)
        try:
            return store.journal_counters()
        finally:
            store.close()

    return lambda: deferToThread(counters)


class IdsRead:
    """While the cluster's Redis is away, the ids every process gave out, read from
    the shared journal every `IDS_EVERY` seconds for the cluster's counters to go on
    above: a process that dies meanwhile leaves its ids in the journal only, and Redis
    may come back empty. (When it is back the cluster reads the store's ids once more
    before it hands out any: `Cluster.count_from`.)"""

    def __init__(self, read: Callable[[], Deferred[dict[str, int]]], cluster: Cluster,
                 clock: Clock) -> None:
        self._read_ids = read
        self._cluster = cluster
        self._reading = False
        self._loop = LoopingCall(self._read)
        self._loop.clock = cast(IReactorTime, clock)

    def start(self) -> None:
        if not self._loop.running:
            self._loop.start(IDS_EVERY, now=True)

    def stop(self) -> None:
        if self._loop.running:
            self._loop.stop()

    def _read(self) -> None:
        """One read at a time, and the loop never waits on it: a loop stopped and
        started again (Redis back, and gone again) while a slow read was under way
        would run twice over, and once more after it stopped."""
        if self._reading:
            return
        self._reading = True
        read = self._read_ids()
        read.addCallback(self._cluster.seen_ids)
        read.addErrback(lambda f: log.warn("the journal's ids could not be read: {error}",
                                           error=f.getErrorMessage()))
        read.addBoth(self._read_done)

    def _read_done(self, _: object) -> None:
        self._reading = False


class TakeoverFailed(Exception):
    """Tables of a sweep were not taken over; the next sweep tries them again."""


class LeaseInDoubt(TakeoverFailed):
    """This process may have been taken for dead: it claims nothing for now."""


def _outage(error: BaseException) -> bool:
    """Whether `error` says the cluster's shared state or the store is out of reach, or
    this process's lease in doubt: a fault it lives through, said without a traceback
    (one is kept for a defect)."""
    return isinstance(error, (LeaseInDoubt, Unreachable)) or (
        isinstance(error, ProtocolError) and error.code == "cluster_unavailable")


class Takeover:
    """Sweeps the shared journal for tables nobody holds (module docstring)."""

    def __init__(self, where: str, journal: StoreJournal, lobby: Lobby, sessions: Sessions,
                 relay: Relay, cluster: Cluster, clock: Clock,
                 connections: Collection[Connection]) -> None:
        self._clock = clock
        self._connections = connections  # (live: the server's open connections)
        self._where = where
        self._journal = journal
        self._lobby = lobby
        self._sessions = sessions
        self._relay = relay
        self._cluster = cluster
        self._sweeping = False
        self._again = False
        self._failing = False  # the last sweep failed: one more is due
        self._retry: Delayed | None = None
        self._next: list[Deferred[None]] = []  # fired once the next sweep to start ends
        self._current: list[Deferred[None]] = []  # fired once the running one ends
        self._claimed: set[int] = set()
        """Tables this sweep claimed whose members are not placed yet (`taking`)."""
        self._ids = IdsRead(journal_ids(where), cluster, clock)
        self._started = False

    def start(self) -> None:
        """Joined: take what nobody holds now, and again whenever a process is gone."""
        self._started = True
        self._journal.fence(self.let_go)
        self._cluster.watch_link(self._ids.start, self._ids.stop)
        self.sweep()

    def gone(self, process: str) -> None:
        """A process is gone (the relay's word, `net/sweeps.py`): once joined, its tables
        are swept for, unless this one stops."""
        if not self._started:
            return
        for effect in self._cluster.holdings.handle(ProcessGone(process)):
            if isinstance(effect, Sweep):
                self.sweep()

    def settled(self) -> Deferred[None]:
        """Fires once a sweep that starts after this call is done (whatever it took)."""
        done: Deferred[None] = Deferred()
        self._next.append(done)
        self.sweep()
        return done

    def taking(self) -> bool:
        """Whether this process claimed tables it has not placed the members of yet: a
        session rebuilt elsewhere meanwhile may sit at one of them."""
        return bool(self._claimed)

    def sweep(self) -> None:
        """One sweep at a time; one asked for meanwhile runs after it."""
        if self._sweeping:
            self._again = True
            return
        self._sweeping, self._again = True, False
        if self._retry is not None and self._retry.active():
            self._retry.cancel()
        self._retry = None
        self._current, self._next = self._next, []
        swept: Deferred[None] = Deferred.fromCoroutine(self._sweep())
        swept.addCallbacks(self._succeeded, self._failed)
        swept.addBoth(self._swept)

    def _succeeded(self, _: object) -> None:
        if self._failing:
            log.info("taking tables over works again")
        self._failing = False

    def _failed(self, failure: Failure) -> None:
        """Logged once, until a sweep succeeds; tried again in `RETRY_SECONDS`. Redis or
        the store out of reach is an outage, not a fault: a warning, no traceback."""
        if not self._failing:
            error = failure.value
            if isinstance(error, ProtocolError) and error.code == "cluster_unavailable":
                log.warn("taking tables over failed; trying again every {seconds} s: "
                         "{why}", seconds=RETRY_SECONDS, why=error.message)
            elif isinstance(error, LeaseInDoubt):
                log.warn("taking tables over waits; trying again every {seconds} s: "
                         "{why}", seconds=RETRY_SECONDS, why=str(error))
            elif isinstance(error, Unreachable):
                log.warn("taking tables over failed; trying again every {seconds} s: the "
                         "store could not be read ({why})", seconds=RETRY_SECONDS,
                         why=str(error))
            else:
                log.failure("taking tables over failed; trying again every {seconds} s",
                            failure, seconds=RETRY_SECONDS)
        self._failing = True

    def _swept(self, _: object) -> None:
        self._sweeping = False
        done, self._current = self._current, []
        for waiter in done:
            waiter.callback(None)
        if self._again:
            self.sweep()
        elif self._failing:
            self._retry = self._clock.callLater(RETRY_SECONDS, self.sweep)

    def _read(self) -> JournalRows:
        """On a thread, on a connection of its own: the journal's commits are on theirs."""
        store = open_store(self._where)
        try:
            return store.read_journal()
        finally:
            store.close()

    def let_go(self, tables: set[int]) -> list[Connection]:
        """Tables the journal's fence found held elsewhere: each goes from here writing
        nothing, its members' sessions too (the new holder restored them from the
        journal, or has them as visitors from their homes). The connections returned
        get nothing more that waited on the journal; those of members connected here
        are then closed, to resume by token there."""
        silenced: list[Connection] = []
        for effect in self._cluster.holdings.handle(WritesRefused(frozenset(tables))):
            if isinstance(effect, LetGo):
                silenced.extend(self._let_go(effect.table))
        return silenced

    def _let_go(self, table_id: int) -> list[Connection]:
        """`let_go`'s one table (nothing if it is not here)."""
        silenced: list[Connection] = []
        runner = self._lobby.by_id(table_id)
        if runner is not None:
            self._lobby.let_go(runner)
        for member in runner.core.members() if runner is not None else ():
            visitor = self._relay.let_go(member)
            if visitor is not None:
                silenced.append(visitor)
                continue
            session = self._sessions.by_id(member)
            if session is None:
                silenced.extend(self._hung_up(member))
                continue
            if session.table is not runner:
                continue
            peer = session.peer
            self._lobby.unsubscribe(session)
            if self._relay.table_id(session) is None:
                self._sessions.hand_over(session, keep_row=True)
            else:  # its home is here, and already knows its table's new holder
                session.table = None
            if isinstance(peer, Connection) and not isinstance(peer, RelayedConnection):
                silenced.append(peer)
                self._clock.callLater(0, peer.close, "shutting_down",
                                      "another server of the cluster holds your table "
                                      "now: connect again to go on there")
        return silenced

    def _hung_up(self, member: str) -> list[Connection]:
        """The connections of `member` whose session went from here before the fence
        (taken over with its table while this process was taken for dead): hung up on
        already, they still wait for what the refused commit tells of, a move's
        acknowledgement among it, which they must never get (their hang-up they do)."""
        return [conn for conn in self._connections
                if conn.session is not None and conn.session.player_id == member]

    def _hold(self, tables: list[int]) -> dict[int, int]:
        """On a thread: each table's holder number in the journal, counted up, so that
        its last holder (taken for dead, maybe only paused) can write it no more; the
        tables closed meanwhile are left out."""
        store = open_store(self._where)
        try:
            counts = {table_id: store.hold_table(table_id) for table_id in tables}
        finally:
            store.close()
        return {table_id: count for table_id, count in counts.items() if count is not None}

    async def _sweep(self) -> None:
        """The cluster's `holdings` decide (`Claim`, `CountHolder`, `OpenJournal`); this
        carries each step out, and tells it each answer."""
        try:
            await self._take_over()
        finally:  # a table left claimed or being counted is claimed again next time
            self._claimed.clear()
            self._cluster.holdings.handle(SweepEnded())

    async def _take_over(self) -> None:
        holdings = self._cluster.holdings
        held = {table.id for table in self._lobby.tables()}
        rows: JournalRows = await deferToThread(self._read)
        listed = JournalListed(frozenset(t[0] for t in rows.tables) - held)
        counting: list[int] = []
        for effect in holdings.handle(listed):
            if isinstance(effect, ClaimLater):
                if not self._cluster.reachable:
                    raise unavailable("taking a table over")
                raise LeaseInDoubt("this process's lease ran out (it may have been taken "
                                   "for dead): it takes nothing over until it is renewed")
            if isinstance(effect, Claim):
                won = await self._cluster.take(effect.table)
                counting.extend(then.table for then in holdings.handle(
                    ClaimAnswered(effect.table, won)) if isinstance(then, CountHolder))
                self._claimed.update(counting)
        if not counting:
            return
        holders = await deferToThread(self._hold, counting)
        tokens: dict[int, int] = {}
        for table_id in counting:
            for effect in holdings.handle(HolderCounted(table_id, holders.get(table_id))):
                if isinstance(effect, OpenJournal):
                    tokens[table_id] = effect.token
                elif isinstance(effect, ForgetTable):
                    self._cluster.table_closed(table_id, None)
        if not tokens:
            return
        # Read again once they are held: one closed since the first read is not revived,
        # and what the last holder wrote before the count moved on is in.
        rows = await deferToThread(self._read)
        next_seq: dict[int, int] = {}
        saved = read_saved(rows, next_seq, only=tokens.__contains__)
        for table_id in set(tokens) - {t.id for t in saved.tables}:
            self._cluster.table_closed(table_id, None)
        by_player = {row.player_id: row for row in saved.sessions}
        failed: list[int] = []
        outages: list[Exception] = []  # what cut the takeover of a table short
        for table in saved.tables:
            self._journal.go_on(table.id, next_seq.get(table.id, 0), tokens[table.id])
            try:
                await self._rebuild(table, by_player, saved)
            except Exception as error:
                if _outage(error):
                    outages.append(error)
                    log.warn("table {table} could not be taken over for now: {why}",
                             table=table.id, why=str(error))
                else:
                    log.failure("table {table} could not be taken over", table=table.id)
                for effect in holdings.handle(RestoreFailed(table.id)):
                    if isinstance(effect, LetGo):
                        self._drop(effect.table)
                failed.append(table.id)
        if failed and len(outages) == len(failed):  # said as an outage (`_failed`)
            raise outages[0]
        if failed:  # the next sweep takes them again
            raise TakeoverFailed(f"tables {failed} could not be taken over")

    def _drop(self, table_id: int) -> None:
        """A table whose takeover failed goes from here as if another process had taken
        it (its lease no longer renewed: a sweep, this process's next or another's,
        takes it again), with any member placed at it so far."""
        if self._lobby.by_id(table_id) is not None:
            self._let_go(table_id)
        else:
            self._cluster.table_lost(table_id, None)

    async def _rebuild(self, table: SavedTable, by_player: dict[int, SavedSession],
                       saved: Saved) -> None:
        """One table, as `recovery.restore` rebuilds each; `Restored` once its members
        are placed. Whatever may fail for want of Redis or the database (where a
        member's session lives, the account it was logged in to) is asked first,
        before any member is placed: a takeover that fails then leaves nobody at a
        table that is not served."""
        runner = self._lobby.rebuild(table)
        restoring: list[MemberId] = []
        try:
            await self._place(runner, by_player, saved, restoring)
        finally:  # a hand-over asked meanwhile of a member restored here is answered
            self._claimed.discard(table.id)
            self._relay.restored(restoring)
        metrics.TAKEOVERS.inc()
        log.info("took table {table} over, with {members} members",
                 table=table.id, members=len(runner.core.members()))

    async def _place(self, runner: TableRunner, by_player: dict[int, SavedSession],
                     saved: Saved, restoring: list[MemberId]) -> None:
        """`_rebuild`'s members. One whose home is gone is restored here only if this
        process takes its session in the cluster (`take_session`): a resume on another
        process may take it first, and that process is then its home. Until each is
        placed (from before the first question to the cluster), a hand-over asked of it
        here waits, and so does its home's word, and this table is where it sits to a
        process that asks (`Relay.restoring`); a member held here is handed to a
        resume elsewhere only once it is placed too, so the hand-over names this
        table."""
        homes: dict[MemberId, str] = {}
        restores: dict[MemberId, tuple[SavedSession, int | None]] = {}
        rows: dict[MemberId, SavedSession] = {}
        for member in runner.core.members():
            row = by_player.get(int(member)) if member.isdigit() else None
            held = self._held_here(member) is not None
            if row is not None and not held:
                rows[member] = row
            if held or row is not None:  # (one held here: a resume elsewhere waits too)
                self._relay.restoring(member, runner)
                restoring.append(member)
        for member, row in rows.items():
            if self._held_here(member) is not None:
                continue  # (resumed here meanwhile)
            home = await self._cluster.session_holder(row.token)
            if home is None:
                if not await self._cluster.take_session(row.token, str(row.player_id),
                                                        row.name):
                    home = await self._cluster.session_holder(row.token)
            if home is not None and home != self._cluster.process:
                homes[member] = home
            else:
                restores[member] = (row, await self._account(
                    saved.session_accounts.get(row.player_id), row.name))
        here = []
        for member in runner.core.members():
            session = self._held_here(member)  # (or resumed here meanwhile)
            if session is not None:
                self._relay.settle(member)  # it was at this table's old process
                session.table = runner
                if session.connected:
                    here.append(member)
            elif member in homes:
                self._relay.call_home(homes[member], member, runner)
            elif member in restores and self._sessions.by_id(member) is None:
                row, account = restores[member]
                restored = self._sessions.restore_one(row)
                restored.table, restored.account = runner, account
        runner.handle(Restored())
        for member in here:
            runner.handle(Reconnected(member))

    def _held_here(self, member: MemberId) -> Session | None:
        """`member`'s session if it lives in this process (a visitor's does not)."""
        session = self._sessions.by_id(member)
        return None if session is None or self._relay.is_visitor(member) else session

    async def _account(self, account: int | None, name: str) -> int | None:
        """The account a restored session was logged in to, as `recovery.restore` gives
        it back; known to this process's registry (a rated match is rated by it), read
        from the store if it was registered through another process unheard of here."""
        accounts = self._relay.accounts
        if account is None or accounts is None:
            return account
        if account not in accounts.accounts:
            found = await accounts.lookup(name)
            if found is None or found.id != account:
                log.warn("a session's account {account} is unknown: it resumes as a guest",
                         account=account)
                return None
        return account
