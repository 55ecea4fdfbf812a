"""What the cluster registers for every process (`Registries`): ids, names, invite
codes, connections per address, sessions and tables. An answer that decides is asked
of Redis (and refused while it is out of reach); a write that only tells is kept here
too, to be written again once Redis is back."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

from twisted.internet.defer import Deferred, succeed
from twisted.logger import Logger
from twisted.python.failure import Failure

from pisyedili.server.cluster.holdings import (
    ReleaseKeys,
    SessionWritten,
    TableClosed,
    TableOpened,
)
from pisyedili.server.cluster.redis.reassertion import Reassertion
from pisyedili.server.cluster.redis.scripts import (
    CLAIM,
    CLOSE,
    COUNT,
    DROP_SESSION,
    HOLDER,
    KEEP_CODE,
    KEEP_SESSION,
    RELEASE,
    TAKE,
    TAKE_SESSION,
    ms,
)
from pisyedili.server.cluster.redis.state import once_joined

log = Logger(namespace="pisyedili.server.cluster.redis")  # (one namespace for the cluster)


class Registries(Reassertion):
    """Ids, names, codes, connections, sessions and tables (module docstring)."""

    def next_id(self, kind: str) -> Deferred[int]:
        def counted() -> Deferred[Any]:
            d = self._when_counted()
            d.addCallback(lambda _: self._redis.link.incr(self._key("ids", kind)))
            return d

        d = self._ask(f"a new {kind}", counted)

        def answered(number: int) -> int:
            self._seen(kind, number)
            return number

        d.addCallback(answered)
        return d

    def claim_name(self, player_id: str, keys: tuple[str, ...]) -> Deferred[bool]:
        names = [self._key("name", key) for key in keys]
        d = self._ask("a new name", lambda: self._redis.link.eval(
            CLAIM, names, [player_id, ms(self.lease)]))
        d.addCallback(lambda held: bool(held))
        return d

    @once_joined
    def release_name(self, player_id: str, keys: tuple[str, ...]) -> None:
        held = [self._key("name", key) for key in keys]
        self._live.difference_update(held)
        for key in held:
            self._names.pop(key, None)
            self._away.pop(key, None)
        mine = [key for key in held if key not in self._disowned]
        self._disowned.difference_update(held)
        if mine and self._up:
            self._tell(self._redis.link.eval(RELEASE, mine, [player_id]), "freeing a name")

    def own(self, table_id: int) -> Deferred[None]:
        key = self._key("table", table_id)

        def owning() -> Deferred[Any]:
            self.holdings.handle(TableOpened(table_id))
            self._live.add(key)
            self._tables.setdefault(table_id, None)
            self._seen("table", table_id)
            self._tell(self._redis.link.sadd(self._key("tables"), [table_id]), "listing a table")
            d: Deferred[Any] = self._redis.link.hset(key, "process", self._process)
            d.addCallback(lambda _: self._pexpire(key, ms(self.lease)))
            return d

        def unowned(failure: Failure) -> Failure:  # the table will not open: not held
            self.holdings.handle(TableClosed(table_id))
            self._live.discard(key)
            self._tables.pop(table_id, None)
            return failure

        d = self._ask("a new table", owning)
        d.addCallbacks(lambda _: None, unowned)
        return d

    def take(self, table_id: int) -> Deferred[bool]:
        key = self._key("table", table_id)
        d = self._ask("taking a table over", lambda: self._redis.link.eval(
            TAKE, [key, self._key("tables")],
            [self._process, ms(self.lease), self._key("process", ""), table_id]))

        def answered(took: object) -> bool:
            if took == 1:
                self._live.add(key)
                self._tables.setdefault(table_id, None)
                self._seen("table", table_id)
                self._rows.pop(table_id, None)
                self._owners.pop(table_id, None)
            return took == 1

        d.addCallback(answered)
        return d

    def session_holder(self, hashed: bytes) -> Deferred[str | None]:
        d = self._ask("a session held elsewhere", lambda: self._redis.link.eval(
            HOLDER, [self._key("session", hashed.hex())], [self._key("process", "")]))
        d.addCallback(lambda holder: str(holder) if holder else None)
        return d

    def name_holder(self, keys: tuple[str, ...]) -> Deferred[str | None]:
        if not keys:
            return succeed(None)
        held = [self._key("name", key) for key in keys]
        d = self._ask("a player held elsewhere", lambda: self._redis.link.mget(held))
        # (Redis hands a number back as one)
        d.addCallback(lambda found: next((str(p) for p in found if p is not None), None))
        return d

    def claim_code(self, code: str, table_id: int) -> Deferred[bool]:
        key = self._key("code", code)
        d = self._ask("an invite code", lambda: self._redis.link.set(
            key, str(table_id), pexpire=ms(self.lease), only_if_not_exists=True))

        def answered(result: object) -> bool:
            if result:
                self._live.add(key)
                self._codes[key] = str(table_id)
            return bool(result)

        d.addCallback(answered)
        return d

    def connection_opened(self, address: str) -> Deferred[int]:
        return self._count(address, 1)

    @once_joined
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
        d: Deferred[int] = self._redis.link.eval(
            COUNT, [key], [self._process, delta, ms(self.lease), self._key("process", "")])
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

    @once_joined
    def session_live(self, hashed: bytes, player_id: str, name: str,
                     keys: tuple[str, ...]) -> None:
        session = self._key("session", hashed.hex())
        if session in self._disowned:
            return  # another process holds it now: nothing is written here until it goes
        held = [self._key("name", key) for key in keys]
        homed = session in self._sessions  # its record written from here already
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
        if homed:
            self._keep_session(session, fields, player_id, held)
            return
        home = self.holdings.session(player_id)
        if home is not None and home.since is not None:  # (a session new here otherwise)
            self._keep_session(session, fields, player_id, held, over=home.since)
        else:
            self._tell(self._redis.link.hmset(session, fields), "keeping a session")
            self._tell(self._pexpire(session, ms(self.lease)), "keeping a session")
        self._tell(self._redis.link.eval(CLAIM, held, [player_id, ms(self.lease)]),
                   "keeping a name")

    def _keep_session(self, session: str, fields: dict[str, str], player_id: str,
                      held: list[str], over: str | None = None) -> None:
        """A session homed here written again (resumed, renamed) only if no other live
        process holds it now, as a check after a lapsed lease does (`_rekept`): this
        process may have been paused past its lease, and the session taken over
        meanwhile, with the copy here resumed as it woke, before its keys were checked.
        One handed here by `over`, its old home, is written only while its record names
        `over`, this process, nobody or a process that is gone: the hand-over may come
        late (this process paused as it came, `over` stopped meanwhile), after another
        process rebuilt the session from the journal and took it in the cluster. Either
        answer is judged as a check's is (`SessionKept`): a session another process
        holds goes from here (`Disown`)."""
        self.holdings.handle(SessionWritten(player_id))
        if over is None:
            flat = [part for pair in sorted(fields.items()) for part in pair]
            kept: Deferred[Any] = self._redis.link.eval(
                KEEP_SESSION, [session],
                [ms(self.lease), self._process, self._key("process", ""), *flat])
        else:
            kept = self._rewrite_session(session, over, fields)
        self._checks[session] = self._checks.get(session, 0) + 1
        kept.addBoth(self._checked_one, session)
        kept.addCallback(self._rekept, session, player_id, held)
        self._tell(kept, "keeping a session")

    @once_joined
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
                self._tell(self._pexpire(key, ms(grace)), "keeping an away session")

    @once_joined
    def session_gone(self, hashed: bytes, player_id: str, keys: tuple[str, ...],
                     forgotten: Callable[[], None] | None = None) -> None:
        session = self._key("session", hashed.hex())
        self._live.discard(session)
        self._sessions.pop(session, None)
        self._away.pop(session, None)
        if session in self._disowned:  # another process's now
            self._disowned.discard(session)
        elif self._up:
            dropped: Deferred[Any] = self._redis.link.eval(
                DROP_SESSION, [session], [self._process, player_id])
            if forgotten is not None:
                dropped.addCallbacks(_unless_held_elsewhere, _forgotten_anyway,
                                     callbackArgs=(forgotten,), errbackArgs=(forgotten,))
            self._tell(dropped, "forgetting a session")
        elif forgotten is not None:  # (Redis away: nothing tells another holds it)
            forgotten()
        self.release_name(player_id, keys)

    def session_moved(self, hashed: bytes, keys: tuple[str, ...]) -> None:
        moved = [self._key("session", hashed.hex()), *(self._key("name", k) for k in keys)]
        if moved[0] in self._checks:
            self._left.add(moved[0])
        self._live.difference_update(moved)
        self._disowned.difference_update(moved)
        for key in moved:
            self._sessions.pop(key, None)
            self._names.pop(key, None)
            self._away.pop(key, None)

    def find_session(self, hashed: bytes) -> Deferred[dict[str, str] | None]:
        d = self._ask("a session held elsewhere", lambda: self._redis.link.hgetall(
            self._key("session", hashed.hex())))
        d.addCallback(lambda found: dict(found) if found else None)
        return d

    def take_session(self, hashed: bytes, player_id: str, name: str) -> Deferred[bool]:
        # (Asked, as each command of a resume is: a link lost, or a reply overdue, is
        # an outage the client is told to wait out, not a failure of its hello.)
        key = self._key("session", hashed.hex())
        d: Deferred[Any] = self._ask("a session whose home is gone", lambda: self._redis.link.eval(
            TAKE_SESSION, [key],
            [self._process, ms(self.lease), self._key("process", ""), player_id, name]))
        d.addCallback(lambda took: bool(took))
        return d

    @once_joined
    def table_row(self, table_id: int, row: dict[str, Any]) -> None:
        if self.holdings.disputed(table_id):
            return  # another process holds it now: its copy here goes at its next write
        key = self._key("table", table_id)
        fresh = key not in self._live  # a table rebuilt after a restart (`own` did the rest)
        if fresh:
            if self.holdings.table(table_id) is None:  # (from its own file: holder 0)
                self.holdings.handle(TableOpened(table_id))
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
        self._tell(self._redis.link.sadd(self._key("tables"), [table_id]), "listing a table")
        fields = {"process": self._process, "summary": summary}
        self._tell(self._redis.link.hmset(key, fields), "keeping a lobby row")
        self._tell(self._pexpire(key, ms(self.lease)), "keeping a lobby row")

    @once_joined
    def table_closed(self, table_id: int, code: str | None) -> None:
        keys = self._forget_table(table_id, code)
        for effect in self.holdings.handle(TableClosed(table_id)):
            if isinstance(effect, ReleaseKeys) and self._up:  # (none: another's keys)
                self._tell(self._redis.link.eval(
                    CLOSE, [keys[0], self._key("tables"), *keys[1:]],
                    [self._process, table_id]), "closing a table")

    @once_joined
    def keep_code(self, code: str, table_id: int) -> None:
        if self.holdings.disputed(table_id):
            return  # another process holds the table now
        key = self._key("code", code)
        self._live.add(key)
        self._codes[key] = str(table_id)
        if not self._up:
            return  # written with the rest once Redis is back (`_reassert`)
        kept: Deferred[Any] = self._redis.link.eval(KEEP_CODE, [key], [table_id, ms(self.lease)])
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

    def _forget_table(self, table_id: int, code: str | None) -> list[str]:
        """No longer held here: its keys."""
        keys = [self._key("table", table_id)]
        if code is not None:
            keys.append(self._key("code", code))
            self._codes.pop(keys[-1], None)
        self._live.difference_update(keys)
        self._tables.pop(table_id, None)
        return keys

    def seen_ids(self, highest: Mapping[str, int]) -> None:
        for kind, number in highest.items():
            self._seen(kind, number)
        if self._up:
            self._forward_ids()

    def count_from(self, read: Callable[[], Deferred[dict[str, int]]]) -> None:
        self._read_ids = read


def _unless_held_elsewhere(dropped: object, forgotten: Callable[[], None]) -> None:
    """`DROP_SESSION` answered: 0 if the record names another process (it homes the
    session: the copy here was stale)."""
    if dropped != 0:
        forgotten()


def _forgotten_anyway(failure: Failure, forgotten: Callable[[], None]) -> Failure:
    """No answer (Redis lost on the way): forgotten as when Redis is away."""
    forgotten()
    return failure
