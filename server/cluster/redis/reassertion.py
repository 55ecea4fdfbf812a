"""Redis away and back (`Reassertion`): while it is out of reach the tables held here
play on and what needs it waits; once both links are back, everything this process
holds is written again in one go (`_reassert`), before anything else on the link, each
table and session only if no other process took it over meanwhile, and the ids only
ever forward."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from twisted.internet.defer import Deferred, gatherResults, succeed
from twisted.logger import Logger
from twisted.python.failure import Failure

from pisyedili.server.cluster.holdings import (
    CheckKeys,
    Disown,
    HoldAnswered,
    KeysChecked,
    RedisBack,
    RedisLost,
    RewriteSession,
    SessionKept,
    StopRenewing,
)
from pisyedili.server.cluster.redis.scripts import (
    CLAIM,
    FORWARD,
    HOLD,
    KEEP,
    KEEP_SESSION,
    REWRITE_SESSION,
    ms,
)
from pisyedili.server.cluster.redis.state import ClusterState, by_value

log = Logger(namespace="pisyedili.server.cluster.redis")  # (one namespace for the cluster)


class Reassertion(ClusterState):
    """What this process does as Redis goes and comes back (module docstring)."""

    def _link_down(self, which: str) -> None:
        """A link dropped (Redis stopped, the network, a reply overdue): from now on
        the tables here play on and whatever needs the shared state waits."""
        self._ready[which] = False
        if not self._up or self._stopping:
            return
        self._up = False
        self._lost_at = self._clock.seconds()
        self.holdings.handle(RedisLost())
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
        # Back maybe empty, maybe after a lease: every key is checked as it is written.
        written: Deferred[Any] = succeed(None)
        for effect in self.holdings.handle(RedisBack()):
            if isinstance(effect, CheckKeys):
                written = self._reassert(now)
                written.addCallback(lambda _: self._carry(self.holdings.handle(KeysChecked())))
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

    def _reassert_failed(self, failure: Failure) -> None:
        if self._unreached(failure) and not self._up:
            log.warn("cluster: Redis at {address} went again before this process's keys "
                     "were all written again: they are written again once it is back",
                     address=str(self.address))
            return
        self._failed(failure, "writing this process's keys again")

    def _ttl(self, key: str, now: float) -> int | None:
        """The TTL a key held here gets again: a lease if it is live, what is left of
        its grace if it is away, None if it has ended (it is forgotten here)."""
        if key in self._live:
            return ms(self.lease)
        end = self._away.get(key)
        if end is not None and end > now:
            return ms(end - now)
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
        redis, lease = self._redis.link, ms(self.lease)
        written: list[Deferred[Any]] = [
            redis.set(self._key("process", self._process), "1", pexpire=lease)]
        if self._address:  # (a Redis restarted empty lost the names too)
            written.append(self._write_name(redis))
        self._forward_ids(written)
        for table_id, summary in sorted(self._tables.items()):
            written.append(self._hold(table_id, summary, retell=True))
        names = by_value(self._names)
        for key, fields in list(self._sessions.items()):
            player_id = fields.get("player", "")
            held = names.pop(player_id, [])
            ttl = self._ttl(key, now)
            if ttl is not None:
                flat = [part for pair in sorted(fields.items()) for part in pair]
                kept: Deferred[Any] = redis.eval(
                    KEEP_SESSION, [key], [ttl, self._process, self._key("process", ""), *flat])
                self._checks[key] = self._checks.get(key, 0) + 1
                kept.addBoth(self._checked_one, key)
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
        held: Deferred[Any] = self._redis.link.eval(
            HOLD, [self._key("table", table_id), self._key("tables")],
            [self._process, ms(self.lease), table_id,
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
        holder = None if took == 1 else str(took)
        if holder is None:
            summary = self._tables.get(table_id)
            if retell and summary is not None:
                self.publish_lobby({"op": "add", "table": table_id,
                                    "summary": json.loads(summary)})
        for effect in self.holdings.handle(HoldAnswered(table_id, holder)):
            if isinstance(effect, StopRenewing):
                self._stop_renewing(table_id, str(took))

    def _stop_renewing(self, table_id: int, process: str) -> None:
        """Another process holds the table now: its keys are left to it."""
        self._label(process).addCallback(lambda holder: log.critical(
            "table {table} is held by process {holder} now (taken over while this "
            "process was taken for dead): this process lets it go", table=table_id,
            holder=holder, process=process))
        self._tables.pop(table_id, None)
        self._live.discard(self._key("table", table_id))
        for key in [k for k, table in self._codes.items() if table == str(table_id)]:
            del self._codes[key]
            self._live.discard(key)

    def _checked_one(self, kept: object, key: str) -> tuple[object, bool] | Failure:
        """The answer of one session's check (or its failure, as it is), and whether
        its session left here since it was asked (maybe to come back, handed here by
        the process it names)."""
        left = key in self._left
        self._checks[key] -= 1
        if not self._checks[key]:
            del self._checks[key]
            self._left.discard(key)
        return kept if isinstance(kept, Failure) else (kept, left)

    def _rekept(self, answer: tuple[object, bool], key: str, player_id: str,
                names: list[str]) -> Deferred[Any] | None:
        """`KEEP_SESSION` answers, `holdings` decide (`SessionKept`): a session another
        process took over while this one was taken for dead is that one's (`Disown`),
        its name's keys with it (the same player holds them there), and the session
        goes from here (`watch_sessions`); one handed here while Redis was away, whose
        record still names its old home, is written for this process
        (`RewriteSession`); this process's own session has its name claimed again. A
        session that left here since it was checked (and maybe came back, handed here
        by that process) is not judged by this answer."""
        kept, left = answer
        if kept == 1:
            self.holdings.handle(SessionKept(player_id, None))
            return self._reclaim(player_id, names)
        if left or self._sessions.get(key, {}).get("player") != player_id:
            return None  # gone from here meanwhile
        for effect in self.holdings.handle(SessionKept(player_id, str(kept))):
            if isinstance(effect, RewriteSession):
                return self._rewrite(key, player_id, effect.over, names)
            if isinstance(effect, Disown):
                self._disown(key, player_id, str(kept))
        return None

    def _rewrite(self, key: str, player_id: str, over: str,
                 names: list[str]) -> Deferred[Any]:
        """`RewriteSession`: the record of a session handed here while Redis was away
        is written for this process while it still names `over`, its old home; naming
        another, it is checked again as that one's (`SessionKept`)."""
        written = self._rewrite_session(key, over, self._sessions.get(key, {}))
        written.addCallback(lambda holder: self._rekept(
            (holder, False), key, player_id, names))
        return written

    def _rewrite_session(self, key: str, over: str, fields: dict[str, str]) -> Deferred[Any]:
        """`REWRITE_SESSION`: the record `key` written with `fields` for this process
        while it names `over` (the session's old home), this process, nobody or a
        process that is gone; else the live process it names."""
        flat = [part for pair in sorted(fields.items()) for part in pair]
        written: Deferred[Any] = self._redis.link.eval(
            REWRITE_SESSION, [key],
            [ms(self.lease), over, self._process, self._key("process", ""), *flat])
        return written

    def _disown(self, key: str, player_id: str, holder: str) -> None:
        """`Disown`: the session and its keys go from here, told to the relay."""
        self._label(holder).addCallback(lambda label: log.warn(
            "cluster: the session of player {player} is held by process {holder} now "
            "(taken over while this process was taken for dead): this process lets it "
            "and its keys go", player=player_id, holder=label, process=holder))
        del self._sessions[key]
        for held in (key, *(k for k, p in self._names.items() if p == player_id)):
            self._live.discard(held)
            self._away.pop(held, None)
            self._names.pop(held, None)
            self._disowned.add(held)
        hashed = bytes.fromhex(key.rsplit(":", 1)[1])
        for hook in self._disowned_hooks:
            hook(player_id, hashed, holder)

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
                claimed: Deferred[Any] = self._redis.link.eval(CLAIM, [key], [player_id, ttl])
                claimed.addCallback(self._reclaimed, key, player_id)
                claims.append(claimed)
        return gatherResults(claims, consumeErrors=True)

    def _reclaimed(self, held: object, key: str, player_id: str) -> None:
        if not held:
            log.warn("cluster: name key {key} of player {player} was claimed by another "
                     "player while Redis was out of reach", key=key, player=player_id)
            self._names.pop(key, None)
            self._live.discard(key)

    def _forward_ids(self, written: list[Deferred[Any]] | None = None) -> None:
        """Each counter at least at the highest id of its kind seen here."""
        for kind, number in sorted(self._highest.items()):
            d: Deferred[Any] = self._redis.link.eval(FORWARD, [self._key("ids", kind)], [number])
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
        """`_reread`'s reading, given up once Redis is out of reach or this process
        stops as it reads (its link goes: the next return of Redis reads them again)."""
        found: dict[int, tuple[dict[str, Any], str]] = {}
        for table_id in sorted(int(i) for i in await self._redis.link.smembers(
                self._key("tables"))):
            if not self._up:
                return
            row = await self._redis.link.hgetall(self._key("table", table_id))
            if row and "summary" in row and row["process"] != self._process:
                found[table_id] = (json.loads(row["summary"]), str(row["process"]))
        vanished = sorted(set(self._rows) - set(found))
        for owner in sorted({self._owners.get(t, "") for t in vanished} - {""}):
            if not self._up:
                return
            # A process that did not come back is gone (its tables may be taken over).
            self._alive(await self._redis.link.exists(self._key("process", owner)), owner)
        if not self._up:
            return
        for table_id in vanished:
            if table_id in self._rows:  # closed meanwhile by a process still alive
                self._lobby_heard({"op": "remove", "table": table_id,
                                   "process": self._owners.get(table_id, "")})
        for table_id, (summary, owner) in sorted(found.items()):
            if self._rows.get(table_id) != summary or self._owners.get(table_id) != owner:
                self._lobby_heard({"op": "update" if table_id in self._rows else "add",
                                   "table": table_id, "summary": summary,
                                   "process": owner})
