"""Redis goes away mid-match and comes back (empty, or with its data kept): the
process holding the table plays on for the players connected to it, what needs the
shared state is refused with a stable code, and once Redis is back everything the
processes hold is there again and the match finishes across them."""

from __future__ import annotations

import random
import select
import signal
import subprocess
import time
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import msgpack
import pg_kit
import psycopg
import pytest
from poll_kit import poll_until
from process_output import Output, add_operator

from cluster.cluster_kit import BACKSTOP, LEASE, Msg, Player
from cluster.outage_kit import (
    PASSWORD,
    banned_while_redis_is_away,
    redis_process,
    server,
)
from cluster.redis_kit import RedisAt
from cluster.test_cluster_failover import (
    Mover,
    _ends_keeping_every_ack,
    _one_deal_started,
    _play,
    _record,
    _resume_when_taken,
    _resumes,
    _subsequence,
    _taken_over,
)
from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.cluster.redis import PREFIX
from pisyedili.server.store import open_store
from pisyedili.server.store.journal import token_hash


@dataclass
class Split:
    """A one-deal match across two processes of a cluster on one journal: the table on
    A (`procs[0]`, at port `a`) with its host's `first` mover, the guest's `second` on
    B; four moves acknowledged."""

    procs: list[subprocess.Popen[str]]
    a: int
    log_a: Output
    b: int
    log_b: Output
    table: int
    first: Mover
    second: Mover

    def hold(self) -> None:
        """No move from here on until the movers are let go, and none in flight."""
        first, second = self.first, self.second
        first.hold = second.hold = True
        _play([first, second], lambda: first.pending is None and second.pending is None)

    def go_on(self) -> None:
        """The table is back at B: its players resume there and the match ends with
        every acknowledged move in its record."""
        self.first.hold = self.second.hold = False
        _taken_over(self.second)  # the guest's seat in a snapshot again
        _resumes(self.first, self.b, self.table)
        _ends_keeping_every_ack([self.first, self.second], self.b)


def _split(stack: ExitStack, redis_url: str, db: str, seed: int) -> Split:
    procs: list[subprocess.Popen[str]] = []
    (a, log_a), (b, log_b) = (stack.enter_context(server(redis_url, db, n, procs))
                              for n in range(2))
    host, guest, table = _one_deal_started(a, b)  # the table on A, the guest on B
    rng = random.Random(seed)
    first, second = Mover(host, rng), Mover(guest, rng)
    _play([first, second], lambda: len(first.acked) + len(second.acked) >= 4)
    return Split(procs, a, log_a, b, log_b, table, first, second)


def _lately(mover: Mover) -> str:
    """What a stalled mover last saw, in short: each message's type, its id, its
    events, whether it offered moves; and the move it still waits on."""
    seen = [(m["type"], m.get("id"), [e.get("event") for e in m.get("events", ())],
             m.get("code"), "moves" in m) for m in mover.player.seen[-8:]]
    return f"{seen}; waiting on {mover.pending}"


def _log_of(out: Output) -> str:
    """Everything a process logged so far (what came within half a second, too)."""
    try:
        out.wait_for(r"(?!)", 0.5)
    except AssertionError:
        pass
    return out.text


def _hello_refused(port: int, **fields: object) -> Msg:
    """A `hello` that needs the shared state: its refusal, then the end of the link."""
    newcomer = Player(port)
    refused = newcomer.request("hello", protocol=PROTOCOL_VERSION, **fields)
    assert newcomer.recv() is None
    newcomer.close()
    return refused


