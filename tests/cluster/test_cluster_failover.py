"""A session moves with its player, a table outlives its process: a token resumes on
whichever process the client reaches, and a table whose process was killed is taken
over by another from the shared journal."""

from __future__ import annotations

import random
import select
import signal
import subprocess
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from dataclasses import dataclass
from pathlib import Path

import msgpack
import pg_kit
import psycopg
import pytest
from poll_kit import poll_until

from cluster.cluster_kit import (
    BACKSTOP,
    LEASE,
    Msg,
    Player,
    cluster,
    listed,
    log_of,
    play_out,
    server,
    watched_table,
)
from cluster.redis_kit import LostRedisReply, RedisAt
from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.cluster.redis import PREFIX
from pisyedili.server.store.journal import token_hash


def _resume_refused_meanwhile(port: int, welcome: Msg, refusal: str, what: str,
                              interval: float) -> tuple[Player, Msg]:
    """Resume through the process at `port`, asking again while it refuses `refusal`."""
    def attempt() -> tuple[Player, Msg] | None:
        back = Player(port)
        resumed = back.request("hello", protocol=PROTOCOL_VERSION, token=welcome["token"],
                               name=welcome["name"])
        if resumed["type"] == "welcome":
            back.welcome = resumed
            return back, resumed
        assert resumed["code"] == refusal, resumed
        back.close()
        return None

    return poll_until(attempt, BACKSTOP, what, interval)


def _resume(port: int, welcome: Msg) -> tuple[Player, Msg]:
    """Resume through the process at `port`. One that is not yet back in touch with the
    cluster's shared state (just woken from a pause, say) refuses `cluster_unavailable`
    for now, as docs/protocol.md says; the player asks again, as a client does."""
    return _resume_refused_meanwhile(port, welcome, "cluster_unavailable",
                                     "the resume to be welcomed", 0.5)


@pytest.mark.parametrize("store", ["files", "shared"])
def test_a_token_resumes_on_any_process(redis: RedisAt, tmp_path: Path, store: str,
                                        request: pytest.FixtureRequest) -> None:
    """Each process on a file of its own, or all on one PostgreSQL journal (where the
    session's row moves from one process's writes to another's)."""
    db = request.getfixturevalue("postgres").store() if store == "shared" else None
    with cluster(redis.url, tmp_path, 3, "--rate", "500", "--burst", "500", db=db) \
            as [(_, a), (_, b), (_, c)]:
        host, guest, loner = Player(a), Player(b), Player(a)
        host.hello("Ayşe")
        guest.hello("Mehmet")
        first = loner.hello("Zeynep")
        table = host.ok("create_table", rules="classic", seats=2,
                        options={"match_end": "deals:1"})["table"]["id"]
        guest.ok("join_table", table=table)
        guest.ok("ready", ready=True)
        # At no table, still connected: the old connection is told `replaced`.
        moved, again = _resume(b, first)
        assert (again["resumed"], again["player"], again["name"], again.get("table")) == \
            (True, first["player"], "Zeynep", None)
        assert loner.wait(lambda m: m["type"] == "replaced")
        second = Player(a)
        assert second.hello("Zeynep")["name"] == "Zeynep 2"  # its name still held
        session = redis.eventually(
            lambda r: r.command("HGET", PREFIX + f"session:{token_hash(first['token']).hex()}",
                                "process") == "p2")
        assert session
        # The guest, at the table of the process it now reaches: a member there.
        guest.close()
        guest, welcome = _resume(a, guest.welcome)
        assert (welcome["resumed"], welcome["table"]) == (True, table)
        assert guest.wait(lambda m: m["type"] == "table")["table"]["id"] == table
        # The host, to the other process: its own table is elsewhere now.
        host.close()
        host, welcome = _resume(b, host.welcome)
        assert (welcome["resumed"], welcome["table"]) == (True, table)
        assert host.wait(lambda m: m["type"] == "table")["table"]["seats"][0]["connected"]
        # Once more, to a third: its home there was relaying to the table's owner.
        host.close()
        host, welcome = _resume(c, host.welcome)
        assert (welcome["resumed"], welcome["table"]) == (True, table)
        assert host.wait(lambda m: m["type"] == "table")["table"]["seats"][0]["connected"]
        guest.ok("ready", ready=True)  # (a drop unreadies a seat)
        host.ok("start")
        play_out([host, guest], [], random.Random(5))
        guest.ok("leave_table")
        host.ok("leave_table")
        assert moved.ok("ping")["type"] == "pong"
        if db is not None:  # every process's journal still writes: the rows moved
            with psycopg.connect(db) as conn:
                rows = conn.execute("SELECT player_id FROM sessions").fetchall()
            assert sorted(r[0] for r in rows) == sorted(
                p.welcome["player"] for p in (host, guest, moved, second))
        stranger = Player(b)
        assert stranger.request("hello", protocol=PROTOCOL_VERSION, token="no-such-token",
                                name="x")["code"] == "bad_token"


