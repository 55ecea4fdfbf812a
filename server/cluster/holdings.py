"""What one process of a cluster holds, as a state machine: events in, effects out.

In the manner of `table/core.py` (and h11's `Connection`): `Holdings.handle(event)`
changes one process's view of what it holds (its standing in the cluster, each table
it holds with its fencing token, each session it homes) and returns what should be
done because of it; the callers carry the effects out with Redis, the journal and the
messages between processes, and feed the answers back as events: `cluster/redis/`
(the lease, Redis lost and back, a table held elsewhere), `service/takeover.py`
(claims, holder counts, tables fenced), `people/session.py` (a session homed here,
or gone from here) and `net/handover.py` (a resume, a home's answer, a hand asked,
a drain, an adoption). No clock, no Redis, no reactor: the same events give the same
effects, so a model of Redis and of the journal drives several processes' machines
through every interleaving (`tests/server/test_holdings.py`).

Three rules make a cluster safe, and each is a transition here:

- a table is written by one process at a time: a process claims it in Redis first
  (`Claim`), counts its holder on in the journal (`CountHolder`), and only then reads
  it back and writes it under that number (`OpenJournal`, the fencing token); a
  commit the journal refuses (`WritesRefused`: another process counted on since) lets
  the table go at once (`LetGo`), and nothing that waited on that commit is
  acknowledged;
- a process that may have been taken for dead (its lease ran out: paused, cut off)
  claims nothing and checks every key before it renews any (`CheckKeys`); what
  another process holds now is not written from here again (`StopRenewing`,
  `Disown`);
- a session has one home: it moves only when its home hands it over (`HandOver`, to a
  resume elsewhere; `HandSession`, as its home drains), or when its home is gone and
  one process wins it in Redis (`TakeSession`; a copy elsewhere yields to it,
  `YieldSession`); an old home remembers where it went
  (`SendOn`), a process in doubt neither hands a session over nor welcomes its resume
  until its keys are checked, and a process handing its sessions on takes none in
  (`RefuseAdopt`, `RefuseResume`).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

from pisyedili.server.cluster.ownership import hand_targets

# -- states ----------------------------------------------------------------------------


class Standing(StrEnum):
    """This process in the cluster."""

    JOINING = "joining"  # not joined yet: no lease written
    SERVING = "serving"  # its lease renewed: what it holds is its own
    CUT_OFF = "cut_off"  # Redis out of reach: its tables play on, nothing is claimed
    IN_DOUBT = "in_doubt"  # its lease ran out (paused, stalled): checking its keys
    DRAINING = "draining"  # stopping: handing its sessions on, taking nothing in
    STOPPED = "stopped"


class Hold(StrEnum):
    """One table, as this process holds it."""

    CLAIMING = "claiming"  # asked Redis for it
    FENCING = "fencing"  # won in Redis; its holder being counted on in the journal
    HELD = "held"  # written under `token`
    DISPUTED = "disputed"  # Redis names another holder: not renewed; the journal decides


class Home(StrEnum):
    """One session, as this process homes it."""

    HOME = "home"  # homed here
    ASKING = "asking"  # a resume here: its home asked to hand it over
    TAKING = "taking"  # a resume here of a session whose home is gone: asked of Redis
    HANDED = "handed"  # handed to `to`: a word about it is sent on there


@dataclass(frozen=True, slots=True)
class TableHold:
    state: Hold
    token: int | None = None  # the journal's holder number, once counted


@dataclass(frozen=True, slots=True)
class SessionHome:
    state: Home
    to: str | None = None  # ASKING: the process asked; HANDED: the one it went to
    since: str | None = None  # HOME: the old home that handed it here, until this
    # process's record of it is written (Redis away, or a stopping home's hand-over
    # read late): the record may still name that home
    checked: bool = False  # HOME: homed here as `CheckKeys` asked about it; one come
    # since (handed back, maybe, by the process the answer names) is not judged by it


# -- events: what happened --------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Joined:
    """The lease is written: the process serves."""


@dataclass(frozen=True, slots=True)
class LeaseRenewed:
    """A beat found the lease still this process's."""


@dataclass(frozen=True, slots=True)
class LeaseLapsed:
    """A beat found the lease had run out: the others may have taken this process for
    dead, and taken over what it holds."""


