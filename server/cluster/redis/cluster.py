"""The cluster's process in Redis (`RedisCluster`): its life (joining, the lease, the
tick that sees a pause, stopping), the others' life and death, what the others say,
and the lobby and messages between processes."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import msgpack
import txredisapi
from twisted.internet.defer import Deferred, gatherResults, succeed
from twisted.internet.endpoints import HostnameEndpoint
from twisted.internet.task import LoopingCall
from twisted.logger import Logger

from pisyedili.server import metrics
from pisyedili.server.cluster.holdings import (
    CheckKeys,
    Draining,
    Joined,
    KeysChecked,
    LeaseLapsed,
    LeaseRenewed,
    RenewKeys,
    Stopped,
)
from pisyedili.server.cluster.redis.links import Batched, Link, Listener, back_off
from pisyedili.server.cluster.redis.registries import Registries
from pisyedili.server.cluster.redis.scripts import (
    CLOSE,
    DROP_SESSION,
    GONE,
    LEASE,
    RELEASE,
    RENEW,
    RENEW_CHUNK,
    ms,
)
from pisyedili.server.cluster.redis.state import (
    TICK_SECONDS,
    Heard,
    by_value,
    labelled,
    once_joined,
)
from pisyedili.server.interproc.messages import encode

log = Logger(namespace="pisyedili.server.cluster.redis")  # (one namespace for the cluster)


class RedisCluster(Registries):
    """A `Cluster` whose shared state is one Redis database (the package's docstring)."""

    shared = True

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
        link = Link(self.address, self._reply_timeout, lambda: self._link_up("link"),
                    lambda: self._link_down("link"), lambda: self._stopping)
        back_off(link, self.lease)
        link.startConnecting(HostnameEndpoint(self._clock, host, port, timeout=5))
        self._redis = Batched(link.handler, self._clock, self._channel, self._failed,
                              lambda process: self._probe([process]))
        await self._subscribe()
        await self._read_rows()
        self._joined = self._up = True
        self.holdings.handle(Joined())
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

    async def _subscribe(self) -> None:
        factory = txredisapi.SubscriberFactory()
        factory.charset, factory.convertNumbers = None, False
        factory.noisy = False
        back_off(factory, self.lease)
        factory.protocol = Listener
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
        ids = await self._redis.link.smembers(self._key("tables"))
        for table_id in sorted(int(i) for i in ids):
            row = await self._redis.link.hgetall(self._key("table", table_id))
            if not row:
                self._redis.link.srem(self._key("tables"), [table_id])
            elif "summary" in row and row["process"] != self._process \
                    and table_id not in self._rows:  # (no summary: its `add` is to come)
                self._rows[table_id] = json.loads(row["summary"])
                self._owners[table_id] = row["process"]
                self._seen("table", table_id)

    def stop(self) -> Deferred[None]:
        self._stopping = True
        self.holdings.handle(Stopped())
        if self._beat is not None and self._beat.running:
            self._beat.stop()
        if self._tick is not None and self._tick.running:
            self._tick.stop()
        if self._listener is not None:
            self._listener.disconnect()
            self._listener = None
        if self._redis is None:
            return succeed(None)
        redis, self._redis = self._redis.link, None
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
        codes = by_value(self._codes, self._live)
        for table_id in sorted(self._tables):
            key = self._key("table", table_id)
            if key in self._live:
                code = codes.get(str(table_id), [])
                dropped.append(redis.eval(CLOSE, [key, self._key("tables"), *code[:1]],
                                          [process, table_id]))
                del code[:1]
        names = by_value(self._names, self._live)
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

    def _ticked(self) -> None:
        """A tick of the reactor's clock: one much later than the last was a pause.
        And the processes whose end matters here: still subscribed?"""
        self._just_woke()
        self._ticked_at = self._clock.seconds()
        self._probe()

    def _renew(self) -> None:
        """The lease: every live key lives `lease` seconds more; and the processes
        this one hears from, or holds visitors of, still alive? (Not while Redis is
        out of reach, nor for a lease after it came back: the others write theirs.)"""
        if self._redis is None or not self._up:
            return
        leased: Deferred[Any] = self._redis.link.eval(
            LEASE, [self._key("process", self._process)], [ms(self.lease)])
        metrics.time_answer(leased, metrics.REDIS_ROUND_TRIP)
        leased.addCallback(self._renew_keys)
        leased.addErrback(self._failed, "renewing the lease")
        if self._clock.seconds() < self._judge_from:
            return
        for other in set(self._owners.values()) | self._watched:
            alive: Deferred[Any] = self._redis.link.exists(self._key("process", other))
            alive.addCallback(self._alive, other)
            self._tell(alive, "checking a process")

    def _renew_keys(self, held: object) -> None:
        """Once the lease answered: every live key lives a lease more; but if the lease
        had run out, this process may have been taken for dead meanwhile (paused, or
        stalled, for longer than a lease): each key is checked before it is written
        again (`_reassert`), and what another process took over is let go."""
        if self._redis is None or not self._up or self._stopping:
            return
        renewed = bool(held) or not self._leased  # (the first beat writes the lease)
        for effect in self.holdings.handle(LeaseRenewed() if renewed else LeaseLapsed()):
            if isinstance(effect, RenewKeys):
                self._renew_all()
            elif isinstance(effect, CheckKeys):
                self._check_all()
            else:
                self._carry([effect])

    def _renew_all(self) -> None:
        self._leased = True
        self._sure()
        process = self._key("process", self._process)
        keys = sorted(self._live - {process})
        for start in range(0, len(keys), RENEW_CHUNK):
            renewed: Deferred[Any] = self._redis.link.eval(
                RENEW, keys[start:start + RENEW_CHUNK], [ms(self.lease)])
            renewed.addErrback(self._failed, "renew")

    def _check_all(self) -> None:
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
        self._sure()
        self._carry(self.holdings.handle(KeysChecked()))

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
        asked: Deferred[Any] = self._redis.link.execute_command(
            "PUBSUB", "NUMSUB", *(self._channel(f"to:{p}") for p in processes))
        asked.addCallback(self._probed, processes)
        self._tell(asked, "watching the other processes")

    def _probed(self, counts: list[Any], processes: list[str]) -> None:
        if self._redis is None or self._stopping:
            return
        listening = {p: int(counts[2 * i + 1]) for i, p in enumerate(processes)}
        verdict = self._deaths.probed(listening, self._clock.seconds())
        for process in verdict.dead:
            dead: Deferred[Any] = self._redis.link.eval(
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
            self._tell(self._redis.link.publish(self._channel("lobby"), told),
                       "telling a process is dead")

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

    def _heard(self, channel: bytes, payload: bytes) -> None:
        try:
            message = msgpack.unpackb(payload, raw=False)
            if channel.endswith(b":lobby"):
                self._lobby_heard(message)
                return
        except Exception:
            log.failure("cluster: a message from {channel} failed", channel=channel)
            return
        # a process's messages to this one come in lists (`Batched`), each on its own
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

    def named(self, name: str, address: str) -> None:
        """What this process is called (`--cluster-name`, by default its `address`,
        this host and its game port), kept in Redis for the others' logs: a log line
        about another process names it, not only its number of this start."""
        self._name, self._address = name or address, address
        if self._joined and self._up:
            self._say_name()

    def draining(self) -> None:
        self._draining = True
        self.holdings.handle(Draining())  # it takes no table over from now on
        if self._joined and self._up and self._address:
            self._tell(self._write_name(self._redis.link), "saying this process drains")

    def _say_name(self) -> None:
        assert self._redis is not None
        self._tell(self._write_name(self._redis.link), "writing this process's name")
        log.info("cluster: process {process} is {label}", process=self._process,
                 name=self._name, address=self._address,
                 label=labelled(self._name, self._address))

    def lobby_rows(self) -> Mapping[int, dict[str, Any]]:
        return self._rows

    def owner_of(self, table_id: int) -> str | None:
        return self._owners.get(table_id)

    def locate(self, table_id: int) -> Deferred[str | None]:
        d: Deferred[str | None] = self._ask("a table held elsewhere", lambda: self._redis.link.hget(
            self._key("table", table_id), "process"))
        return d

    def code_table(self, code: str) -> Deferred[int | None]:
        d = self._ask("an invite code", lambda: self._redis.link.get(self._key("code", code)))
        d.addCallback(lambda found: int(found) if found is not None else None)
        return d

    @once_joined
    def publish_lobby(self, delta: dict[str, Any]) -> None:
        if not self._up:  # told to nobody: the others read the rows again once it is back
            return
        if isinstance(delta.get("table"), int) and self.holdings.disputed(delta["table"]):
            return  # its row is another process's to tell now
        payload = msgpack.packb({**delta, "process": self._process}, use_bin_type=True)
        self._tell(self._redis.link.publish(self._channel("lobby"), payload), "a lobby delta")

    @once_joined
    def send(self, process: str, message: dict[str, Any]) -> None:
        if not self._up:  # lost, as over a link that dropped: the relay's hooks resync
            return
        self._redis.hold(process, encode(message))

    def listen(self, on_lobby: Heard, on_message: Heard,
               on_gone: Callable[[str], None]) -> None:
        self._on_lobby, self._on_message, self._on_gone = on_lobby, on_message, on_gone

    def tell_all(self, message: dict[str, Any]) -> None:
        self.publish_lobby({"op": "tell", "m": encode(message)})

    def live_processes(self) -> Deferred[list[str]]:
        prefix = self._key("process", "")
        d = self._ask("the processes of the cluster",
                      lambda: self._redis.link.keys(prefix + "*"))
        d.addCallback(lambda keys: sorted(
            str(k)[len(prefix):] for k in keys if str(k) != prefix + self._process))
        return d
