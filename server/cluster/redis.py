"""The cluster's shared state in Redis, through txredisapi on the reactor.

txredisapi speaks Redis on the reactor itself: a claim in a `hello` is one more
Deferred in the flow the handlers already have (`Connection.wait_for`), with no
thread to hand results back from, and pub/sub (the next step: requests and updates
between processes) is a protocol on the same reactor. redis-py would need a thread
per blocking subscriber and a hop back to the reactor for every answer.

Keys (all under `pisyedili:`), each with a TTL, so a process that dies leaves
nothing behind for longer than its lease (`--cluster-lease`) or a session's grace:

- `ids:player`, `ids:table`, `ids:process`: counters (INCR);
- `process:P`: this process is alive (its lease, renewed three times a lease);
- `name:KEY`: the player id holding a name key (`names.keys`, SET NX-like, all or none);
- `session:HASH`: a hash (player, name, process) by the token's hash;
- `code:CODE`: the table id of an invite code (SET NX; the process that takes the
  table over holds it from then on, `KEEP_CODE`);
- `table:ID`: a hash, the lobby row (`summary`, JSON) and its `process`;
- `conns:ADDRESS`: a hash, connections from that address by process;
- `tables`: the set of open table ids (a row that expired is dropped from it on read).

Channels (per database): `DB:lobby` carries every table's lobby deltas to every
process (and, op `tell`, a message for all of them: an account registered, a kick's
word to its table); `DB:to:P` the messages for process P (requests to its tables,
updates for its players, an operator's act asked of it and its answer). Payloads are
msgpack. Each process publishes on one link,
so what it publishes arrives in that order.

A connected session's keys and this process's tables and counts are live: renewed
with the lease. A dropped session's keys get its grace as their TTL instead.

Redis may go away (a restart, the network) and come back empty. Every key above is
also held here, in memory, with what it says: while Redis is out of reach the tables
held here play on, the answers that decide fail at once (`base.unavailable`) and
the writes that tell only update that memory; once both links are back, the whole of
it is written again in one go (ids only ever forward, each table and session only if
no other process took it over meanwhile: `HOLD`, `KEEP_SESSION`), before anything
else on the link. The other processes' liveness is judged again only a lease later,
once each of them had the time to write its own keys back. The counters also go on
above the ids the store holds (`count_from`): read before the process joins, and
again each time Redis is back, with no id handed out until that read is in.

A process whose lease ran out while its link stayed up (paused, a stopped VM, or
stalled for longer than a lease) may have been taken for dead: the beat that finds
its lease gone checks every key the same way before renewing any. What another
process holds now is let go here (no longer renewed, written or deleted: `_elsewhere`,
`_disowned`), and every delete, as a table closes or the process stops, is a
compare-and-delete (`CLOSE`, `DROP_SESSION`): a key goes only while it names this
process, so a woken process never deletes the keys of the one that took over.

A process that dies is seen before its lease runs out: its kernel closes its links to
Redis at once, and with them its subscription to its own channel. Every tick, each
process asks how many listen on the channels of the processes it cares about (those
whose tables it lists, or that it waits on: `watch`), and one publish that reached
nobody asks at once; a process found unsubscribed for a moment (`DeathWatch`) has its
lease deleted, if it is still unsubscribed then (`GONE`, in one step), and `gone` told
for it, as a process that stops tells it: the others take its tables over at once.
A paused process keeps its links, so it waits for its lease; a wrong guess is made
safe by the journal's fence, as a pause past the lease is.

A pause is seen as it ends: the reactor's clock, read once a second, jumped (`_ticked`).
It is said once, and what it made overdue (Redis replies that came while nobody read
them, and the link their timeout drops) is said as its consequence, with no traceback
and no word of a lost Redis, which never went away.
"""

from __future__ import annotations

import functools
import json
from collections.abc import Callable, Container, Mapping
from typing import Any, Concatenate, ParamSpec

import msgpack
import txredisapi
from twisted.internet.defer import Deferred, FirstError, fail, gatherResults, succeed
from twisted.internet.endpoints import HostnameEndpoint
from twisted.internet.task import LoopingCall
from twisted.logger import Logger
from twisted.python.failure import Failure

from pisyedili.server import metrics
from pisyedili.server.cluster.base import ClusterAddress, unavailable
from pisyedili.server.cluster.ownership import DeathWatch
from pisyedili.server.interproc.messages import VERSION, encode

log = Logger()

PREFIX = "pisyedili:"
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

CLAIM = """
for i, key in ipairs(KEYS) do
  local holder = redis.call('GET', key)
  if holder and holder ~= ARGV[1] then return 0 end
end
for i, key in ipairs(KEYS) do redis.call('SET', key, ARGV[1], 'PX', ARGV[2]) end
return 1
"""
"""Every key of a name for one player, or none."""

RELEASE = """
for i, key in ipairs(KEYS) do
  if redis.call('GET', key) == ARGV[1] then redis.call('DEL', key) end
end
return 1
"""
"""A player's keys go; another's (claimed since they expired) stay."""

COUNT = """
redis.call('HINCRBY', KEYS[1], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
local total = 0
local fields = redis.call('HGETALL', KEYS[1])
for i = 1, #fields, 2 do
  if fields[i] == ARGV[1] or redis.call('EXISTS', ARGV[4] .. fields[i]) == 1 then
    total = total + tonumber(fields[i + 1])
  else
    redis.call('HDEL', KEYS[1], fields[i])
  end
end
return total
"""
"""One address's connections over the processes still alive (a dead one's are dropped)."""


TAKE = """
local holder = redis.call('HGET', KEYS[1], 'process')
if holder and holder ~= ARGV[1] and redis.call('EXISTS', ARGV[3] .. holder) == 1 then
  return holder
end
redis.call('HSET', KEYS[1], 'process', ARGV[1])
if ARGV[5] then redis.call('HSET', KEYS[1], 'summary', ARGV[5]) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[4])
return 1
"""
"""A table whose holder's lease ran out (or that none holds) for this process (and
its lobby row, when one is given): the table's lease is its `table:ID` key, renewed
with the process's own. Refused, it names the live process that holds it."""

FORWARD = """
local now = tonumber(redis.call('GET', KEYS[1]) or '0')
if now < tonumber(ARGV[1]) then redis.call('SET', KEYS[1], ARGV[1]) end
return 1
"""
"""A counter set to at least a value: a Redis that restarted empty hands out no id
this process has seen."""

KEEP = """
redis.call('HSET', KEYS[1], unpack(ARGV, 2))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
"""
"""A hash's fields written and given its TTL, at once."""

RENEW = """
for _, key in ipairs(KEYS) do redis.call('PEXPIRE', key, ARGV[1]) end
return #KEYS
"""
"""Many keys' TTL renewed in one command: a beat of a process holding thousands of
sessions is a few replies to read, not one a key (which stalled its tables' moves)."""

RENEW_CHUNK = 500
"""Keys a `RENEW` takes: Redis runs a script alone, so a long one would hold up the
other processes' commands."""

HOLDER = """
local holder = redis.call('HGET', KEYS[1], 'process')
if holder and redis.call('EXISTS', ARGV[1] .. holder) == 1 then return holder end
return false
"""
"""The process holding a session, if its lease is alive."""

TAKE_SESSION = """
local holder = redis.call('HGET', KEYS[1], 'process')
if holder and holder ~= ARGV[1] and redis.call('EXISTS', ARGV[3] .. holder) == 1 then
  return 0
end
redis.call('HSET', KEYS[1], 'player', ARGV[4], 'name', ARGV[5], 'process', ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return 1
"""
"""A session whose holder's lease ran out (or that none holds) for this process."""