@dataclass(frozen=True, slots=True)
class KeysChecked:
    """Every key `CheckKeys` asked about was answered (`HoldAnswered`,
    `SessionKept`): what is still held is this process's again."""


@dataclass(frozen=True, slots=True)
class RedisLost:
    pass


@dataclass(frozen=True, slots=True)
class RedisBack:
    pass


@dataclass(frozen=True, slots=True)
class Woke:
    """This process was paused for `gap` seconds; its lease lasts `lease`."""

    gap: float
    lease: float


@dataclass(frozen=True, slots=True)
class ProcessGone:
    """Another process is gone (its lease ran out, it stopped, or it died)."""

    process: str


@dataclass(frozen=True, slots=True)
class JournalListed:
    """The open tables of the shared journal, as a sweep read them."""

    tables: frozenset[int]


@dataclass(frozen=True, slots=True)
class ClaimAnswered:
    table: int
    won: bool


@dataclass(frozen=True, slots=True)
class HolderCounted:
    """The journal counted this process on as the table's holder: `token` (None: the
    table closed meanwhile)."""

    table: int
    token: int | None


@dataclass(frozen=True, slots=True)
class SweepEnded:
    """A sweep ended (done, or failed halfway): a table it left claimed or being
    counted is not held, and the next sweep claims it again."""


@dataclass(frozen=True, slots=True)
class RestoreFailed:
    """A table taken over could not be rebuilt here."""

    table: int


@dataclass(frozen=True, slots=True)
class TableOpened:
    """A new table of this process: the journal's holder 0."""

    table: int


@dataclass(frozen=True, slots=True)
class TableClosed:
    table: int


@dataclass(frozen=True, slots=True)
class HoldAnswered:
    """Redis was asked whether this process still holds `table` (`CheckKeys`): None
    if it does, else the process that does."""

    table: int
    holder: str | None


@dataclass(frozen=True, slots=True)
class WritesRefused:
    """The journal refused a commit's rows for these tables: another process counted
    itself on as their holder since (this one was taken for dead)."""

    tables: frozenset[int]


@dataclass(frozen=True, slots=True)
class SessionOpened:
    """A session homed here (a hello, a restart's, a takeover's restored member, one
    welcomed or adopted). One homed here already stays as it is: its check asked
    (`CheckKeys`) still judges it, and an old home that handed it here while Redis was
    away is still the one its record names."""

    player: str


@dataclass(frozen=True, slots=True)
class SessionForgotten:
    player: str


@dataclass(frozen=True, slots=True)
class SessionWritten:
    """A session homed here is written again (resumed, renamed) only if no other live
    process holds it now: the answer (`SessionKept`) judges it as a check's does, since
    it may have been taken over while this process was taken for dead."""

    player: str


@dataclass(frozen=True, slots=True)
class SessionKept:
    """Redis was asked whether this process still homes `player` (`CheckKeys`): None
    if it does, else the process that took it."""

    player: str
    holder: str | None


@dataclass(frozen=True, slots=True)
class ResumeArrived:
    """A token of a session homed elsewhere resumes here. `holder`: the live process
    Redis names for it (None: none); `gone`: Redis named a process that is gone."""

    player: str
    holder: str | None
    gone: bool = False


@dataclass(frozen=True, slots=True)
class HandAnswered:
    """The home asked (`AskHand`) answered: handed (`ok`), handed already to `to`, or
    not."""

    player: str
    ok: bool
    to: str | None = None


@dataclass(frozen=True, slots=True)
class SessionTaken:
    """Redis answered `TakeSession`."""

    player: str
    won: bool


@dataclass(frozen=True, slots=True)
class HandAsked:
    """Another process, where the session resumes, asks this one to hand it over."""

    player: str
    by: str


@dataclass(frozen=True, slots=True)
class HandForgotten:
    """A lease after a session went to `to`: no word about it comes here any more."""

    player: str
    to: str


@dataclass(frozen=True, slots=True)
class Draining:
    """This process is told to stop, and serves on a while (a balancer sends it no new
    players): it takes no table over from now on. Sessions still come in (a resume, an
    adoption) until it hands them on (`DrainStarted`)."""


