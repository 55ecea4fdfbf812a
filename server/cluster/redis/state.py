"""What a process of the cluster holds and knows (`ClusterState`), and what each part
of it uses: the keys' names, another process's label, a pause seen as it ends, and a
command's failure said as what it is (an outage, or a defect)."""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Container, Mapping
from typing import Any, Concatenate, ParamSpec, TypeVar

import txredisapi
from twisted.internet.defer import Deferred, FirstError, fail, succeed
from twisted.internet.task import LoopingCall
from twisted.logger import Logger
from twisted.python.failure import Failure

from pisyedili.server.cluster.base import ClusterAddress, unavailable
from pisyedili.server.cluster.holdings import Effect, Holdings, Woke
from pisyedili.server.cluster.ownership import DeathWatch
from pisyedili.server.cluster.redis.scripts import PREFIX
from pisyedili.server.interproc.messages import VERSION

log = Logger(namespace="pisyedili.server.cluster.redis")  # (one namespace for the cluster)

LEASE_SECONDS = 15.0
"""How long a live key outlives its process's last renewal (by default): the time
the others take to see that a process is gone."""

TICK_SECONDS = 1.0
"""How often the reactor's clock is read to see whether this process was paused: a
tick that comes much later than this was held up by a SIGSTOP, a debugger, or a
machine too starved to run the process."""

PAUSE_SECONDS = 4.0
"""A gap between two ticks longer than this (or than most of the lease, if shorter:
shorter than a Redis reply's timeout, so that every pause that makes one overdue is
seen) is a pause: said once, and the Redis replies it made overdue are its
consequence, not a lost Redis."""


Heard = Callable[[dict[str, Any]], None]
P = ParamSpec("P")
S = TypeVar("S", bound="ClusterState")


def labelled(name: str, address: str) -> str:
    """A process's name and where it serves: "web1 at host:7711", or "host:7711"."""
    return address if name in ("", address) else f"{name} at {address}"


def by_value(held: Mapping[str, str],
             live: Container[str] | None = None) -> dict[str, list[str]]:
    """Keys held here grouped by their value (a name's keys by player, invite codes by
    table), each group in key order; with `live`, only the keys in it."""
    grouped: dict[str, list[str]] = {}
    for key, value in sorted(held.items()):
        if live is None or key in live:
            grouped.setdefault(value, []).append(key)
    return grouped


def once_joined(tell: Callable[Concatenate[S, P], None]
                ) -> Callable[Concatenate[S, P], None]:
    """A write that tells the others, made before the process joined (a restart
    rebuilds its tables and sessions first): kept, and made once it has."""

    def told(self: S, /, *args: P.args, **kwargs: P.kwargs) -> None:
        if not self._joined:
            self._before.append(functools.partial(tell, self, *args, **kwargs))
        else:
            tell(self, *args, **kwargs)

    return told