@pytest.mark.parametrize("keep", [False, True], ids=["empty", "kept"])
def test_redis_killed_mid_match_and_back(tmp_path: Path, keep: bool) -> None:
    """A match across two processes; Redis killed (SIGKILL) mid-match and started
    again on its port, empty or with its data kept. Meanwhile the table's own process
    plays on (the other process's player away, a stand-in in its seat), and what
    needs the shared state is refused with `cluster_unavailable`; after it the player
    away gets its seat back, the match ends across the processes with every
    acknowledged move kept, a new table opens and every lobby hears of it."""
    add_operator(str(tmp_path / "0.db"), "Zeynep", PASSWORD)
    with ExitStack() as stack:
        redis, at = stack.enter_context(redis_process(keep))
        (a, log_a), (b, log_b) = (
            stack.enter_context(server(redis.url, tmp_path / f"{n}.db", n))
            for n in range(2))
        operator = Player(a)
        operator.hello("z", ("chat", "accounts", "moderation"))
        assert operator.ok("login", name="Zeynep", password=PASSWORD)["operator"] is True
        watcher, loner, traveller = Player(a), Player(b), Player(b)
        watcher.hello("Zeynep")
        watcher.ok("lobby_subscribe")
        loner.hello("Elif")
        travelling = traveller.hello("Deniz")
        host, guest, table = _one_deal_started(a, b)  # the table on A, the guest on B
        latest = Player(a)  # the highest player id, given out on A
        latest.hello("Zeynep")
        rng = random.Random(17)
        first, second = Mover(host, rng), Mover(guest, rng)
        _play([first, second], lambda: len(first.acked) + len(second.acked) >= 4)
        traveller.close()  # its session at B, to resume at A while Redis is away
        stray = Player(a, source="127.0.0.5")  # counted in Redis, to leave meanwhile
        stray_key = PREFIX + "conns:127.0.0.5"
        assert at.eventually(lambda r: r.command("HGET", stray_key, "p1") == "1")

        redis.kill()
        lost = log_a.wait_for(r"lost the cluster's Redis at (\S+): serving the (\d+) tables")
        assert lost.groups() == (redis.url, "1")
        assert log_b.wait_for(r"lost the cluster's Redis at \S+: serving the (\d+) tables"
                              ).group(1) == "0"
        stray.close()
        # The owner's player plays on, against a stand-in once the guest's grace ran out.
        before = len(first.acked)
        _play([first], lambda: len(first.acked) >= before + 3 or first.over())
        assert len(first.acked) >= before + 3
        # What needs the shared state is refused, at once, with the stable code.
        for refused in (loner.request("create_table", rules="classic", seats=2),
                        loner.request("join_table", table=table),
                        operator.request("announce", text="to every process"),
                        _hello_refused(b, name="Yeni"),
                        _hello_refused(a, name="Deniz", token=travelling["token"])):
            assert refused["type"] == "error" and refused["code"] == "cluster_unavailable", \
                refused
            # Asked again within a second: Redis is back in about that long.
            assert 0 < refused["retry_after"] <= 1, refused
        assert loner.ok("ping")["type"] == "pong"  # nothing was dropped for it

        redis.start()
        for log in (log_a, log_b):
            log.wait_for(r"the cluster's Redis at \S+ is back after [\d.]+ s: this "
                         r"process's lease, \d+ tables")
        # The guest is back in its seat: a fresh snapshot, its moves offered again.
        since = len(guest.seen)
        while not any(m["type"] == "table" for m in guest.seen[since:]):
            assert second.read()
        # Kept or not, Redis counts no connection that went meanwhile.
        assert at.eventually(lambda r: r.command("HGET", stray_key, "p1") is None)
        guest_key = PREFIX + f"session:{token_hash(guest.welcome['token']).hex()}"
        assert at.eventually(lambda r: r.hash(PREFIX + f"table:{table}").get(
            "process") == "p1" and r.command("HGET", guest_key, "process") == "p2")
        try:
            _play([first, second], lambda: first.over() and second.over())
        except AssertionError as e:
            raise AssertionError(f"{e}\nA:\n{_log_of(log_a)}\nB:\n{_log_of(log_b)}"
                                 f"\nguest: {_lately(second)}\nhost: {_lately(first)}"
                                 ) from e
        record = _record(a)
        assert _subsequence(first.acked, record) and _subsequence(second.acked, record)
        assert len(record) >= len(first.acked) + len(second.acked)
        # Ids go on above those handed out before; a new table's row reaches A's lobby.
        opened = loner.ok("create_table", rules="classic", seats=2)["table"]["id"]
        assert opened > table
        assert watcher.wait(lambda m: m["type"] == "lobby_update" and m["op"] == "add"
                            and m["table"] == opened)