@dataclass(frozen=True, slots=True)
class DrainStarted:
    """This process stops: it hands the sessions it homes on and takes none in from
    now on. `live` the other processes, `tables` the process holding each homed
    session's table (None: none, or this one)."""

    live: tuple[str, ...]
    tables: Mapping[str, str | None]


@dataclass(frozen=True, slots=True)
class AdoptAsked:
    """A process that stops hands a session to this one."""

    player: str
    by: str


@dataclass(frozen=True, slots=True)
class RebuiltElsewhere:
    """`by` took a session whose home is gone in the cluster and rebuilt it from the
    journal (`homeless`)."""

    player: str
    by: str


@dataclass(frozen=True, slots=True)
class Stopped:
    pass


Event = (Joined | LeaseRenewed | LeaseLapsed | KeysChecked | RedisLost | RedisBack | Woke
         | ProcessGone | JournalListed | ClaimAnswered | HolderCounted | SweepEnded
         | RestoreFailed
         | TableOpened | TableClosed | HoldAnswered | WritesRefused | SessionOpened
         | SessionForgotten | SessionWritten | SessionKept | ResumeArrived | HandAnswered
         | SessionTaken | HandAsked | HandForgotten | Draining | DrainStarted | AdoptAsked
         | RebuiltElsewhere | Stopped)


# -- effects: what to do -----------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Sweep:
    """List the journal's open tables (answered by `JournalListed`)."""


@dataclass(frozen=True, slots=True)
class Claim:
    """Ask Redis for a table nobody alive holds (`ClaimAnswered`)."""

    table: int


@dataclass(frozen=True, slots=True)
class ClaimLater:
    """Tables nobody holds wait: this process may claim none now (Redis out of reach,
    or its own lease in doubt). The sweep is tried again."""


@dataclass(frozen=True, slots=True)
class CountHolder:
    """Count this process on as the table's holder in the journal (`HolderCounted`):
    its last holder writes it no more."""

    table: int


@dataclass(frozen=True, slots=True)
class OpenJournal:
    """Read the table back (after `CountHolder`: everything its last holder committed
    is in) and write it from now on under `token`."""

    table: int
    token: int


@dataclass(frozen=True, slots=True)
class ForgetTable:
    """A table claimed that closed meanwhile: its keys go."""

    table: int


@dataclass(frozen=True, slots=True)
class LetGo:
    """The table goes from here: nothing more is written or acknowledged for it, its
    members are hung up on (they resume at its holder)."""

    table: int


@dataclass(frozen=True, slots=True)
class StopRenewing:
    """Another process holds the table in Redis: its keys are not renewed, written or
    deleted from here."""

    table: int


@dataclass(frozen=True, slots=True)
class ReleaseKeys:
    """A table closed here: its keys go (only while they name this process)."""

    table: int


@dataclass(frozen=True, slots=True)
class RenewKeys:
    """Every key held here lives a lease more."""


@dataclass(frozen=True, slots=True)
class CheckKeys:
    """Write every key held here again, each only if no other process holds it now
    (answered by `HoldAnswered` / `SessionKept` each, then `KeysChecked`)."""


@dataclass(frozen=True, slots=True)
class AskHand:
    """Ask `home` to hand the session over (answered by `HandAnswered`)."""

    player: str
    home: str


@dataclass(frozen=True, slots=True)
class TakeSession:
    """Ask Redis for a session whose home is gone (answered by `SessionTaken`)."""

    player: str


@dataclass(frozen=True, slots=True)
class Welcome:
    """The resume is welcomed here: the session is homed here."""

    player: str


@dataclass(frozen=True, slots=True)
class RefuseResume:
    player: str


@dataclass(frozen=True, slots=True)
class HandOver:
    """Hand the session to `to` (its resume is there): `handed`, ok."""

    player: str
    to: str


@dataclass(frozen=True, slots=True)
class SendOn:
    """Tell `by` the session went to `to` already: `handed`, not ok, `to`."""

    player: str
    by: str
    to: str


@dataclass(frozen=True, slots=True)
class RefuseHand:
    """Tell `by` no session of `player` is homed here: `handed`, not ok."""

    player: str
    by: str


@dataclass(frozen=True, slots=True)
class HandSession:
    """This process stops: hand the session to `to` (`adopt`)."""

    player: str
    to: str