class Mover:
    """A player that answers each move it is offered, and keeps what was acknowledged."""

    def __init__(self, player: Player, rng: random.Random) -> None:
        self.player = player
        self.rng = rng
        self.acked: list[Msg] = []
        self.pending: tuple[int, Msg] | None = None  # a move sent, its reply not read
        self.hold = False
        """Keep the moves offered (`offered`) rather than answer them."""
        self.offered: list[Msg] | None = None
        self.meanwhile: list[Msg] | None = None
        """The moves last offered while `pending`."""

    def read(self) -> bool:
        """One message, answered if it offers moves; False once the server closed.

        Moves offered while a move is on its way are kept: a move refused (sent before
        the table moved on without it, as when a stand-in played the seat while its
        player was away) changed nothing, so the offer that came meanwhile is the one
        to answer; a move accepted makes it stale."""
        msg = self.player.recv()
        if msg is None:
            return False
        if self.pending is not None and msg.get("id") == self.pending[0]:
            if msg["type"] == "ok":
                self.acked.append(self.pending[1])
            self.pending = None  # (an error: its server died, or the table moved)
            offered, self.meanwhile = self.meanwhile, None
            if msg["type"] == "error" and offered is not None:
                self._offer(offered)
        if "moves" in msg and msg["type"] != "error":
            if self.pending is None:
                self._offer(msg["moves"])
            else:
                self.meanwhile = msg["moves"]
        return True

    def _offer(self, moves: list[Msg]) -> None:
        if self.hold:
            self.offered = moves
        else:
            self.move(moves)

    def move(self, moves: list[Msg]) -> int:
        """Send one of `moves`: its request id."""
        move = self.rng.choice(moves)
        self.player.send("move", move=move)
        self.pending, self.meanwhile = (self.player.rid, move), None
        return self.player.rid

    def over(self) -> bool:
        """Whether the match ended: an `update` told its end, or, for a player away
        when it ended (a stand-in played its seat), the snapshot its return brought
        shows the table over."""
        return any(e.get("event") == "match_end" for m in self.player.seen
                   if m["type"] == "update" for e in m.get("events", ())) or any(
            m["type"] == "table" and m["table"]["phase"] == "over" for m in self.player.seen)


def _play(movers: list[Mover], done: Callable[[], bool]) -> None:
    by_sock = {m.player.sock: m for m in movers}
    while not done():
        ready, _, _ = select.select(list(by_sock), [], [], 20)
        assert ready, "nothing came for 20 s"
        for sock in ready:
            if not by_sock[sock].read():
                del by_sock[sock]  # its process died
                if not by_sock:
                    return


def _subsequence(wanted: list[Msg], record: list[Msg]) -> bool:
    it = iter(record)
    return all(any(move == kept for kept in it) for move in wanted)