def test_a_player_let_go_while_redis_is_away_is_at_no_table_once_it_is_back(
        tmp_path: Path) -> None:
    """A one-deal match between a host on A and a guest on B, and Redis killed: A takes
    the guest for gone, its grace runs out, the host plays the match out against the
    stand-in, and at its end A lets the guest go. A's word of it to B went nowhere (the
    link was down); once Redis is back, B hears of it (whichever of A's word and B's
    `back` comes last), tells the guest `table_lost`, and the guest, at no table now,
    may open one of its own (before, it stayed `already at a table` that had let it
    go)."""
    with ExitStack() as stack:
        redis, _ = stack.enter_context(redis_process(keep=False))
        (a, log_a), (b, log_b) = (
            stack.enter_context(server(redis.url, tmp_path / f"{n}.db", n))
            for n in range(2))
        host, guest, table = _one_deal_started(a, b)
        first = Mover(host, random.Random(17))
        redis.kill()
        for log in (log_a, log_b):
            log.wait_for(r"lost the cluster's Redis")
        _play([first], lambda: any(  # the guest's grace ran out: a stand-in holds its seat
            m["type"] == "table_update"
            and m["table"]["seats"][1].get("held_by_bot") == "disconnected"
            for m in host.seen))
        _play([first], first.over)  # against the stand-in, to the match's end
        redis.start()
        for log in (log_a, log_b):
            log.wait_for(r"the cluster's Redis at \S+ is back")
        lost = guest.wait(lambda m: m["type"] == "table_lost")
        assert lost == {"type": "table_lost", "table": table, "cause": "seat_released"}
        answer = guest.request("create_table", rules="classic", seats=2)
        assert answer["type"] == "table" and answer["table"]["id"] != table, answer


def test_a_process_killed_while_redis_is_away_has_its_table_taken_over(
        tmp_path: Path, postgres: pg_kit.Cluster) -> None:
    """Redis and the table's process both go (a host that rebooted): once Redis is
    back, the process left takes the table over from the shared journal (the one
    killed never wrote its keys again), and the match ends there. Redis came back
    empty, and the ids the killed process gave out were known only there and in the
    journal: none is handed out again."""
    with ExitStack() as stack:
        redis, _ = stack.enter_context(redis_process(keep=False))
        run = _split(stack, redis.url, postgres.store(), 19)
        b, log_a, log_b, table = run.b, run.log_a, run.log_b, run.table
        latest = Player(run.a)  # the highest player id, given out on A
        latest.hello("Zeynep")
        redis.kill()
        log_a.wait_for("lost the cluster's Redis")
        log_b.wait_for("lost the cluster's Redis")
        run.procs[0].send_signal(signal.SIGKILL)
        run.procs[0].wait()
        redis.start()
        log_b.wait_for(r"the cluster's Redis at \S+ is back")
        log_b.wait_for(r"process p1 \(.+\) is gone, with 1 tables")
        log_b.wait_for(rf"took table {table} over")
        newcomer = Player(b).hello("Emre")
        assert int(newcomer["player"]) > int(latest.welcome["player"]), \
            "a player id the killed process gave out was handed out again"
        run.go_on()


def test_a_takeover_cut_short_by_redis_going_is_made_whole_once_it_is_back(
        tmp_path: Path, postgres: pg_kit.Cluster) -> None:
    """Redis goes in the middle of a takeover: the table is taken, but where its host's
    session lives cannot be asked. The process left lets the half-built table go,
    rather than keep it in its lobby unserved with no member at it, and takes it over
    whole once Redis is back; the match ends there.

    The window is made from outside: a lock on the table's journal row holds the
    takeover between taking the table in Redis and counting its holder on."""
    db = postgres.store()
    with ExitStack() as stack:
        redis, redis_at = stack.enter_context(redis_process(keep=False))
        run = _split(stack, redis.url, db, 31)
        log_b, table = run.log_b, run.table
        run.hold()  # nothing in flight to A when it dies
        key = PREFIX + f"table:{table}"
        owner = redis_at.hash(key)["process"]
        run.procs[0].send_signal(signal.SIGKILL)
        run.procs[0].wait()
        with psycopg.connect(db) as lock:  # (a transaction until the block ends)
            lock.execute("SELECT 1 FROM live_tables WHERE id = %s FOR UPDATE", (table,))
            assert redis_at.eventually(lambda r: r.hash(key).get("process") != owner), \
                "B never took the table"
            redis.kill()
            log_b.wait_for("lost the cluster's Redis")
        log_b.wait_for(rf"table {table} could not be taken over")
        log_b.wait_for(r"taking tables over failed; trying again")
        redis.start()
        log_b.wait_for(rf"took table {table} over")
        run.go_on()