@dataclass(frozen=True, slots=True)
class AcceptAdopt:
    player: str
    by: str


@dataclass(frozen=True, slots=True)
class RefuseAdopt:
    player: str
    by: str


@dataclass(frozen=True, slots=True)
class RewriteSession:
    """The session's record in Redis still names `over`, the old home that handed it
    here (it no longer renews it, but its lease runs on): written for this process
    in its place, only while it still names `over`."""

    player: str
    over: str


@dataclass(frozen=True, slots=True)
class Disown:
    """Another process took the session over while this one was taken for dead: its
    keys are not written from here again, and it goes from here."""

    player: str


@dataclass(frozen=True, slots=True)
class YieldSession:
    """The copy of the session homed here is `to`'s, which took it in the cluster: it
    goes from here (its seat at a table here stays, away, until `to` says its player
    is back)."""

    player: str
    to: str


Effect = (Sweep | Claim | ClaimLater | CountHolder | OpenJournal | ForgetTable | LetGo
          | StopRenewing | ReleaseKeys | RenewKeys | CheckKeys | AskHand | TakeSession | Welcome
          | RefuseResume | HandOver | SendOn | RefuseHand | HandSession | AcceptAdopt
          | RefuseAdopt | RewriteSession | Disown | YieldSession)


_CLAIMS = frozenset({Standing.SERVING})
"""Standings in which a table nobody holds may be claimed: not cut off (Redis would
refuse anyway), not in doubt (what this process holds may be another's), not while
stopping (it would only hand the table on again)."""

_LEAVING = frozenset({Standing.DRAINING, Standing.STOPPED})

_ADOPTS = frozenset({Standing.SERVING, Standing.CUT_OFF, Standing.IN_DOUBT,
                     Standing.DRAINING})
"""Standings in which a session may come in (unless its sessions are being handed
on: `DrainStarted`)."""