LEASE = """
local held = redis.call('EXISTS', KEYS[1])
redis.call('SET', KEYS[1], '1', 'PX', ARGV[1])
return held
"""
"""This process's lease renewed; 0 if it had run out (the process was paused, or
stalled, for longer than a lease): the others may have taken it for dead since."""

HOLD = """
local holder = redis.call('HGET', KEYS[1], 'process')
if holder and holder ~= ARGV[1] then return holder end
redis.call('HSET', KEYS[1], 'process', ARGV[1])
if ARGV[4] then redis.call('HSET', KEYS[1], 'summary', ARGV[4]) end
redis.call('PEXPIRE', KEYS[1], ARGV[2])
redis.call('SADD', KEYS[2], ARGV[3])
return 1
"""
"""A table of this process written (with its lobby row, when one is given) unless
another process holds it now, alive or not: that one took it over while this one was
taken for dead, and the journal's fence, which is that one's now, lets this one's copy
go at its next write. Refused, it names the holder. (`TAKE` is for a table nobody
holds alive; this is for one this process already holds.)"""

KEEP_SESSION = """
local holder = redis.call('HGET', KEYS[1], 'process')
if holder and holder ~= ARGV[2] and redis.call('EXISTS', ARGV[3] .. holder) == 1 then
  return holder
end
redis.call('HSET', KEYS[1], unpack(ARGV, 4))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1
"""
"""A session of this process written again, unless another live process holds it now
(it took the session over while this one was taken for dead): refused, it names it."""

CLOSE = """
local holder = redis.call('HGET', KEYS[1], 'process')
if holder and holder ~= ARGV[1] then return holder end
redis.call('DEL', KEYS[1])
redis.call('SREM', KEYS[2], ARGV[2])
if KEYS[3] and redis.call('GET', KEYS[3]) == ARGV[2] then redis.call('DEL', KEYS[3]) end
return 1
"""
"""A table's keys deleted (its lease, its place in the list, its invite code) only
while its `process` is still this one: a process taken for dead that closes or lets go
of its copy must not delete the lease of the process that took the table over."""

KEEP_CODE = """
local held = redis.call('GET', KEYS[1])
if held and held ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1
"""
"""The invite code of a table this process took over, written for it unless another
table holds the code (claimed since the old holder's key ran out): that key, if it is
still alive, names this same table and is this process's to renew from now on."""

DROP_SESSION = """
local holder = redis.call('HGET', KEYS[1], 'process')
if holder and holder ~= ARGV[1] then return 0 end
redis.call('DEL', KEYS[1])
for i = 2, #KEYS do
  if redis.call('GET', KEYS[i]) == ARGV[2] then redis.call('DEL', KEYS[i]) end
end
return 1
"""
"""A session's key deleted, and its name's keys (those still its player's), only while
its `process` is still this one: a process that took a table over restores its
members' sessions under the same player ids, so a name key's value alone cannot tell
whose it is now."""


GONE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local heard = redis.call('PUBSUB', 'NUMSUB', ARGV[1])
if tonumber(heard[2]) > 0 then return 0 end
redis.call('DEL', KEYS[1])
return 1
"""
"""A process's lease deleted if nobody listens on its channel now (its connections to
Redis closed: it died): 1; 0 if it listens again; -1 if its lease had gone already."""


def _ms(seconds: float) -> int:
    return max(1, int(seconds * 1000))


Heard = Callable[[dict[str, Any]], None]
P = ParamSpec("P")


def _labelled(name: str, address: str) -> str:
    """A process's name and where it serves: "web1 at host:7711", or "host:7711"."""
    return address if name in ("", address) else f"{name} at {address}"


def _by_value(held: Mapping[str, str],
              live: Container[str] | None = None) -> dict[str, list[str]]:
    """Keys held here grouped by their value (a name's keys by player, invite codes by
    table), each group in key order; with `live`, only the keys in it."""
    grouped: dict[str, list[str]] = {}
    for key, value in sorted(held.items()):
        if live is None or key in live:
            grouped.setdefault(value, []).append(key)
    return grouped


def _once_joined(tell: Callable[Concatenate[RedisCluster, P], None]
                 ) -> Callable[Concatenate[RedisCluster, P], None]:
    """A write that tells the others, made before the process joined (a restart
    rebuilds its tables and sessions first): kept, and made once it has."""

    def told(self: RedisCluster, /, *args: P.args, **kwargs: P.kwargs) -> None:
        if not self._joined:
            self._before.append(functools.partial(tell, self, *args, **kwargs))
        else:
            tell(self, *args, **kwargs)

    return told


class _NoDelay(txredisapi.RedisProtocol):  # type: ignore[misc]
    """The command link's protocol, with Nagle's algorithm off (as redis-py sets it): a publish is
    a small write that must leave at once, not wait for the previous one's ACK."""

    def connectionMade(self) -> Deferred[Any]:
        self.transport.setTcpNoDelay(True)
        made: Deferred[Any] = super().connectionMade()
        return made


class _Batched:
    """The command link, holding `send`'s messages to the end of the reactor turn:
    each run of messages to one process is published as one list (a step's frames for
    the members a process holds: one publish, one wake-up there, not one a frame; a
    process from before lists reads only the single ones, so a cluster is upgraded
    all at once).
    Any other command first publishes what is held, so the link still carries every
    message and command in the order it was made."""

    def __init__(self, link: Any, clock: Any, channel: Callable[[str], str],
                 failed: Callable[[Failure, str], None],
                 unheard: Callable[[str], None]) -> None:
        self.link = link
        self._clock = clock
        self._channel = channel
        self._failed = failed
        self._unheard = unheard
        self._held: list[tuple[str, list[dict[str, Any]]]] = []
        self._call: Any = None

    def hold(self, process: str, message: dict[str, Any]) -> None:
        if self._held and self._held[-1][0] == process:
            self._held[-1][1].append(message)
        else:
            self._held.append((process, [message]))
        if self._call is None:
            self._call = self._clock.callLater(0, self.flush)

    def flush(self) -> None:
        if self._call is not None:
            if self._call.active():
                self._call.cancel()
            self._call = None
        held, self._held = self._held, []
        for process, messages in held:
            payload = msgpack.packb(messages if len(messages) > 1 else messages[0],
                                    use_bin_type=True)  # one alone, unwrapped: `_heard` reads both
            d: Deferred[Any] = self.link.publish(self._channel(f"to:{process}"), payload)
            d.addCallback(self._heard_by, process)
            d.addErrback(self._failed, "a message to another process")

    def _heard_by(self, receivers: object, process: str) -> None:
        if receivers == 0:  # nobody listens there: it may be dead
            self._unheard(process)

    def __getattr__(self, name: str) -> Any:
        if self._held:
            self.flush()
        return getattr(self.link, name)


class _Listener(txredisapi.SubscriberProtocol):  # type: ignore[misc]
    """The subscribing link: (re)subscribes on every connect, hands on what it hears,
    and says when it is lost."""

    def connectionMade(self) -> Deferred[Any]:
        self.transport.setTcpNoDelay(True)
        made: Deferred[Any] = super().connectionMade()
        made.addCallback(lambda _: self.subscribe(self.factory.channels))
        made.addCallback(lambda _: self.factory.subscribed(self))
        made.addErrback(lambda _: None)  # lost meanwhile: `connectionLost` tells
        return made

    def connectionLost(self, why: Failure) -> None:
        super().connectionLost(why)
        self.factory.unsubscribed()

    def messageReceived(self, pattern: object, channel: bytes, message: bytes) -> None:
        self.factory.heard(channel, message)