def _record(port: int) -> list[Msg]:
    """The moves of the one finished match's one deal, as the store kept them."""
    viewer = Player(port)
    viewer.hello("viewer", ("history",))
    matches = poll_until(lambda: viewer.ok("history", of="recent")["matches"], BACKSTOP,
                         "the match to be kept", 0.05)
    moves: list[Msg] = viewer.ok("replay", match=matches[0]["id"])["record"]["moves"]
    return moves


def _one_deal_started(a: int, b: int) -> tuple[Player, Player, int]:
    """A host on the process at port `a` and a guest on `b`, at the host's table, a
    one-deal classic match started."""
    host, guest = Player(a), Player(b)
    host.hello("Ayşe")
    guest.hello("Mehmet")
    table: int = host.ok("create_table", rules="classic", seats=2,
                         options={"match_end": "deals:1"})["table"]["id"]
    guest.ok("join_table", table=table)
    guest.ok("ready", ready=True)
    host.ok("start")
    return host, guest, table


def _taken_over(mover: Mover) -> None:
    """Read until the table's snapshot comes again: its process took the table over."""
    since = len(mover.player.seen)
    while not any(m["type"] == "table" for m in mover.player.seen[since:]):
        assert mover.read()


def _resumes(mover: Mover, port: int, table: int) -> None:
    """`mover`'s player resumes through the process at `port`, at `table`, and plays
    on from there (nothing it sent before is awaited)."""
    back, welcome = _resume(port, mover.player.welcome)
    assert (welcome["resumed"], welcome["table"]) == (True, table)
    mover.player, mover.pending, mover.hold = back, None, False


def _to_the_host_s_turn(first: Mover, second: Mover) -> None:
    """Play on until four moves are acknowledged, then to the host's (`first`'s) turn,
    its offer kept (`hold`) and nothing of its on the way."""
    _play([first, second], lambda: len(first.acked) + len(second.acked) >= 4)
    first.hold = True
    _play([first, second], lambda: first.offered is not None and first.pending is None)


def _ends_keeping_every_ack(movers: list[Mover], port: int) -> None:
    """Play the match out; its record, read at `port`, holds every move acknowledged."""
    _play(movers, lambda: all(m.over() for m in movers))
    record = _record(port)
    assert all(_subsequence(m.acked, record) for m in movers)
    assert len(record) >= sum(len(m.acked) for m in movers)


@dataclass
class Across:
    """A one-deal match on one PostgreSQL journal: the table's process (`owner`, at
    port `a`), its host's `first` mover and the `second`, the guest's, on port `b`."""

    owner: subprocess.Popen[str]
    a: int
    b: int
    table: int
    first: Mover
    second: Mover


@contextmanager
def _one_deal_across(redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path,
                     seed: int) -> Iterator[Across]:
    with cluster(redis.url, tmp_path, 2, "--rate", "500", "--burst", "500",
                 db=postgres.store()) as [(owner, a), (_, b)]:
        host, guest, table = _one_deal_started(a, b)
        rng = random.Random(seed)
        yield Across(owner, a, b, table, Mover(host, rng), Mover(guest, rng))


@contextmanager
def _one_deal_held_back(redis: RedisAt, db: str, held: pg_kit.HeldReply, seed: int,
                        owner_redis: str | None = None) -> Iterator[Across]:
    """As `_one_deal_across`, the table's process reaching PostgreSQL through `held`
    (and Redis at `owner_redis`, where given), so that a test can hold its answers."""
    rate = ("--rate", "500", "--burst", "500")
    with ExitStack() as stack:
        owner, a = stack.enter_context(server(owner_redis or redis.url, held.url, 0, *rate))
        _, b = stack.enter_context(server(redis.url, db, 1, *rate))
        host, guest, table = _one_deal_started(a, b)
        rng = random.Random(seed)
        yield Across(owner, a, b, table, Mover(host, rng), Mover(guest, rng))