@dataclass
class Holdings:
    """One process's tables and sessions (module docstring). `handle` is the only way
    its state changes; the rest only reads it."""

    standing: Standing = Standing.JOINING
    _tables: dict[int, TableHold] = field(default_factory=dict)
    _sessions: dict[str, SessionHome] = field(default_factory=dict)
    _asked: list[HandAsked | ResumeArrived] = field(default_factory=list)  # out of doubt
    _leaving: bool = False  # drains: back to DRAINING, not SERVING, once out of doubt
    _handing: bool = False  # hands its sessions on (`DrainStarted`): takes none in
    _unchecked: bool = False  # woken past its lease, or Redis lost in doubt: a check
    # asked before answers nothing (the next one tells)
    _checking: bool = False  # a check asked (`CheckKeys`), not answered (`KeysChecked`)

    # -- reading -------------------------------------------------------------------------

    def table(self, table_id: int) -> TableHold | None:
        return self._tables.get(table_id)

    def token(self, table_id: int) -> int | None:
        """The number this process writes the table under (None: it writes none)."""
        held = self._tables.get(table_id)
        return None if held is None or held.state not in (Hold.HELD, Hold.DISPUTED) \
            else held.token

    def writes(self, table_id: int) -> bool:
        return self.token(table_id) is not None

    def disputed(self, table_id: int) -> bool:
        held = self._tables.get(table_id)
        return held is not None and held.state is Hold.DISPUTED

    def tables(self, *states: Hold) -> list[int]:
        return sorted(t for t, held in self._tables.items()
                      if not states or held.state in states)

    def session(self, player: str) -> SessionHome | None:
        return self._sessions.get(player)

    def homes(self, player: str) -> bool:
        home = self._sessions.get(player)
        return home is not None and home.state is Home.HOME

    def homed(self) -> list[str]:
        return sorted(p for p, home in self._sessions.items() if home.state is Home.HOME)

    @property
    def handing(self) -> bool:
        """Whether this process hands its sessions on (`DrainStarted`)."""
        return self._handing

    def handed_to(self, player: str) -> str | None:
        home = self._sessions.get(player)
        return home.to if home is not None and home.state is Home.HANDED else None

    # -- the machine -----------------------------------------------------------------

    def handle(self, event: Event) -> list[Effect]:
        """What `event` changes here, and what is to be done about it, in order."""
        if self.standing is Standing.STOPPED:
            return []
        handler = _HANDLERS[type(event)]
        return handler(self, event)

    # standing

    def _joined(self, _: Joined) -> list[Effect]:
        if self.standing is Standing.JOINING:
            self.standing = Standing.SERVING
        return []

    def _renewed(self, _: LeaseRenewed) -> list[Effect]:
        if self.standing is Standing.IN_DOUBT and not self._checking:
            # (a pause shorter than the lease; once it lapsed, only the check tells)
            self.standing = Standing.DRAINING if self._leaving else Standing.SERVING
            self._unchecked = False
            return [RenewKeys(), *self._out_of_doubt()]
        return [RenewKeys()]

    def _lapsed(self, _: LeaseLapsed) -> list[Effect]:
        self.standing = Standing.IN_DOUBT
        return self._check()

    def _check(self) -> list[Effect]:
        """Every key asked about again; each session homed now awaits its answer."""
        for player in self.homed():
            self._sessions[player] = replace(self._sessions[player], checked=True)
        self._unchecked, self._checking = False, True
        return [CheckKeys()]

    def _checked(self, _: KeysChecked) -> list[Effect]:
        self._checking = False
        if self.standing is Standing.IN_DOUBT and not self._unchecked:
            self.standing = Standing.DRAINING if self._leaving else Standing.SERVING
            return self._out_of_doubt()
        return []

    def _out_of_doubt(self) -> list[Effect]:
        """The hand-overs asked, and the resumes come, while in doubt, answered now that
        what is still homed here is known (`SessionKept` let the others' go)."""
        asked, self._asked = self._asked, []
        return [effect for event in asked for effect in self.handle(event)]

    def _lost(self, _: RedisLost) -> list[Effect]:
        if self.standing is Standing.SERVING:
            self.standing = Standing.CUT_OFF
        elif self.standing is Standing.IN_DOUBT:  # stays so: the return checks again
            self._unchecked = True
        return []

    def _back(self, _: RedisBack) -> list[Effect]:
        # Back, maybe empty, maybe after a lease: in doubt until every key is checked.
        if self.standing is Standing.CUT_OFF:
            self.standing = Standing.IN_DOUBT
        return self._check()

    def _woke(self, event: Woke) -> list[Effect]:
        if event.gap > event.lease and self.standing in (
                Standing.SERVING, Standing.CUT_OFF, Standing.DRAINING, Standing.IN_DOUBT):
            # (Redis may have come back meanwhile, empty, and gone again unseen)
            self.standing = Standing.IN_DOUBT  # the next beat tells (`LeaseLapsed`)
            self._unchecked = True  # (a check under way as it was paused answers nothing)
        return []

    def _gone(self, _: ProcessGone) -> list[Effect]:
        return [] if self._leaving or self.standing in _LEAVING else [Sweep()]

    def _stopped(self, _: Stopped) -> list[Effect]:
        self.standing = Standing.STOPPED
        return []

    # tables

    def _listed(self, event: JournalListed) -> list[Effect]:
        unheld = sorted(event.tables - self._tables.keys())
        if self.standing not in _CLAIMS:
            leaving = self._leaving or self.standing in _LEAVING
            return [ClaimLater()] if unheld and not leaving else []
        claims: list[Effect] = []
        for table_id in unheld:
            self._tables[table_id] = TableHold(Hold.CLAIMING)
            claims.append(Claim(table_id))
        return claims

    def _claimed(self, event: ClaimAnswered) -> list[Effect]:
        held = self._tables.get(event.table)
        if held is None or held.state is not Hold.CLAIMING:
            return []
        if not event.won:
            del self._tables[event.table]
            return []
        self._tables[event.table] = TableHold(Hold.FENCING)
        return [CountHolder(event.table)]

    def _counted(self, event: HolderCounted) -> list[Effect]:
        held = self._tables.get(event.table)
        if held is None or held.state is not Hold.FENCING:
            return []
        if event.token is None:
            del self._tables[event.table]
            return [ForgetTable(event.table)]
        self._tables[event.table] = TableHold(Hold.HELD, event.token)
        return [OpenJournal(event.table, event.token)]

    def _swept(self, _: SweepEnded) -> list[Effect]:
        for table_id in self.tables(Hold.CLAIMING, Hold.FENCING):
            del self._tables[table_id]
        return []

    def _failed(self, event: RestoreFailed) -> list[Effect]:
        if self._tables.pop(event.table, None) is None:
            return []
        return [LetGo(event.table)]

    def _opened(self, event: TableOpened) -> list[Effect]:
        self._tables[event.table] = TableHold(Hold.HELD, 0)
        return []

    def _closed(self, event: TableClosed) -> list[Effect]:
        held = self._tables.pop(event.table, None)
        if held is not None and held.state is Hold.DISPUTED:
            return []  # (another process's keys: it holds the table now)
        return [ReleaseKeys(event.table)]  # (deleted only while they name this process)

    def _hold_answered(self, event: HoldAnswered) -> list[Effect]:
        held = self._tables.get(event.table)
        if event.holder is None:
            return []
        if held is None:
            return [StopRenewing(event.table)]  # (not held here: never renewed from here)
        if held.state not in (Hold.HELD, Hold.FENCING):
            return []
        # (one being counted on never opens here: `HolderCounted` finds it disputed)
        self._tables[event.table] = TableHold(Hold.DISPUTED, held.token)
        return [StopRenewing(event.table)]

    def _refused(self, event: WritesRefused) -> list[Effect]:
        for table_id in event.tables:
            self._tables.pop(table_id, None)
        return [LetGo(table_id) for table_id in sorted(event.tables)]

    # sessions

    def _session_opened(self, event: SessionOpened) -> list[Effect]:
        if not self.homes(event.player):
            self._sessions[event.player] = SessionHome(Home.HOME)
        return []

    def _forgotten(self, event: SessionForgotten) -> list[Effect]:
        home = self._sessions.get(event.player)
        if home is not None and home.state is Home.HOME:
            del self._sessions[event.player]
        return []

    def _written(self, event: SessionWritten) -> list[Effect]:
        home = self._sessions.get(event.player)
        if home is not None and home.state is Home.HOME:
            self._sessions[event.player] = replace(home, checked=True)
        return []

    def _kept(self, event: SessionKept) -> list[Effect]:
        if not self.homes(event.player) or not self._sessions[event.player].checked:
            return []  # (gone from here since it was asked about, maybe come back)
        if event.holder is None:  # written: its record is this process's from now on
            self._sessions[event.player] = SessionHome(Home.HOME)
            return []
        if event.holder == self._sessions[event.player].since:
            # Handed here, its record not written yet: the one the old home let go of.
            return [RewriteSession(event.player, event.holder)]
        del self._sessions[event.player]
        return [Disown(event.player)]

    def _resume(self, event: ResumeArrived) -> list[Effect]:
        if self.standing is Standing.IN_DOUBT and self.homes(event.player):
            self._asked.append(event)  # (another may have taken it over: `SessionKept`)
            return []
        if self.homes(event.player):
            return [Welcome(event.player)]
        if self.standing not in _ADOPTS or self._handing:
            return [RefuseResume(event.player)]
        if event.holder is not None:
            self._sessions[event.player] = SessionHome(Home.ASKING, event.holder)
            return [AskHand(event.player, event.holder)]
        if event.gone:
            self._sessions[event.player] = SessionHome(Home.TAKING)
            return [TakeSession(event.player)]
        return [RefuseResume(event.player)]

    def _hand_answered(self, event: HandAnswered) -> list[Effect]:
        home = self._sessions.get(event.player)
        if home is None or home.state is not Home.ASKING:
            return []
        if event.ok:
            self._sessions[event.player] = SessionHome(Home.HOME, since=self._unwritten(home.to))
            return [Welcome(event.player)]
        if event.to is not None and event.to != home.to:
            self._sessions[event.player] = SessionHome(Home.ASKING, event.to)
            return [AskHand(event.player, event.to)]
        del self._sessions[event.player]
        return [RefuseResume(event.player)]

    def _taken(self, event: SessionTaken) -> list[Effect]:
        home = self._sessions.get(event.player)
        if home is None or home.state is not Home.TAKING:
            return []
        if event.won:
            self._sessions[event.player] = SessionHome(Home.HOME)
            return [Welcome(event.player)]
        del self._sessions[event.player]
        return [RefuseResume(event.player)]

    def _hand_asked(self, event: HandAsked) -> list[Effect]:
        if self.standing is Standing.IN_DOUBT:
            # Another process may have taken the session over while this one was taken
            # for dead: handing it on now would give it a second home.
            self._asked.append(event)
            return []
        home = self._sessions.get(event.player)
        if home is not None and home.state is Home.HOME and event.by != "":
            self._sessions[event.player] = SessionHome(Home.HANDED, event.by)
            return [HandOver(event.player, event.by)]
        if home is not None and home.state is Home.HANDED and home.to == event.by:
            return [HandOver(event.player, event.by)]  # (its answer was lost: again)
        if home is not None and home.state is Home.HANDED and home.to is not None:
            return [SendOn(event.player, event.by, home.to)]
        return [RefuseHand(event.player, event.by)]

    def _hand_forgotten(self, event: HandForgotten) -> list[Effect]:
        if self.handed_to(event.player) == event.to:
            del self._sessions[event.player]
        return []

    def _draining(self, _: Draining) -> list[Effect]:
        self._leaving = True
        if self.standing is not Standing.IN_DOUBT:
            self.standing = Standing.DRAINING
        return []

    def _drain(self, event: DrainStarted) -> list[Effect]:
        self._draining(Draining())
        self._handing = True
        homed = {player: event.tables.get(player) for player in self.homed()}
        targets = hand_targets(homed, _others(event.live))
        handed: list[Effect] = []
        for player, target in sorted(targets.items()):
            self._sessions[player] = SessionHome(Home.HANDED, target)
            handed.append(HandSession(player, target))
        return handed

    def _adopt(self, event: AdoptAsked) -> list[Effect]:
        if self.standing not in _ADOPTS or self._handing or self.homes(event.player):
            return [RefuseAdopt(event.player, event.by)]
        # Its record is written only while it names `by` (or nobody alive): the
        # hand-over may be read late, after another process rebuilt the session.
        self._sessions[event.player] = SessionHome(Home.HOME, since=event.by)
        return [AcceptAdopt(event.player, event.by)]

    def _rebuilt_elsewhere(self, event: RebuiltElsewhere) -> list[Effect]:
        # `by` won the session in Redis, which gives one only while no live process
        # holds it: a copy homed here (restored by a takeover here, its record written
        # over since by a process that died next) is not this process's, even in doubt.
        if not self.homes(event.player):
            return []  # (not here, or on its way: the answer it waits for tells)
        del self._sessions[event.player]
        return [YieldSession(event.player, event.by)]

    def _unwritten(self, old_home: str | None) -> str | None:
        """The old home of a session welcomed here, while its record cannot be written
        (Redis away): the record still names it when Redis is back."""
        return old_home if self.standing is Standing.CUT_OFF else None