class ClusterState:
    """A process's part of the cluster: what it holds, with what each key says (written
    again when Redis comes back), what it knows of the others, and the state of its
    links. The layers above (`Reassertion`, `Registries`, `RedisCluster`) act on it."""

    def __init__(self, address: ClusterAddress, clock: Any,
                 lease: float = LEASE_SECONDS) -> None:
        self.address = address
        self.lease = lease
        self._clock = clock
        self._redis: Any = None
        self._process = ""
        # What the operator calls this process (`named`): its number changes on every
        # start, its name and address do not; the others' are read as a log needs them.
        self._name = self._address = ""
        self._started = 0.0  # when it joined (`status` tells its uptime)
        self._draining = False  # stopping, still serving (`status` says so)
        self._labels: dict[str, str] = {}
        self._live: set[str] = set()  # keys renewed with the lease
        self._counts: dict[str, int] = {}  # this process's connections by address
        self._beat: LoopingCall | None = None
        self._rows: dict[int, dict[str, Any]] = {}  # other processes' tables
        self._owners: dict[int, str] = {}
        self._on_lobby: Heard | None = None
        self._on_message: Heard | None = None
        self._on_gone: Callable[[str], None] | None = None
        self._watched: set[str] = set()  # processes whose end matters here
        self._deaths = DeathWatch()  # those of them whose subscription went (`_probe`)
        self._dead: set[str] = set()  # told gone here (by its lease, its word, or a probe)
        self._reprobe: Any = None  # the suspects' next probe (IDelayedCall)
        self._listener: Any = None
        self._subscribed: Deferred[None] | None = None
        self._before: list[Callable[[], None]] = []  # writes made before joining
        # What this process holds, with what it says: written again after an outage.
        self._tables: dict[int, str | None] = {}  # held here: id -> its row's JSON
        self._sessions: dict[str, dict[str, str]] = {}  # session key -> its fields
        self._names: dict[str, str] = {}  # name key -> the player holding it
        self._codes: dict[str, str] = {}  # code key -> its table id
        self._away: dict[str, float] = {}  # a dropped session's keys -> when they end
        self._highest: dict[str, int] = {}  # the highest id of each kind seen here
        self._read_ids: Callable[[], Deferred[dict[str, int]]] | None = None  # the store's
        self._counting: list[Deferred[None]] | None = None  # a read of them under way: waiters
        self._uncounted: set[str] = set()  # addresses whose last connection went meanwhile
        # Who holds what: this process's standing, its tables with their fencing tokens,
        # its sessions (`holdings.py`: every decision about them is taken there). A table
        # another process took over while this one was taken for dead is `disputed`:
        # nothing is written to it from here, though a copy lingers here for now.
        self.holdings = Holdings()
        self._disowned: set[str] = set()  # session and name keys, until their session goes
        self._checks: dict[str, int] = {}  # session key -> its checks (`_reassert`) under way
        self._left: set[str] = set()  # of those, the keys whose session left here since
        self._disowned_hooks: list[Callable[[str, bytes, str], None]] = []
        self._doubt_ends: list[Deferred[None]] = []  # `out_of_doubt`, not fired yet
        self._carriers: list[Callable[[Effect], None]] = []  # `watch_holdings`
        self._leased = False  # this process's lease was written once (it may run out since)
        self._renewed_at = 0.0  # when the lease last answered it was still ours
        # The links' life.
        self._joined = self._up = self._stopping = False
        self._ready = {"link": False, "listener": False}
        self._lost_at = 0.0
        self._judge_from = 0.0  # the others' liveness is judged again from then
        self._link_hooks: list[tuple[Callable[[], None], Callable[[], None]]] = []
        # Pauses of this process (`_ticked`).
        self._tick: LoopingCall | None = None
        self._ticked_at = 0.0  # the reactor's clock at the last tick
        self._woke_at: float | None = None  # when a pause was last seen to end
        self._reply_timeout = min(10.0, lease)  # a reply later than this drops the link
        self._overdue_said = False  # a reply overdue was said since the link was made

    @property
    def process(self) -> str:
        return self._process

    @property
    def reachable(self) -> bool:
        return self._up

    @property
    def lease_in_doubt(self) -> bool:
        return self._leased and self._clock.seconds() - self._renewed_at > self.lease

    def watch_link(self, lost: Callable[[], None], back: Callable[[], None]) -> None:
        self._link_hooks.append((lost, back))

    def watch_sessions(self, disowned: Callable[[str, bytes, str], None]) -> None:
        self._disowned_hooks.append(disowned)

    def watch_holdings(self, carry: Callable[[Effect], None]) -> None:
        self._carriers.append(carry)

    def _carry(self, effects: list[Effect]) -> None:
        """What `holdings` decided about sessions in answer to the cluster's own events,
        for the relay to carry out."""
        for effect in effects:
            for carry in self._carriers:
                carry(effect)

    def out_of_doubt(self) -> Deferred[None]:
        if not self.lease_in_doubt:
            return succeed(None)
        ends: Deferred[None] = Deferred()
        self._doubt_ends.append(ends)
        return ends

    def _sure(self) -> None:
        """The lease renewed, or the keys checked: whoever waited for that goes on."""
        self._renewed_at = self._clock.seconds()
        waiting, self._doubt_ends = self._doubt_ends, []
        for ends in waiting:
            if not ends.called:  # (one cancelled: its waiter gave up)
                ends.callback(None)

    def _key(self, *parts: object) -> str:
        return PREFIX + ":".join(str(p) for p in parts)

    def _channel(self, name: str) -> str:
        return f"{PREFIX}{self.address.db}:{name}"

    def _seen(self, kind: str, number: int) -> None:
        if number > self._highest.get(kind, 0):
            self._highest[kind] = number

    def _pexpire(self, key: str, ms: int) -> Deferred[Any]:
        d: Deferred[Any] = self._redis.link.execute_command("PEXPIRE", key, ms)
        return d

    def _just_woke(self) -> bool:
        """Whether this process is waking from a pause (the last tick is long past, or
        a pause ended within a tick): said once, as the first thing that notices it,
        a tick or a Redis reply it made overdue, finds it."""
        now = self._clock.seconds()
        gap = now - self._ticked_at
        if self._tick is not None and gap > min(PAUSE_SECONDS, 0.8 * self.lease):
            self._ticked_at, self._woke_at = now, now
            self.holdings.handle(Woke(gap, self.lease))
            log.warn("this process was paused for {seconds:.1f} s (SIGSTOP, a debugger, "
                     "or a starved machine): Redis replies it could not read meanwhile "
                     "are overdue, and its link to Redis may be made again; the others "
                     "may have taken it for gone", seconds=gap)
        return self._woke_at is not None and now - self._woke_at <= TICK_SECONDS

    def _write_name(self, redis: Any) -> Deferred[Any]:
        """One field of a hash, never expired: the others name a process that is gone
        too (one short field a start; `DEL pisyedili:names` only makes older processes
        unnamed in the logs). With when it started, and whether it drains, for
        `pisyedili-server status`, and the version of the messages it writes to the
        others (`interproc.messages.VERSION`), for an upgrade."""
        told = json.dumps({"name": self._name, "address": self._address,
                           "started": self._started, "draining": self._draining,
                           "messages": VERSION})
        written: Deferred[Any] = redis.hset(self._key("names"), self._process, told)
        return written

    def _label(self, process: str) -> Deferred[str]:
        """`process` as a log line names it: its number, its name and its address
        (read from Redis once; "unnamed" if it never said, or Redis lost it)."""
        known = self._labels.get(process)
        if known is not None or self._redis is None or not self._up:
            return succeed(f"{process} ({known or 'unnamed'})")
        asked: Deferred[Any] = self._redis.link.hget(self._key("names"), process)

        def read(told: object) -> str:
            if isinstance(told, bytes):
                told = told.decode("utf-8", "replace")
            if isinstance(told, str):
                fields = json.loads(told)
                self._labels[process] = labelled(str(fields.get("name", "")),
                                                  str(fields.get("address", "")))
            return f"{process} ({self._labels.get(process, 'unnamed')})"

        asked.addCallback(read)
        asked.addErrback(lambda _: f"{process} (unnamed)")
        return asked

    def _failed(self, failure: Failure, what: str) -> None:
        """A command that failed. Redis out of reach is an outage, said once where it is
        noticed (`_link_down`, `_just_woke`), and a reply overdue drops the link (said
        once); anything else is a defect: its traceback."""
        if self._unreached(failure):
            if self._just_woke():  # (a reply overdue only because nobody read it)
                log.warn("cluster: {what}: no reply read in time, as this process was "
                         "paused", what=what)
                return
            if not self._up:
                return  # Redis went away: said once, where it was noticed
            if isinstance(self._unwrapped(failure).value, txredisapi.TimeoutError):
                if not self._overdue_said:
                    self._overdue_said = True
                    log.warn("cluster: {what}: Redis at {address} did not answer within "
                             "{seconds:g} s: its link is dropped and made again", what=what,
                             address=str(self.address), seconds=self._reply_timeout)
                return
        log.failure("cluster: {what} failed", self._unwrapped(failure), what=what)

    @staticmethod
    def _unwrapped(failure: Failure) -> Failure:
        """The failure itself, not the `FirstError` of several commands sent together
        (`gatherResults`) that wraps it."""
        while isinstance(failure.value, FirstError):
            failure = failure.value.subFailure
        return failure

    def _unreached(self, failure: Failure) -> bool:
        """Whether `failure` says Redis was out of reach (the link lost, or a reply
        overdue)."""
        return isinstance(self._unwrapped(failure).value, txredisapi.ConnectionError)

    def _tell(self, d: Deferred[Any], what: str) -> None:
        d.addErrback(self._failed, what)

    def _ask(self, what: str, asking: Callable[[], Deferred[Any]]) -> Deferred[Any]:
        """An answer that decides: refused at once while Redis is out of reach, and
        refused the same way if the link drops before it comes."""
        if not self._up:
            return fail(unavailable(what))

        def unreachable(failure: Failure) -> Failure:
            if isinstance(failure.value, txredisapi.ConnectionError):
                raise unavailable(what)
            return failure

        d = asking()
        d.addErrback(unreachable)
        return d

    # Defined in `cluster.py` (what the others say), called from below it.

    def _alive(self, alive: object, process: str) -> None:
        raise NotImplementedError

    def _lobby_heard(self, delta: dict[str, Any]) -> None:
        raise NotImplementedError

    def publish_lobby(self, delta: dict[str, Any]) -> None:
        raise NotImplementedError