def test_a_process_killed_while_postgresql_is_away_has_its_table_taken_over_once_it_is_back(
        tmp_path: Path, redis: RedisAt) -> None:
    """The shared PostgreSQL stops, and the table's process dies meanwhile: the process
    left finds it gone but cannot read the journal, so it tries again until it can,
    and takes the table over once PostgreSQL is back (nothing else would have made it
    look again: its players stay connected). Meanwhile a request to the table is
    refused at once. The match ends there."""
    with pg_kit.own_cluster() as postgres, ExitStack() as stack:
        run = _split(stack, redis.url, postgres.store(), 29)
        log_b, table, guest = run.log_b, run.table, run.second.player
        run.hold()  # no move in flight: the table comes back as the players left it
        postgres.halt()
        run.procs[0].send_signal(signal.SIGKILL)
        run.procs[0].wait()
        log_b.wait_for(r"process p\d+ \(.+\) is gone, with 1 tables")
        log_b.wait_for(r"taking tables over failed; trying again")
        # Not sent to A, where nobody reads, for a lease (that would say "did not answer").
        refused = guest.request("resync")
        assert (refused["code"], refused["message"]) == (
            "cluster_unavailable", "the server that held this table went away; it is "
                                   "being taken over")
        assert refused["retry_after"] >= 1
        postgres.resume()
        log_b.wait_for(rf"took table {table} over")
        log_b.wait_for(r"taking tables over works again")
        assert "Traceback" not in log_b.text, log_b.text  # (an outage, not a defect)
        run.go_on()


def _turn_of(run: Split, mover: Mover, other: Mover) -> None:
    """Play on, both movers held, until `mover` is offered moves and nothing of the
    `other`'s is in flight."""
    run.hold()
    while mover.offered is None:
        _play([run.first, run.second], lambda: mover.offered is not None
              or other.offered is not None)
        if other.offered is not None:
            other.move(other.offered)
            other.offered = None
    _play([run.first, run.second], lambda: other.pending is None)


def _hosts_turn(run: Split) -> None:
    """The host's turn, on A (`_turn_of`)."""
    _turn_of(run, run.first, run.second)


def _reply(mover: Mover, rid: int) -> Msg:
    """Read `mover`'s messages (acknowledgements kept) until the reply to `rid`."""
    while True:
        for msg in mover.player.seen:
            if msg.get("id") == rid:
                return msg
        assert mover.read(), f"closed before the reply to request {rid}"


def _stored_plays(db: str, table: int) -> dict[str, list[Msg]]:
    """By member: the moves the table's journal holds, in their order there."""
    store = open_store(db)
    try:
        commands = store.read_journal().commands
    finally:
        store.close()
    plays: dict[str, list[Msg]] = {}
    for table_id, _seq, _at, blob in commands:
        record = msgpack.unpackb(bytes(blob))
        if table_id == table and record[0] == "Play":
            plays.setdefault(str(record[1]), []).append(record[2])
    return plays


def test_no_move_is_acknowledged_while_postgresql_is_away_and_lost_with_its_process(
        tmp_path: Path, redis: RedisAt) -> None:
    """The shared PostgreSQL stops mid-match, the host on the table's process A moves,
    and A is killed (SIGKILL) before PostgreSQL is back. The move waits unanswered for
    a journal that cannot commit it: whoever asks anything meanwhile, there or through
    B, is refused at once (`cluster_unavailable`; a newcomer's `hello` too, and closed),
    a ping is answered, and the move dies with A unacknowledged. Once PostgreSQL is
    back B takes the table over, and every move either player saw acknowledged is in
    its stored journal, once, in order; the match ends there."""
    with pg_kit.own_cluster() as postgres, ExitStack() as stack:
        db = postgres.store()
        run = _split(stack, redis.url, db, 29)
        first, second, table = run.first, run.second, run.table
        _hosts_turn(run)
        postgres.halt()
        assert first.offered is not None
        held = first.move(first.offered)
        run.log_a.wait_for(r"the journal could not be written")
        host, guest = first.player, second.player
        host.send("ping")
        pong = _reply(first, host.rid)
        host.send("move", move=first.offered[0])
        refusals = [_reply(first, host.rid), guest.request("resync"),
                    _hello_refused(run.a, name="Yeni")]
        run.procs[0].send_signal(signal.SIGKILL)
        run.procs[0].wait()
        postgres.resume()
        run.log_b.wait_for(rf"took table {table} over")
        stored = _stored_plays(db, table)
        for mover in (first, second):
            member = str(mover.player.welcome["player"])
            assert stored.get(member, []) == mover.acked, \
                f"player {member}: acknowledged {mover.acked}, stored {stored.get(member)}"
        assert not any(m.get("id") == held for m in host.seen), "the move went unanswered"
        assert pong["type"] == "pong"
        for refused in refusals:
            assert (refused["type"], refused.get("code")) == ("error", "cluster_unavailable"), \
                refused
            assert refused["retry_after"] > 0
        run.go_on()