def _others(live: Sequence[str]) -> list[str]:
    return sorted(set(live))


_HANDLERS: dict[type, Callable[[Holdings, Any], list[Effect]]] = {
    Joined: Holdings._joined,
    LeaseRenewed: Holdings._renewed,
    LeaseLapsed: Holdings._lapsed,
    KeysChecked: Holdings._checked,
    RedisLost: Holdings._lost,
    RedisBack: Holdings._back,
    Woke: Holdings._woke,
    ProcessGone: Holdings._gone,
    Stopped: Holdings._stopped,
    JournalListed: Holdings._listed,
    ClaimAnswered: Holdings._claimed,
    HolderCounted: Holdings._counted,
    SweepEnded: Holdings._swept,
    RestoreFailed: Holdings._failed,
    TableOpened: Holdings._opened,
    TableClosed: Holdings._closed,
    HoldAnswered: Holdings._hold_answered,
    WritesRefused: Holdings._refused,
    SessionOpened: Holdings._session_opened,
    SessionForgotten: Holdings._forgotten,
    SessionWritten: Holdings._written,
    SessionKept: Holdings._kept,
    ResumeArrived: Holdings._resume,
    HandAnswered: Holdings._hand_answered,
    SessionTaken: Holdings._taken,
    HandAsked: Holdings._hand_asked,
    HandForgotten: Holdings._hand_forgotten,
    Draining: Holdings._draining,
    DrainStarted: Holdings._drain,
    AdoptAsked: Holdings._adopt,
    RebuiltElsewhere: Holdings._rebuilt_elsewhere,
}