def test_a_table_lives_on_when_its_process_is_killed(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """kill -9 of the table's process mid-match: the other process takes the table
    over from the shared journal, the players resume there, the match ends, and every
    move either saw acknowledged is in its record."""
    with _one_deal_across(redis, postgres, tmp_path, 11) as run:
        owner, b, table, first, second = run.owner, run.b, run.table, run.first, run.second
        _play([first, second], lambda: len(first.acked) + len(second.acked) >= 6)
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        _taken_over(second)  # by the guest's own process: its seat in a snapshot again
        _resumes(first, b, table)
        _ends_keeping_every_ack([first, second], b)


def test_a_move_in_flight_to_a_killed_process_is_refused_before_the_table_returns(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """The guest's move is on its way to the table's process when that process dies:
    the guest hears its request refused first (`cluster_unavailable`: its table's
    server went away, and is taken over), then the
    snapshot of the table taken over, whose moves it plays. Were the refusal to come
    after the snapshot, a client that holds back until its request is answered would
    find no moves before it."""
    with _one_deal_across(redis, postgres, tmp_path, 23) as run:
        owner, b, table, first, second = run.owner, run.b, run.table, run.first, run.second
        guest = second.player
        second.hold = True
        _play([first, second], lambda: second.offered is not None and second.pending is None)
        owner.send_signal(signal.SIGSTOP)
        assert second.offered is not None
        rid = second.move(second.offered)  # read by nobody: its process is stopped
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        since = len(guest.seen)
        guest.wait(lambda m: m["type"] == "table", since=since)
        told = [m for m in guest.seen[since:] if m.get("id") == rid or m["type"] == "table"]
        # Refused first, whichever of the process's death (its lease run out) or the
        # request's own wait (one lease) is noticed first: both end with the owner gone.
        assert [m["type"] for m in told[:2]] == ["error", "table"], told
        assert told[0]["code"] == "cluster_unavailable", told  # never internal_error
        assert told[0]["retry_after"] >= 1
        assert told[0]["message"] in (
            "the server that held this table went away as it handled this request",
            "the server that holds this table did not answer"), told
        assert told[1]["moves"], "the guest's turn still: its move never reached the table"
        second.pending, second.hold = None, False
        second.move(told[1]["moves"])
        _resumes(first, b, table)
        _ends_keeping_every_ack([first, second], b)


def test_a_process_paused_past_its_lease_wakes_fenced_and_acks_nothing_lost(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """SIGSTOP of the table's process for longer than its lease: the other takes the
    table over, as from a dead one. Woken, the paused process reads the move its player
    sent meanwhile as if nothing happened; its journal refuses it (the table's holder
    moved on), so it does not acknowledge the move, lets the table go and hangs up.
    The player resumes through that same process, which knows the session no more and
    finds it at the table's new holder; the match ends there with every move
    acknowledged in its record."""
    with _one_deal_across(redis, postgres, tmp_path, 17) as run:
        owner, a, b, table = run.owner, run.a, run.b, run.table
        first, second = run.first, run.second
        host = first.player
        _to_the_host_s_turn(first, second)
        owner.send_signal(signal.SIGSTOP)
        try:
            _taken_over(second)
            assert first.offered is not None
            rid = first.move(first.offered)  # into the paused process's socket
        finally:
            owner.send_signal(signal.SIGCONT)
        said = host.wait(lambda m: m.get("id") == rid or m.get("code") == "shutting_down")
        assert said.get("code") == "shutting_down", f"the paused process answered {said}"
        assert host.recv() is None, "and hung up"
        _resumes(first, a, table)
        _ends_keeping_every_ack([first, second], b)
        assert owner.poll() is None, "the woken process serves on"


def _move_held_past_a_pause(run: Across, held: pg_kit.HeldReply, woken: str,
                            also: Callable[[], None] = lambda: None) -> None:
    """The table's process paused past its lease and its table taken over, the host's
    move goes into its socket; woken, its commit of the move is held back (`held`) until
    it logged `woken`. The host is told `shutting_down`, never the move's ack. `also`
    arms more faults before the move."""
    first, host = run.first, run.first.player
    _to_the_host_s_turn(first, run.second)
    run.owner.send_signal(signal.SIGSTOP)
    try:
        _taken_over(run.second)
        # The woken process's commit of the move, known by the move's stored record (a
        # `Play` command, msgpack, bound as it is): the answer on its link is held back.
        # Not what it sends first: a link to Redis made again as it wakes has it read
        # the journal's ids, on a link of their own.
        held.arm(msgpack.packb("Play"))
        also()
        assert first.offered is not None
        rid = first.move(first.offered)
    finally:
        run.owner.send_signal(signal.SIGCONT)
    try:
        poll_until(held.cut.is_set, BACKSTOP, "the move's commit to be held")
        log_of(run.owner).wait_for(woken)
    finally:
        held.release()
    said = host.wait(lambda m: m.get("id") == rid or m.get("code") == "shutting_down")
    assert said.get("code") == "shutting_down", f"the paused process answered {said}"


def test_a_woken_process_that_let_its_player_go_first_still_acks_no_move_it_was_fenced_on(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """As above, but the woken process's commit of the move is answered only once it
    has heard that the host's session, too, is the other process's (and hung up on
    it): the refused commit's acknowledgement still never reaches the host, which is
    told `shutting_down`, hung up on, and whose match ends at the new holder."""
    db = postgres.store()
    held = pg_kit.HeldReply(db)
    with _one_deal_held_back(redis, db, held, 29) as run:
        a, b, table, first, second = run.a, run.b, run.table, run.first, run.second
        host = first.player
        _move_held_past_a_pause(
            run, held, rf"the session of player {host.welcome['player']} is held by process")
        assert host.recv() is None, "and hung up"
        _resumes(first, a, table)
        _ends_keeping_every_ack([first, second], b)
    held.close()


def test_a_woken_process_s_word_of_a_table_taken_over_moves_none_of_its_players(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """The table's process is paused past its lease, and the guest's own process takes
    the table over; the host's move goes into the paused process's socket. Woken, that
    process finds its link to Redis lost (the reply to what it asks first is lost) and
    makes it again while its commit of the move waits (its answer held back): back in
    touch before the journal's fence let it know the table is no longer its, it tells
    the guest's process that the guest sits at its copy. The taker holds that table
    itself: the guest stays at it, never told its table is lost, and the match ends
    there (the host, hung up on, resumes there too) with every move acknowledged in
    its record."""
    db = postgres.store()
    held = pg_kit.HeldReply(db)
    lost = LostRedisReply(redis.url)
    with _one_deal_held_back(redis, db, held, 31, owner_redis=lost.url) as run:
        b, table, first, second = run.b, run.table, run.first, run.second
        guest = second.player
        # What the woken process asks Redis first goes unanswered.
        _move_held_past_a_pause(run, held, r"the cluster's Redis at \S+ is back",
                                also=lambda: lost.arm(b""))
        _resumes(first, b, table)
        _ends_keeping_every_ack([first, second], b)
        lost_tables = [m for m in guest.seen if m["type"] == "table_lost"]
        assert not lost_tables, f"the guest was told its table is lost: {lost_tables}"
    held.close()
    lost.close()


def _resume_when_taken(port: int, welcome: Msg) -> tuple[Player, Msg]:
    """Resume once a process took the table over (until then the token is nobody's)."""
    return _resume_refused_meanwhile(port, welcome, "bad_token",
                                     "a process to take the table over", 0.1)


def test_a_killed_process_is_taken_for_gone_before_its_lease_runs_out(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """kill -9 of a table's process, whose lease is far longer than any wait here: its
    connections to Redis closed with it, so the other process takes it for gone at once
    and takes its table over. The guest, connected to the live process, sits again
    (a snapshot); the host, whose connection died with the process, resumes through
    the live one at once, its hello asked of the dead process only until its death is
    seen."""
    db = postgres.store()
    # Given last, it wins over the kit's own --cluster-lease.
    args = ("--cluster-lease", str(100 * BACKSTOP))
    with ExitStack() as stack:
        (owner, a), (_, b) = (stack.enter_context(server(redis.url, db, n, *args))
                              for n in range(2))
        host, guest, table = _one_deal_started(a, b)
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        host.close()
        host, welcome = _resume(b, host.welcome)
        assert (welcome["resumed"], welcome["table"]) == (True, table)
        seats = host.wait(lambda m: m["type"] == "table")["table"]["seats"]
        assert [seat["connected"] for seat in seats] == [True, True]
        assert guest.wait(lambda m: m["type"] == "table")["table"]["id"] == table


def test_a_player_away_when_its_table_dies_resumes_it_taken_over(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """The guest's connection is down when the table's process is killed: its session
    waits at its own process for the takeover, and resumes there with its seat."""
    db = postgres.store()
    with cluster(redis.url, tmp_path, 2, db=db) as [(owner, a), (_, b)]:
        host, guest = Player(a), Player(b)
        host.hello("Ayşe")
        guest.hello("Mehmet")
        table = host.ok("create_table", rules="classic", seats=2)["table"]["id"]
        guest.ok("join_table", table=table)
        guest.close()
        host.wait(lambda m: m["type"] == "table_update"
                  and m["table"]["seats"][1].get("connected") is False)
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        host, welcome = _resume_when_taken(b, host.welcome)
        assert welcome["table"] == table
        # (Its process heard the old owner is gone before it took the table over.)
        guest, welcome = _resume(b, guest.welcome)
        assert (welcome["resumed"], welcome["table"]) == (True, table)
        seats = guest.wait(lambda m: m["type"] == "table")["table"]["seats"]
        assert [seat["connected"] for seat in seats] == [True, True]


def test_a_private_table_taken_over_keeps_its_invite_code(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """kill -9 of a private table's process, its second seat free: the process that
    takes the table over holds its invite code from then on (the dead process's key
    ends a lease after its last beat), so a player on a process started since joins
    by the code; the code is free again once the table closes."""
    db = postgres.store()
    with ExitStack() as stack:
        (owner, a), (_, b) = (stack.enter_context(server(redis.url, db, n))
                              for n in range(2))
        host = Player(a)
        host.hello("Ayşe")
        opened = host.ok("create_table", rules="classic", seats=2, private=True)["table"]
        table, code = opened["id"], opened["code"]
        key = PREFIX + f"code:{code}"
        assert redis.command("GET", key) == str(table)
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        ends = redis.end_ms(key)  # the life the dead process's key has left
        host, welcome = _resume_when_taken(b, host.welcome)
        assert welcome["table"] == table
        assert redis.eventually(lambda r: r.now_ms() > ends, timeout=2 * LEASE)
        _, c = stack.enter_context(server(redis.url, db, 2))  # holds nothing: B does
        guest = Player(c)
        guest.hello("Mehmet")
        joined = guest.request("join_table", code=code.lower())
        assert joined["type"] == "table" and joined["table"]["id"] == table, joined
        assert redis.command("GET", key) == str(table)
        guest.ok("leave_table")
        host.ok("leave_table")  # the last member: the table closes, its code goes
        assert redis.eventually(lambda r: r.command("GET", key) is None)


def test_a_table_taken_over_is_listed_again_where_it_was_dropped(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """kill -9 of a table's process: the process that takes the table over had dropped
    it from its lobby with the dead process, and lists it again (its subscribers get
    an `add`, and a page read there lists it)."""
    db = postgres.store()
    with cluster(redis.url, tmp_path, 2, db=db) as [(owner, a), (_, b)]:
        watcher, _, table, told = watched_table(b, a)
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        since = len(watcher.seen)
        told("remove", since)
        again = told("add", since)
        assert again["summary"]["id"] == table
        assert [m["op"] for m in watcher.seen[since:] if m["type"] == "lobby_update"
                and m["table"] == table] == ["remove", "add"]
        assert table in listed(b)