class _Link(txredisapi.RedisFactory):  # type: ignore[misc]
    """The command link (one connection, reconnected with back-off): tells its
    cluster when its connection is ready and when it is gone."""

    protocol = _NoDelay
    noisy = False  # not a line a reconnection: the cluster says when a link goes and comes

    def __init__(self, cluster: RedisCluster, address: ClusterAddress,
                 reply_timeout: float) -> None:
        super().__init__(f"{address.host}:{address.port}", address.db, 1, True,
                         txredisapi.ConnectionHandler, "utf-8", None, reply_timeout, True)
        self.cluster = cluster
        self.deferred.addErrback(lambda _: None)  # nobody waits on it: `_link_up` tells

    def stopTrying(self) -> Deferred[Any]:
        """txredisapi gives up for good once a connection's SELECT is refused, as by a
        Redis still loading its data after a restart: this link tries again, with its
        back-off, unless its cluster is stopping."""
        if self.cluster._stopping:
            stopped: Deferred[Any] = super().stopTrying()
            return stopped
        log.warn("cluster: Redis at {address} refused a link for now (loading its "
                 "data?): trying again", address=str(self.cluster.address))
        return succeed(None)

    def addConnection(self, conn: Any) -> None:
        super().addConnection(conn)
        if conn in self.pool:
            self.cluster._link_up("link")

    def delConnection(self, conn: Any) -> None:
        super().delConnection(conn)
        self.cluster._link_down("link")


def _back_off(factory: Any, lease: float) -> None:
    """Reconnect within a third of a lease at most: back within a lease of the
    others, this process is not taken for gone by them."""
    factory.maxDelay = max(0.5, min(10.0, lease / 3))
    factory.initialDelay = min(factory.initialDelay, factory.maxDelay)
    factory.reconnect = True