def test_a_ban_made_while_redis_is_away_holds_everywhere_once_it_is_back(
        tmp_path: Path, postgres: pg_kit.Cluster) -> None:
    """The other process cannot be told of a ban while Redis is away; it reads the
    sanctions from the shared store again once Redis is back, and closes what the ban
    covers."""
    with banned_while_redis_is_away(postgres.store()) as away:
        target = away.target
        assert target.ok("ping")["type"] == "pong", "B has not heard of it"
        away.redis.start()
        closed = target.wait(lambda m: m.get("code") == "banned")
        assert closed["type"] == "error"
        assert target.recv() is None


def test_a_woken_process_leaves_the_session_row_that_another_holds_now(
        tmp_path: Path, redis: RedisAt, postgres: pg_kit.Cluster) -> None:
    """The host's connection drops, and its table's process is paused past its lease:
    the other process takes the table over, restoring the host's session from its row
    in the shared journal, and the host resumes there. Meanwhile the host's grace runs
    out in the paused process. Woken, that process lets the host go, and must leave
    the session row alone: it is the new holder's now, what a takeover would restore
    the host from should that one die too."""
    db = postgres.store()
    grace = 8  # past the takeover and the resume; run out before the pause ends
    procs: list[subprocess.Popen[str]] = []
    with ExitStack() as stack:
        (a, log_a), (b, _) = (stack.enter_context(server(redis.url, db, n, procs, grace))
                              for n in range(2))
        host, guest = Player(a), Player(b)
        host.hello("Ayşe")
        guest.hello("Mehmet")
        table = host.ok("create_table", rules="classic", seats=2)["table"]["id"]
        guest.ok("join_table", table=table)
        player = int(host.welcome["player"])
        host.close()
        guest.wait(lambda m: m["type"] == "table_update"
                   and m["table"]["seats"][0].get("connected") is False)
        procs[0].send_signal(signal.SIGSTOP)
        paused = time.monotonic()
        try:
            back, welcome = _resume_when_taken(b, host.welcome)
            assert welcome["table"] == table and time.monotonic() - paused < grace
            # The grace deadline has to pass inside the paused process: real time.
            time.sleep(max(0.0, paused + grace + 1 - time.monotonic()))
        finally:
            procs[0].send_signal(signal.SIGCONT)
        log_a.wait_for(rf"session {player} expired")
        log_a.wait_for(rf"tables \[{table}\] are held by another process now")
        with psycopg.connect(db) as conn:
            rows = conn.execute("SELECT count(*) FROM sessions WHERE player_id = %s",
                                (player,)).fetchone()
        assert rows == (1,), "the woken process deleted the row of a session it let go"
        assert back.ok("resync")["type"] == "table", "and the host plays on at B"


def _guests_turn(run: Split) -> None:
    """The guest's turn, on B (`_turn_of`)."""
    _turn_of(run, run.second, run.first)


def test_a_relayed_move_held_past_the_lease_by_postgresql_gets_one_reply(
        tmp_path: Path, redis: RedisAt) -> None:
    """The shared PostgreSQL stops, and the guest on B moves at its table on A: A
    takes the move and holds its reply until the journal has it, for longer than the
    cluster's lease. B keeps waiting for that reply (A says it holds it), answering
    the guest's pings meanwhile; once PostgreSQL is back the move is answered `ok`,
    once, never refused for a silent owner, and stored once."""
    with pg_kit.own_cluster() as postgres, ExitStack() as stack:
        db = postgres.store()
        run = _split(stack, redis.url, db, 37)
        second, table = run.second, run.table
        _guests_turn(run)
        guest = second.player
        postgres.halt()
        assert second.offered is not None
        held = second.move(second.offered)
        run.log_a.wait_for(r"the journal could not be written")
        # Pings are answered all along, for three leases (one every half second, well
        # within the rate): the move meanwhile is not.
        since = time.monotonic()
        while time.monotonic() - since < 3 * LEASE:
            guest.send("ping")
            assert _reply(second, guest.rid)["type"] == "pong"
            if select.select([guest.sock], [], [], 0.5)[0]:
                assert second.read()
            assert not any(m.get("id") == held for m in guest.seen), \
                [m for m in guest.seen if m.get("id") == held]
        postgres.resume()
        assert _reply(second, held)["type"] == "ok", _reply(second, held)
        guest.send("ping")  # whatever B sent before its pong is read by then
        assert _reply(second, guest.rid)["type"] == "pong"
        replies = [m for m in guest.seen if m.get("id") == held]
        assert len(replies) == 1, replies
        member = str(guest.welcome["player"])
        assert poll_until(lambda: _stored_plays(db, table).get(member) == second.acked,
                          BACKSTOP, "the guest's moves stored once each", 0.2)
        assert "no reply from the owner" not in _log_of(run.log_b)