class RedisCluster:
    """A `Cluster` whose shared state is one Redis database (module docstring)."""

    shared = True

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
        # What another process holds now (it took it over while this one was taken for
        # dead): nothing is written to it from here, though a copy lingers here for now.
        self._elsewhere: set[int] = set()  # tables, until this process takes one again
        self._disowned: set[str] = set()  # session and name keys, until their session goes
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

    def _key(self, *parts: object) -> str:
        return PREFIX + ":".join(str(p) for p in parts)

    # -- life -------------------------------------------------------------------------

    def start(self) -> Deferred[None]:
        return Deferred.fromCoroutine(self._start())

    async def _start(self) -> None:
        """A first link that does not retry names the process, so a cluster that
        cannot be reached fails the start; the links then reconnect on their own."""
        await self._store_ids()
        host, port, db = self.address.host, self.address.port, self.address.db
        first = await txredisapi.Connection(host, port, db, reconnect=False,
                                            connectTimeout=5, replyTimeout=10)
        try:
            number = await first.incr(self._key("ids", "process"))
        finally:
            await first.disconnect()
        self._process = f"p{number}"
        self._started = self._clock.seconds()
        self._seen("process", int(number))
        # One link: this process's writes reach Redis in the order they were made.
        link = _Link(self, self.address, self._reply_timeout)
        _back_off(link, self.lease)
        link.startConnecting(HostnameEndpoint(self._clock, host, port, timeout=5))
        self._redis = _Batched(link.handler, self._clock, self._channel, self._failed,
                               lambda process: self._probe([process]))
        await self._subscribe()
        await self._read_rows()
        self._joined = self._up = True
        if self._address:
            self._say_name()
        before, self._before = self._before, []
        for write in before:
            write()
        # A Redis that started empty: ids above the store's, before this process serves.
        forwarded: list[Deferred[Any]] = []
        self._forward_ids(forwarded)
        await gatherResults(forwarded, consumeErrors=True)
        self._live.add(self._key("process", self._process))
        self._beat = LoopingCall(self._renew)
        self._beat.clock = self._clock
        self._beat.start(self.lease / 3, now=True)
        self._tick = LoopingCall(self._ticked)
        self._tick.clock = self._clock
        self._ticked_at = self._clock.seconds()
        self._tick.start(TICK_SECONDS, now=True)
        log.info("joined the cluster at {address} as process {process}",
                 address=str(self.address), process=self._process)

    async def _store_ids(self) -> None:
        """The ids the store holds, for the counters to go on above (`count_from`): a
        process that cannot read them does not join, rather than hand out one again."""
        if self._read_ids is None:
            return
        try:
            highest = await self._read_ids()
        except Exception as e:
            raise RuntimeError(f"the ids kept in the store could not be read: {e}") from e
        self.seen_ids(highest)

    def _channel(self, name: str) -> str:
        return f"{PREFIX}{self.address.db}:{name}"

    async def _subscribe(self) -> None:
        factory = txredisapi.SubscriberFactory()
        factory.charset, factory.convertNumbers = None, False
        factory.noisy = False
        _back_off(factory, self.lease)
        factory.protocol = _Listener
        factory.channels = [self._channel("lobby"), self._channel(f"to:{self._process}")]
        factory.heard = self._heard
        factory.subscribed = self._now_subscribed
        factory.unsubscribed = lambda: self._link_down("listener")
        self._listener = factory
        self._subscribed = Deferred()
        factory.startConnecting(HostnameEndpoint(self._clock, self.address.host,
                                                 self.address.port, timeout=5))
        await self._subscribed

    def _now_subscribed(self, _: object) -> None:
        if self._subscribed is not None:
            subscribed, self._subscribed = self._subscribed, None
            subscribed.callback(None)
        self._link_up("listener")

    async def _read_rows(self) -> None:
        """The lobby rows of the tables open when this process joined (deltas come
        after: the subscription is already on)."""
        ids = await self._redis.smembers(self._key("tables"))
        for table_id in sorted(int(i) for i in ids):
            row = await self._redis.hgetall(self._key("table", table_id))
            if not row:
                self._redis.srem(self._key("tables"), [table_id])
            elif "summary" in row and row["process"] != self._process \
                    and table_id not in self._rows:  # (no summary: its `add` is to come)
                self._rows[table_id] = json.loads(row["summary"])
                self._owners[table_id] = row["process"]
                self._seen("table", table_id)

    # -- Redis away and back ------------------------------------------------------------

    # -- this process paused ----------------------------------------------------------

    def _ticked(self) -> None:
        """A tick of the reactor's clock: one much later than the last was a pause.
        And the processes whose end matters here: still subscribed?"""
        self._just_woke()
        self._ticked_at = self._clock.seconds()
        self._probe()

    # -- another process dead --------------------------------------------------------

    def _probe(self, processes: list[str] | None = None) -> None:
        """How many listen on the channels of `processes` (by default every process
        whose end matters here): not while Redis is out of reach, nor for a lease
        after it came back (the others make their links again)."""
        if self._redis is None or not self._up or self._stopping \
                or self._clock.seconds() < self._judge_from:
            return
        if processes is None:
            processes = sorted((set(self._owners.values()) | self._watched)
                               - {self._process})
        if not processes:
            return
        asked: Deferred[Any] = self._redis.execute_command(
            "PUBSUB", "NUMSUB", *(self._channel(f"to:{p}") for p in processes))
        asked.addCallback(self._probed, processes)
        self._tell(asked, "watching the other processes")

    def _probed(self, counts: list[Any], processes: list[str]) -> None:
        if self._redis is None or self._stopping:
            return
        listening = {p: int(counts[2 * i + 1]) for i, p in enumerate(processes)}
        verdict = self._deaths.probed(listening, self._clock.seconds())
        for process in verdict.dead:
            dead: Deferred[Any] = self._redis.eval(
                GONE, [self._key("process", process)], [self._channel(f"to:{process}")])
            dead.addCallback(self._declared, process)
            self._tell(dead, "taking a process for dead")
        if verdict.suspect and (self._reprobe is None or not self._reprobe.active()):
            self._reprobe = self._clock.callLater(self._deaths.settle, self._probe,
                                                  list(verdict.suspect))

    def _declared(self, done: object, process: str) -> None:
        """`GONE` answered: a process this one found dead is told gone to every
        process (this one too: it hears its own publish), as one that stops tells it;
        one whose lease had gone already is gone here at once."""
        if self._redis is None or self._stopping:
            return
        if done == -1:
            self._alive(False, process)
        elif done == 1:
            self._label(process).addCallback(lambda label: log.warn(
                "cluster: process {label} is taken for dead before its lease ran out: "
                "nobody listens on its channel (its links to Redis closed)",
                label=label, process=process))
            told = msgpack.packb({"op": "gone", "process": process}, use_bin_type=True)
            self._tell(self._redis.publish(self._channel("lobby"), told),
                       "telling a process is dead")

    def _just_woke(self) -> bool:
        """Whether this process is waking from a pause (the last tick is long past, or
        a pause ended within a tick): said once, as the first thing that notices it,
        a tick or a Redis reply it made overdue, finds it."""
        now = self._clock.seconds()
        gap = now - self._ticked_at
        if self._tick is not None and gap > min(PAUSE_SECONDS, 0.8 * self.lease):
            self._ticked_at, self._woke_at = now, now
            log.warn("this process was paused for {seconds:.1f} s (SIGSTOP, a debugger, "
                     "or a starved machine): Redis replies it could not read meanwhile "
                     "are overdue, and its link to Redis may be made again; the others "
                     "may have taken it for gone", seconds=gap)
        return self._woke_at is not None and now - self._woke_at <= TICK_SECONDS

    # -- Redis away and back ------------------------------------------------------------

    def _link_down(self, which: str) -> None:
        """A link dropped (Redis stopped, the network, a reply overdue): from now on
        the tables here play on and whatever needs the shared state waits."""
        self._ready[which] = False
        if not self._up or self._stopping:
            return
        self._up = False
        self._lost_at = self._clock.seconds()
        if self._just_woke():
            log.warn("cluster: the link to Redis at {address} was dropped, its replies "
                     "overdue after this process's pause: making it again; meanwhile "
                     "the {tables} tables held here play on, and what needs the cluster "
                     "waits (cluster_unavailable)", address=str(self.address),
                     tables=len(self._tables))
        else:
            log.critical(
                "lost the cluster's Redis at {address}: serving the {tables} tables held "
                "here to the players connected here; new tables, new players, joins to "
                "tables and resumes of sessions held elsewhere wait (cluster_unavailable) "
                "until it is back", address=str(self.address), tables=len(self._tables),
                connections=sum(self._counts.values()))
        for lost, _ in self._link_hooks:
            lost()

    def _link_up(self, which: str) -> None:
        """A link is back: once both are, everything this process holds is written
        again, then the others are told (through the hooks)."""
        self._ready[which] = True
        if not self._joined or self._up or self._stopping or not all(self._ready.values()):
            return
        self._up = True  # what follows goes on the link after the re-assertion
        self._overdue_said = False
        now = self._clock.seconds()
        self._judge_from = now + self.lease
        written = self._reassert(now)
        log.info("the cluster's Redis at {address} is back after {seconds:.1f} s: this "
                 "process's lease, {tables} tables, {sessions} sessions, {names} names, "
                 "{codes} invite codes and {addresses} addresses' connections written "
                 "again; ids go on above {ids}", address=str(self.address),
                 seconds=now - self._lost_at, tables=len(self._tables),
                 sessions=len(self._sessions), names=len(self._names),
                 codes=len(self._codes), addresses=len(self._counts),
                 ids=dict(sorted(self._highest.items())))
        written.addErrback(self._reassert_failed)
        self._count_again()
        for _, back in self._link_hooks:
            back()
        self._clock.callLater(self.lease, self._reread)

    def _ttl(self, key: str, now: float) -> int | None:
        """The TTL a key held here gets again: a lease if it is live, what is left of
        its grace if it is away, None if it has ended (it is forgotten here)."""
        if key in self._live:
            return _ms(self.lease)
        end = self._away.get(key)
        if end is not None and end > now:
            return _ms(end - now)
        self._away.pop(key, None)
        self._sessions.pop(key, None)
        self._names.pop(key, None)
        return None

    def _reassert(self, now: float) -> Deferred[Any]:
        """Every key this process holds, written again (a Redis that restarted empty
        lost them all), in one go on the link, before anything written after; but a
        table or a session that another process took over meanwhile (this one was taken
        for dead) is that one's: let go here (`_retaken`, `_rekept`), not written, and
        a session's name is claimed again only once the session is known to be ours.
        A table still ours has its lobby row told again: the others may have taken
        this process for gone meanwhile and dropped its rows from their lobbies."""
        redis, lease = self._redis, _ms(self.lease)
        written: list[Deferred[Any]] = [
            redis.set(self._key("process", self._process), "1", pexpire=lease)]
        if self._address:  # (a Redis restarted empty lost the names too)
            written.append(self._write_name(redis))
        self._forward_ids(written)
        for table_id, summary in sorted(self._tables.items()):
            written.append(self._hold(table_id, summary, retell=True))
        names = _by_value(self._names)
        for key, fields in list(self._sessions.items()):
            player_id = fields.get("player", "")
            held = names.pop(player_id, [])
            ttl = self._ttl(key, now)
            if ttl is not None:
                flat = [part for pair in sorted(fields.items()) for part in pair]
                kept: Deferred[Any] = redis.eval(
                    KEEP_SESSION, [key], [ttl, self._process, self._key("process", ""), *flat])
                kept.addCallback(self._rekept, key, player_id, held)
                written.append(kept)
        for player_id, held in sorted(names.items()):  # (names of no session here)
            written.append(self._reclaim(player_id, held))
        for key, table in sorted(self._codes.items()):
            written.append(redis.set(key, table, pexpire=lease))
        for address, count in sorted(self._counts.items()):
            written.append(redis.eval(KEEP, [self._key("conns", address)],
                                      [lease, self._process, count]))
        for address in sorted(self._uncounted - set(self._counts)):
            written.append(redis.hdel(self._key("conns", address), self._process))
        self._uncounted.clear()
        return gatherResults(written, consumeErrors=True)

    def _hold(self, table_id: int, summary: str | None, *,
              retell: bool = False) -> Deferred[Any]:
        """A table held here (and its lobby row) written, unless another process holds
        it now (`HOLD`); with `retell`, its row is told to the others again once held."""
        held: Deferred[Any] = self._redis.eval(
            HOLD, [self._key("table", table_id), self._key("tables")],
            [self._process, _ms(self.lease), table_id,
             *([summary] if summary is not None else [])])
        held.addCallback(self._retaken, table_id, retell)
        return held

    def _retaken(self, took: object, table_id: int, retell: bool) -> None:
        """`HOLD` decides: a table another process took while this one was taken for
        dead (cut off, or paused, for longer than its lease) is that one's; never two
        holders. Its keys are not renewed, written or deleted from here any more: the
        copy here lingers until the journal's fence lets it go (`table_lost`). A table
        still held here, to `retell`, has its row as it is now published (one that
        changed meanwhile was told already; the others take a row they hold as it is
        for no change)."""
        if took == 1:
            summary = self._tables.get(table_id)
            if retell and summary is not None:
                self.publish_lobby({"op": "add", "table": table_id,
                                    "summary": json.loads(summary)})
            return
        self._label(str(took)).addCallback(lambda holder: log.critical(
            "table {table} is held by process {holder} now (taken over while this "
            "process was taken for dead): this process lets it go", table=table_id,
            holder=holder, process=str(took)))
        self._elsewhere.add(table_id)
        self._tables.pop(table_id, None)
        self._live.discard(self._key("table", table_id))
        for key in [k for k, table in self._codes.items() if table == str(table_id)]:
            del self._codes[key]
            self._live.discard(key)

    def _rekept(self, kept: object, key: str, player_id: str,
                names: list[str]) -> Deferred[Any] | None:
        """`KEEP_SESSION` decides: a session another process took over while this one
        was taken for dead is that one's, its name's keys with it (the same player
        holds them there); this process's own session has its name claimed again."""
        if kept == 1:
            return self._reclaim(player_id, names)
        if self._sessions.get(key, {}).get("player") != player_id:
            return None  # gone from here meanwhile
        self._label(str(kept)).addCallback(lambda holder: log.warn(
            "cluster: the session of player {player} is held by process {holder} now "
            "(taken over while this process was taken for dead): this process lets its "
            "keys be", player=player_id, holder=holder, process=str(kept)))
        del self._sessions[key]
        for held in (key, *(k for k, p in self._names.items() if p == player_id)):
            self._live.discard(held)
            self._away.pop(held, None)
            self._names.pop(held, None)
            self._disowned.add(held)
        return None

    def _reclaim(self, player_id: str, names: list[str]) -> Deferred[Any]:
        """A player's name keys claimed again, those still held here, each for what is
        left of its life (`_ttl`)."""
        now = self._clock.seconds()
        claims: list[Deferred[Any]] = []
        if self._redis is None or not self._up:
            return succeed(None)  # stopped, or cut off, meanwhile: written again on return
        for key in names:
            ttl = self._ttl(key, now) if self._names.get(key) == player_id else None
            if ttl is not None:
                claimed: Deferred[Any] = self._redis.eval(CLAIM, [key], [player_id, ttl])
                claimed.addCallback(self._reclaimed, key, player_id)
                claims.append(claimed)
        return gatherResults(claims, consumeErrors=True)

    def _reclaimed(self, held: object, key: str, player_id: str) -> None:
        if not held:
            log.warn("cluster: name key {key} of player {player} was claimed by another "
                     "player while Redis was out of reach", key=key, player=player_id)
            self._names.pop(key, None)
            self._live.discard(key)

    def _seen(self, kind: str, number: int) -> None:
        if number > self._highest.get(kind, 0):
            self._highest[kind] = number

    def _forward_ids(self, written: list[Deferred[Any]] | None = None) -> None:
        """Each counter at least at the highest id of its kind seen here."""
        for kind, number in sorted(self._highest.items()):
            d: Deferred[Any] = self._redis.eval(FORWARD, [self._key("ids", kind)], [number])
            if written is None:
                self._tell(d, "moving the ids on")
            else:
                written.append(d)

    def _count_again(self) -> None:
        """Redis is back, maybe empty: the store's ids are read again, and no id is
        handed out until the counters are above them (a process that died meanwhile
        left its last ids in a shared store only). One read at a time: one under way
        moves the counters on once it lands, or at the next return of Redis."""
        if self._read_ids is None or self._counting is not None:
            return
        self._counting = []
        read = self._read_ids()
        read.addCallback(self._floored)
        read.addErrback(self._not_floored)
        read.addBoth(self._counted)

    def _floored(self, highest: Mapping[str, int]) -> Deferred[Any] | None:
        for kind, number in highest.items():
            self._seen(kind, number)
        if not self._up:
            return None  # the next return of Redis forwards them (`_reassert`)
        forwarded: list[Deferred[Any]] = []
        self._forward_ids(forwarded)
        return gatherResults(forwarded, consumeErrors=True)

    def _not_floored(self, failure: Failure) -> None:
        failure = self._unwrapped(failure)
        if self._unreached(failure) and not self._up:
            return  # (what was read is moved on as Redis comes back: `_reassert`)
        log.warn("the ids kept in the store could not be read again or moved on ({error}): "
                 "the ids go on above those this process knows",
                 error=failure.getErrorMessage())

    def _counted(self, _: object) -> None:
        waiting, self._counting = self._counting or [], None
        for waiter in waiting:
            waiter.callback(None)

    def _when_counted(self) -> Deferred[None]:
        """Fires once no read of the store's ids is under way (`_count_again`)."""
        if self._counting is None:
            return succeed(None)
        waiter: Deferred[None] = Deferred()
        self._counting.append(waiter)
        return waiter

    def _reread(self) -> None:
        """A lease after Redis came back, every live process wrote its tables again:
        the lobby rows of the others, read afresh (what changed meanwhile was told to
        nobody), and this lobby's subscribers told what changed."""
        if self._up and not self._stopping:
            reading: Deferred[None] = Deferred.fromCoroutine(self._reread_rows())
            self._tell(reading, "reading the lobby again")

    async def _reread_rows(self) -> None:
        found: dict[int, tuple[dict[str, Any], str]] = {}
        for table_id in sorted(int(i) for i in await self._redis.smembers(
                self._key("tables"))):
            row = await self._redis.hgetall(self._key("table", table_id))
            if row and "summary" in row and row["process"] != self._process:
                found[table_id] = (json.loads(row["summary"]), str(row["process"]))
        vanished = sorted(set(self._rows) - set(found))
        for owner in sorted({self._owners.get(t, "") for t in vanished} - {""}):
            # A process that did not come back is gone (its tables may be taken over).
            self._alive(await self._redis.exists(self._key("process", owner)), owner)
        for table_id in vanished:
            if table_id in self._rows:  # closed meanwhile by a process still alive
                self._lobby_heard({"op": "remove", "table": table_id,
                                   "process": self._owners.get(table_id, "")})
        for table_id, (summary, owner) in sorted(found.items()):
            if self._rows.get(table_id) != summary or self._owners.get(table_id) != owner:
                self._lobby_heard({"op": "update" if table_id in self._rows else "add",
                                   "table": table_id, "summary": summary,
                                   "process": owner})

    # -- what the others say ------------------------------------------------------------

    def _heard(self, channel: bytes, payload: bytes) -> None:
        try:
            message = msgpack.unpackb(payload, raw=False)
            if channel.endswith(b":lobby"):
                self._lobby_heard(message)
                return
        except Exception:
            log.failure("cluster: a message from {channel} failed", channel=channel)
            return
        # a process's messages to this one come in lists (`_Batched`), each on its own
        for one in message if isinstance(message, list) else [message]:
            try:
                if self._on_message is not None:
                    self._on_message(one)
            except Exception:
                log.failure("cluster: a message from {channel} failed", channel=channel)

    def _lobby_heard(self, delta: dict[str, Any]) -> None:
        process = delta.pop("process")
        if process == self._process:
            return
        if delta["op"] == "gone":  # it stopped (SIGTERM), its keys deleted first
            self._alive(False, process)
            return
        if delta["op"] == "tell":  # `tell_all`: a message for every process
            if self._on_message is not None:
                self._on_message(delta["m"])
            return
        if delta["op"] == "chat":
            if self._on_lobby is not None:
                self._on_lobby(delta)
            return
        table_id = delta["table"]
        if delta["op"] == "remove":
            self._rows.pop(table_id, None)
            self._owners.pop(table_id, None)
        else:
            # A row told again (its process was taken for gone here, or Redis came
            # back) is news only where it is missing or differs: subscribers hear an
            # `add` of a row they lack and an `update` of one they have.
            if table_id in self._rows:
                if self._rows[table_id] == delta["summary"] \
                        and self._owners.get(table_id) == process:
                    return
                delta["op"] = "update"
            else:
                delta["op"] = "add"
            self._rows[table_id] = delta["summary"]
            self._dead.discard(process)  # (taken for dead, it woke: it may die again)
            if process not in self._labels and process not in self._owners.values():
                self._label(process)  # read while it lives: Redis may lose it later
            self._owners[table_id] = process
            self._seen("table", table_id)
        if self._on_lobby is not None:
            self._on_lobby(delta)

    def stop(self) -> Deferred[None]:
        self._stopping = True
        if self._beat is not None and self._beat.running:
            self._beat.stop()
        if self._tick is not None and self._tick.running:
            self._tick.stop()
        if self._listener is not None:
            self._listener.disconnect()
            self._listener = None
        if self._redis is None:
            return succeed(None)
        redis, self._redis = self._redis, None
        # What is told from now on (the connections closing as the server stops) goes
        # nowhere: this process's keys go now, and with them its counts.
        up, self._up = self._up, False
        if not up:  # nothing to delete there: the keys expire (or went with it)
            stopped: Deferred[Any] = redis.disconnect()
            stopped.addBoth(lambda _: None)
            return stopped
        gone: Deferred[Any] = gatherResults(self._leaving(redis), consumeErrors=True)
        gone.addErrback(self._failed, "leaving the cluster")
        # Then (on the same link, so after the keys went) the others hear it at once,
        # rather than a lease later: its tables are free for them to take.
        told = msgpack.packb({"op": "gone", "process": self._process}, use_bin_type=True)
        gone.addCallback(lambda _: redis.publish(self._channel("lobby"), told))
        gone.addErrback(self._failed, "telling the cluster this process leaves")
        gone.addBoth(lambda _: redis.disconnect())
        gone.addBoth(lambda _: None)
        return gone

    def _leaving(self, redis: Any) -> list[Deferred[Any]]:
        """This process's live keys deleted as it leaves, each only while it is still
        its own: a table's and a session's (with its name's) by their `process`
        (`CLOSE`, `DROP_SESSION`), a name or code with no table or session here by its
        value, and of each address's connections only this process's count. A process
        that was taken for dead and woke may hold keys another process owns by now."""
        process = self._process
        dropped: list[Deferred[Any]] = [redis.delete([self._key("process", process)])]
        codes = _by_value(self._codes, self._live)
        for table_id in sorted(self._tables):
            key = self._key("table", table_id)
            if key in self._live:
                code = codes.get(str(table_id), [])
                dropped.append(redis.eval(CLOSE, [key, self._key("tables"), *code[:1]],
                                          [process, table_id]))
                del code[:1]
        names = _by_value(self._names, self._live)
        for key, fields in sorted(self._sessions.items()):
            if key in self._live:
                player_id = fields.get("player", "")
                dropped.append(redis.eval(DROP_SESSION, [key, *names.pop(player_id, [])],
                                          [process, player_id]))
        for value, keys in [*sorted(names.items()), *sorted(codes.items())]:
            if keys:
                dropped.append(redis.eval(RELEASE, keys, [value]))
        counted = self._key("conns", "")
        for key in sorted(k for k in self._live if k.startswith(counted)):
            dropped.append(redis.hdel(key, process))
        return dropped

    def _renew(self) -> None:
        """The lease: every live key lives `lease` seconds more; and the processes
        this one hears from, or holds visitors of, still alive? (Not while Redis is
        out of reach, nor for a lease after it came back: the others write theirs.)"""
        if self._redis is None or not self._up:
            return
        leased: Deferred[Any] = self._redis.eval(
            LEASE, [self._key("process", self._process)], [_ms(self.lease)])
        metrics.time_answer(leased, metrics.REDIS_ROUND_TRIP)
        leased.addCallback(self._renew_keys)
        leased.addErrback(self._failed, "renewing the lease")
        if self._clock.seconds() < self._judge_from:
            return
        for other in set(self._owners.values()) | self._watched:
            alive: Deferred[Any] = self._redis.exists(self._key("process", other))
            alive.addCallback(self._alive, other)
            self._tell(alive, "checking a process")

    def _renew_keys(self, held: object) -> None:
        """Once the lease answered: every live key lives a lease more; but if the lease
        had run out, this process may have been taken for dead meanwhile (paused, or
        stalled, for longer than a lease): each key is checked before it is written
        again (`_reassert`), and what another process took over is let go."""
        if self._redis is None or not self._up or self._stopping:
            return
        if held or not self._leased:  # (the first beat writes the lease)
            self._leased = True
            self._renewed_at = self._clock.seconds()
            process = self._key("process", self._process)
            keys = sorted(self._live - {process})
            for start in range(0, len(keys), RENEW_CHUNK):
                renewed: Deferred[Any] = self._redis.eval(
                    RENEW, keys[start:start + RENEW_CHUNK], [_ms(self.lease)])
                renewed.addErrback(self._failed, "renew")
            return
        metrics.LEASE_MISSED.inc()
        log.critical("the lease of process {process} had run out (it was paused, or "
                     "stalled, for longer than {lease:g} s): the others may have taken it "
                     "for dead, so every key it holds is checked again and what another "
                     "process took over is let go", process=self._process, lease=self.lease)
        checked = self._reassert(self._clock.seconds())
        checked.addCallback(self._checked)
        checked.addErrback(self._failed, "checking this process's keys again")

    def _checked(self, _: object) -> None:
        """What another process took over is let go: what is left is ours again."""
        self._renewed_at = self._clock.seconds()

    def _alive(self, alive: object, process: str) -> None:
        """A process whose lease ran out is gone, and its tables with it: the rows
        it listed are removed, as their own process would have removed them."""
        if alive or process == self._process or process in self._dead:
            return  # (told once: several processes may find it dead at once)
        self._dead.add(process)
        self._watched.discard(process)
        self._deaths.forget([process])
        gone = sorted(t for t, o in self._owners.items() if o == process)
        self._label(process).addCallback(lambda label: log.warn(
            "cluster: process {label} is gone, with {count} tables", label=label,
            process=process, count=len(gone), tables=gone))
        for table_id in gone:
            self._lobby_heard({"op": "remove", "table": table_id, "process": process,
                               "gone": True})
        if self._on_gone is not None:
            self._on_gone(process)

    def watch(self, process: str) -> None:
        if process not in self._labels and process not in self._watched:
            self._label(process)  # read while it lives: Redis may lose it later
        self._watched.add(process)
        self._dead.discard(process)  # (told gone before: told again if it still is)

    # -- names ----------------------------------------------------------------------------

    def named(self, name: str, address: str) -> None:
        """What this process is called (`--cluster-name`, by default its `address`,
        this host and its game port), kept in Redis for the others' logs: a log line
        about another process names it, not only its number of this start."""
        self._name, self._address = name or address, address
        if self._joined and self._up:
            self._say_name()

    def draining(self) -> None:
        self._draining = True
        if self._joined and self._up and self._address:
            self._tell(self._write_name(self._redis), "saying this process drains")

    def _say_name(self) -> None:
        assert self._redis is not None
        self._tell(self._write_name(self._redis), "writing this process's name")
        log.info("cluster: process {process} is {label}", process=self._process,
                 name=self._name, address=self._address,
                 label=_labelled(self._name, self._address))

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
        asked: Deferred[Any] = self._redis.hget(self._key("names"), process)

        def read(told: object) -> str:
            if isinstance(told, bytes):
                told = told.decode("utf-8", "replace")
            if isinstance(told, str):
                fields = json.loads(told)
                self._labels[process] = _labelled(str(fields.get("name", "")),
                                                  str(fields.get("address", "")))
            return f"{process} ({self._labels.get(process, 'unnamed')})"

        asked.addCallback(read)
        asked.addErrback(lambda _: f"{process} (unnamed)")
        return asked

    def _pexpire(self, key: str, ms: int) -> Deferred[Any]:
        d: Deferred[Any] = self._redis.execute_command("PEXPIRE", key, ms)
        return d

    def _reassert_failed(self, failure: Failure) -> None:
        if self._unreached(failure) and not self._up:
            log.warn("cluster: Redis at {address} went again before this process's keys "
                     "were all written again: they are written again once it is back",
                     address=str(self.address))
            return
        self._failed(failure, "writing this process's keys again")

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

    # -- ids, names, codes ------------------------------------------------------------

    def next_id(self, kind: str) -> Deferred[int]:
        def counted() -> Deferred[Any]:
            d = self._when_counted()
            d.addCallback(lambda _: self._redis.incr(self._key("ids", kind)))
            return d

        d = self._ask(f"a new {kind}", counted)

        def answered(number: int) -> int:
            self._seen(kind, number)
            return number

        d.addCallback(answered)
        return d

    def claim_name(self, player_id: str, keys: tuple[str, ...]) -> Deferred[bool]:
        names = [self._key("name", key) for key in keys]
        d = self._ask("a new name", lambda: self._redis.eval(
            CLAIM, names, [player_id, _ms(self.lease)]))
        d.addCallback(lambda held: bool(held))
        return d

    @_once_joined
    def release_name(self, player_id: str, keys: tuple[str, ...]) -> None:
        held = [self._key("name", key) for key in keys]
        self._live.difference_update(held)
        for key in held:
            self._names.pop(key, None)
            self._away.pop(key, None)
        mine = [key for key in held if key not in self._disowned]
        self._disowned.difference_update(held)
        if mine and self._up:
            self._tell(self._redis.eval(RELEASE, mine, [player_id]), "freeing a name")

    def own(self, table_id: int) -> Deferred[None]:
        key = self._key("table", table_id)

        def owning() -> Deferred[Any]:
            self._live.add(key)
            self._tables.setdefault(table_id, None)
            self._seen("table", table_id)
            self._tell(self._redis.sadd(self._key("tables"), [table_id]), "listing a table")
            d: Deferred[Any] = self._redis.hset(key, "process", self._process)
            d.addCallback(lambda _: self._pexpire(key, _ms(self.lease)))
            return d

        def unowned(failure: Failure) -> Failure:  # the table will not open: not held
            self._live.discard(key)
            self._tables.pop(table_id, None)
            return failure

        d = self._ask("a new table", owning)
        d.addCallbacks(lambda _: None, unowned)
        return d

    def take(self, table_id: int) -> Deferred[bool]:
        key = self._key("table", table_id)
        d = self._ask("taking a table over", lambda: self._redis.eval(
            TAKE, [key, self._key("tables")],
            [self._process, _ms(self.lease), self._key("process", ""), table_id]))

        def answered(took: object) -> bool:
            if took == 1:
                self._elsewhere.discard(table_id)
                self._live.add(key)
                self._tables.setdefault(table_id, None)
                self._seen("table", table_id)
                self._rows.pop(table_id, None)
                self._owners.pop(table_id, None)
            return took == 1

        d.addCallback(answered)
        return d

    def session_holder(self, hashed: bytes) -> Deferred[str | None]:
        d = self._ask("a session held elsewhere", lambda: self._redis.eval(
            HOLDER, [self._key("session", hashed.hex())], [self._key("process", "")]))
        d.addCallback(lambda holder: str(holder) if holder else None)
        return d

    def name_holder(self, keys: tuple[str, ...]) -> Deferred[str | None]:
        if not keys:
            return succeed(None)
        held = [self._key("name", key) for key in keys]
        d = self._ask("a player held elsewhere", lambda: self._redis.mget(held))
        # (Redis hands a number back as one)
        d.addCallback(lambda found: next((str(p) for p in found if p is not None), None))
        return d

    def claim_code(self, code: str, table_id: int) -> Deferred[bool]:
        key = self._key("code", code)
        d = self._ask("an invite code", lambda: self._redis.set(
            key, str(table_id), pexpire=_ms(self.lease), only_if_not_exists=True))

        def answered(result: object) -> bool:
            if result:
                self._live.add(key)
                self._codes[key] = str(table_id)
            return bool(result)

        d.addCallback(answered)
        return d

    def connection_opened(self, address: str) -> Deferred[int]:
        return self._count(address, 1)

    @_once_joined
    def connection_closed(self, address: str) -> None:
        self._tell(self._count(address, -1), "counting a connection")

    def _count(self, address: str, delta: int) -> Deferred[int]:
        """The cluster's count of an address; while Redis is out of reach, this
        process's own (written there again once it is back)."""
        key = self._key("conns", address)
        count = self._counts.get(address, 0) + delta
        if count > 0:
            self._counts[address] = count
            self._live.add(key)
        else:
            self._counts.pop(address, None)
        if not self._up:
            if count <= 0:  # its field there (if Redis kept it) goes on return
                self._uncounted.add(address)
            return succeed(max(0, count))
        self._uncounted.discard(address)
        d: Deferred[int] = self._redis.eval(
            COUNT, [key], [self._process, delta, _ms(self.lease), self._key("process", "")])
        d.addErrback(self._counted_here, address, count)
        return d

    def _counted_here(self, failure: Failure, address: str, count: int) -> int | Failure:
        """Redis lost before it answered a count: this process's own stands, as while
        it is out of reach (written there again once it is back)."""
        if not self._unreached(failure):
            return failure
        if count <= 0:
            self._uncounted.add(address)
        return max(0, count)

    # -- sessions and tables ------------------------------------------------------------

    @_once_joined
    def session_live(self, hashed: bytes, player_id: str, name: str,
                     keys: tuple[str, ...]) -> None:
        session = self._key("session", hashed.hex())
        if session in self._disowned:
            return  # another process holds it now: nothing is written here until it goes
        held = [self._key("name", key) for key in keys]
        self._live.update([session, *held])
        fields = {"player": player_id, "name": name, "process": self._process}
        self._sessions[session] = fields
        for key in (session, *held):
            self._away.pop(key, None)
        self._names.update((key, player_id) for key in held)
        if player_id.isdigit():
            self._seen("player", int(player_id))
        if not self._up:
            return
        self._tell(self._redis.hmset(session, fields), "keeping a session")
        self._tell(self._pexpire(session, _ms(self.lease)), "keeping a session")
        self._tell(self._redis.eval(CLAIM, held, [player_id, _ms(self.lease)]),
                   "keeping a name")

    @_once_joined
    def session_away(self, hashed: bytes, keys: tuple[str, ...], grace: float) -> None:
        session = self._key("session", hashed.hex())
        held = [self._key("name", key) for key in keys]
        end = self._clock.seconds() + grace
        for key in (session, *held):
            if key in self._disowned:
                continue  # another process's now
            self._live.discard(key)
            self._away[key] = end
            if self._up:
                self._tell(self._pexpire(key, _ms(grace)), "keeping an away session")

    @_once_joined
    def session_gone(self, hashed: bytes, player_id: str, keys: tuple[str, ...]) -> None:
        session = self._key("session", hashed.hex())
        self._live.discard(session)
        self._sessions.pop(session, None)
        self._away.pop(session, None)
        if session in self._disowned:  # another process's now
            self._disowned.discard(session)
        elif self._up:
            self._tell(self._redis.eval(DROP_SESSION, [session], [self._process, player_id]),
                       "forgetting a session")
        self.release_name(player_id, keys)

    def session_moved(self, hashed: bytes, keys: tuple[str, ...]) -> None:
        moved = [self._key("session", hashed.hex()), *(self._key("name", k) for k in keys)]
        self._live.difference_update(moved)
        self._disowned.difference_update(moved)
        for key in moved:
            self._sessions.pop(key, None)
            self._names.pop(key, None)
            self._away.pop(key, None)

    def find_session(self, hashed: bytes) -> Deferred[dict[str, str] | None]:
        d = self._ask("a session held elsewhere", lambda: self._redis.hgetall(
            self._key("session", hashed.hex())))
        d.addCallback(lambda found: dict(found) if found else None)
        return d

    @_once_joined
    def table_row(self, table_id: int, row: dict[str, Any]) -> None:
        if table_id in self._elsewhere:
            return  # another process holds it now: its copy here goes at its next write
        key = self._key("table", table_id)
        fresh = key not in self._live  # a table rebuilt after a restart (`own` did the rest)
        if fresh:
            self._rows.pop(table_id, None)  # listed under this process's last name, maybe
            self._owners.pop(table_id, None)
        self._live.add(key)
        summary = json.dumps(row, sort_keys=True)
        self._tables[table_id] = summary
        self._seen("table", table_id)
        if not self._up:
            return
        if not fresh:
            self._tell(self._hold(table_id, summary), "keeping a lobby row")
            return
        # A restart's table, from the process's own file: whatever a run before this
        # one left there (under its old name, maybe within its lease) is this run's.
        self._tell(self._redis.sadd(self._key("tables"), [table_id]), "listing a table")
        fields = {"process": self._process, "summary": summary}
        self._tell(self._redis.hmset(key, fields), "keeping a lobby row")
        self._tell(self._pexpire(key, _ms(self.lease)), "keeping a lobby row")

    @_once_joined
    def table_closed(self, table_id: int, code: str | None) -> None:
        keys = self._forget_table(table_id, code)
        if not self._up or table_id in self._elsewhere:
            return  # (another process's keys, if it holds the table now)
        self._tell(self._redis.eval(CLOSE, [keys[0], self._key("tables"), *keys[1:]],
                                    [self._process, table_id]), "closing a table")

    @_once_joined
    def keep_code(self, code: str, table_id: int) -> None:
        if table_id in self._elsewhere:
            return  # another process holds the table now
        key = self._key("code", code)
        self._live.add(key)
        self._codes[key] = str(table_id)
        if not self._up:
            return  # written with the rest once Redis is back (`_reassert`)
        kept: Deferred[Any] = self._redis.eval(KEEP_CODE, [key], [table_id, _ms(self.lease)])
        kept.addCallback(self._code_kept, key, table_id)
        self._tell(kept, "keeping an invite code")

    def _code_kept(self, kept: object, key: str, table_id: int) -> None:
        """`KEEP_CODE` decides: a code another table claimed since the old holder's key
        ran out is that table's, and is neither renewed nor deleted from here."""
        if kept == 1 or self._codes.get(key) != str(table_id):
            return
        log.warn("cluster: the invite code of table {table}, taken over here, was claimed "
                 "by another table meanwhile: it opens that one now", table=table_id)
        del self._codes[key]
        self._live.discard(key)

    def table_lost(self, table_id: int, code: str | None) -> None:
        self._forget_table(table_id, code)

    def seen_ids(self, highest: Mapping[str, int]) -> None:
        for kind, number in highest.items():
            self._seen(kind, number)
        if self._up:
            self._forward_ids()

    def count_from(self, read: Callable[[], Deferred[dict[str, int]]]) -> None:
        self._read_ids = read

    def _forget_table(self, table_id: int, code: str | None) -> list[str]:
        """No longer held here: its keys."""
        keys = [self._key("table", table_id)]
        if code is not None:
            keys.append(self._key("code", code))
            self._codes.pop(keys[-1], None)
        self._live.difference_update(keys)
        self._tables.pop(table_id, None)
        return keys

    # -- the lobby of every process, and messages between processes -----------------

    def lobby_rows(self) -> Mapping[int, dict[str, Any]]:
        return self._rows

    def owner_of(self, table_id: int) -> str | None:
        return self._owners.get(table_id)

    def locate(self, table_id: int) -> Deferred[str | None]:
        d: Deferred[str | None] = self._ask("a table held elsewhere", lambda: self._redis.hget(
            self._key("table", table_id), "process"))
        return d

    def code_table(self, code: str) -> Deferred[int | None]:
        d = self._ask("an invite code", lambda: self._redis.get(self._key("code", code)))
        d.addCallback(lambda found: int(found) if found is not None else None)
        return d

    @_once_joined
    def publish_lobby(self, delta: dict[str, Any]) -> None:
        if not self._up:  # told to nobody: the others read the rows again once it is back
            return
        if delta.get("table") in self._elsewhere:
            return  # its row is another process's to tell now
        payload = msgpack.packb({**delta, "process": self._process}, use_bin_type=True)
        self._tell(self._redis.publish(self._channel("lobby"), payload), "a lobby delta")

    @_once_joined
    def send(self, process: str, message: dict[str, Any]) -> None:
        if not self._up:  # lost, as over a link that dropped: the relay's hooks resync
            return
        self._redis.hold(process, encode(message))

    def listen(self, on_lobby: Heard, on_message: Heard,
               on_gone: Callable[[str], None]) -> None:
        self._on_lobby, self._on_message, self._on_gone = on_lobby, on_message, on_gone

    # -- accounts and sessions across processes -----------------------------------------

    def take_session(self, hashed: bytes, player_id: str, name: str) -> Deferred[bool]:
        key = self._key("session", hashed.hex())
        d: Deferred[Any] = self._redis.eval(
            TAKE_SESSION, [key],
            [self._process, _ms(self.lease), self._key("process", ""), player_id, name])
        d.addCallback(lambda took: bool(took))
        return d

    def tell_all(self, message: dict[str, Any]) -> None:
        self.publish_lobby({"op": "tell", "m": encode(message)})

    def live_processes(self) -> Deferred[list[str]]:
        prefix = self._key("process", "")
        d = self._ask("the processes of the cluster",
                      lambda: self._redis.keys(prefix + "*"))
        d.addCallback(lambda keys: sorted(
            str(k)[len(prefix):] for k in keys if str(k) != prefix + self._process))
        return d
