"""A process taken for dead that wakes (it was paused past its lease) deletes nothing
in Redis that the process which took its table over holds now: not as it finds its
lease had run out, nor as it stops; and a session taken over meanwhile is no longer
homed there."""

from __future__ import annotations

import random
import signal
import subprocess
from contextlib import ExitStack
from pathlib import Path

import pg_kit
from poll_kit import poll_until

from cluster.cluster_kit import BACKSTOP, Player, listed, watched_table
from cluster.outage_kit import server
from cluster.redis_kit import RedisAt
from cluster.test_cluster_failover import (
    Mover,
    _ends_keeping_every_ack,
    _one_deal_started,
    _play,
    _record,
    _resume,
    _taken_over,
)
from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.cluster.redis import PREFIX
from pisyedili.server.people import names
from pisyedili.server.store.journal import token_hash


def _held(redis: RedisAt, table: int, host: Player) -> dict[str, object]:
    """What Redis says of the table, the host's session and name, and the connections
    from 127.0.0.1 (by process)."""
    name_keys = [PREFIX + f"name:{key}" for key in names.keys(host.welcome["name"])]
    session = PREFIX + f"session:{token_hash(host.welcome['token']).hex()}"
    return {"table": redis.hash(PREFIX + f"table:{table}").get("process"),
            "session": redis.hash(session).get("process"),
            "name": [redis.command("GET", key) for key in name_keys],
            "conns": redis.hash(PREFIX + "conns:127.0.0.1")}


def test_a_process_woken_past_its_lease_deletes_nothing_of_the_new_holder(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """SIGSTOP of the table's process (A) past its lease: B takes the table over, and
    with it the host's session and name (the host's connection is still A's). Woken,
    A finds its lease had run out and lets go of what B holds now; stopped then with
    SIGTERM, it deletes none of B's keys (nor B's count of an address's connections).
    A third process started afterwards finds the table held (it takes nothing over),
    the host's token resumes through it at B, and the match ends there with every
    move acknowledged, the guest never hung up."""
    db = postgres.store()
    procs: list[subprocess.Popen[str]] = []
    with ExitStack() as stack:
        (a, log_a), (b, _) = (stack.enter_context(server(redis.url, db, n, procs))
                              for n in range(2))
        owner = procs[0]
        host, guest, table = _one_deal_started(a, b)
        rng = random.Random(23)
        first, second = Mover(host, rng), Mover(guest, rng)
        _play([first, second], lambda: len(first.acked) + len(second.acked) >= 4)
        # Nothing more for A's copy of the table to write once it wakes (a write would
        # meet the journal's fence, which lets the copy go): no move on its way to it.
        first.hold = second.hold = True
        _play([first, second], lambda: first.pending is None and second.pending is None)
        was = _held(redis, table, host)
        owner.send_signal(signal.SIGSTOP)
        try:
            _taken_over(second)
        finally:
            owner.send_signal(signal.SIGCONT)
        log_a.wait_for(r"the lease of process \S+ had run out", BACKSTOP)
        log_a.wait_for(r"the session of player \S+ is held by process", BACKSTOP)
        held = _held(redis, table, host)
        new_holder = held["table"]
        assert new_holder not in (None, was["table"]), held
        assert held["session"] == new_holder
        assert held["name"] == [str(host.welcome["player"])]
        assert isinstance(held["conns"], dict) and held["conns"].get(new_holder) == "1"
        owner.send_signal(signal.SIGTERM)
        assert owner.wait(BACKSTOP) == 0
        after = _held(redis, table, host)
        assert after == {**held, "conns": {new_holder: "1"}}, "A deleted B's keys"

        c, _ = stack.enter_context(server(redis.url, db, 2, procs))
        back, welcome = _resume(c, host.welcome)
        assert (welcome["resumed"], welcome["table"]) == (True, table)
        first.player, first.pending, first.hold = back, None, False
        second.hold = False
        if second.offered is not None:  # the guest's turn: offered while it held
            second.move(second.offered)
        _ends_keeping_every_ack([first, second], b)
        assert not any(m.get("code") == "shutting_down" for m in guest.seen)
        assert redis.hash(PREFIX + f"table:{table}")["process"] == new_holder


def test_a_move_held_by_a_paused_home_is_never_played_once_its_player_resumed_elsewhere(
        redis: RedisAt, postgres: pg_kit.Cluster) -> None:
    """The guest's home (B) is paused (SIGSTOP) past its lease with the guest's move
    unread on the guest's connection there. The guest resumes through A, the table's
    process, which takes its session over, and waits there with its turn. Woken, B
    reads that move, and forwards nothing while it may have been taken for dead: the
    move is not played behind the player's back, and the same move sent through A now
    is accepted. The match's record holds exactly the moves acknowledged."""
    db = postgres.store()
    procs: list[subprocess.Popen[str]] = []
    with ExitStack() as stack:
        (a, _), (b, log_b) = (stack.enter_context(server(redis.url, db, n, procs))
                              for n in range(2))
        host, guest, table = _one_deal_started(a, b)
        rng = random.Random(31)
        first, second = Mover(host, rng), Mover(guest, rng)
        second.hold = True
        _play([first, second], lambda: second.offered is not None)
        held = PREFIX + f"session:{token_hash(guest.welcome['token']).hex()}"
        home = redis.eventually(lambda r: r.hash(held).get("process"))
        assert second.offered is not None
        stale = second.offered
        procs[1].send_signal(signal.SIGSTOP)
        try:
            second.move(stale)  # into B's socket, read only once B wakes
            sent = second.pending
            assert sent is not None
            poll_until(lambda: redis.command("EXISTS", PREFIX + f"process:{home}") == 0,
                       BACKSTOP, "the paused process's lease to run out")
            there, welcome = _resume(a, guest.welcome)
            assert (welcome["resumed"], welcome["table"]) == (True, table), welcome
        finally:
            procs[1].send_signal(signal.SIGCONT)
        log_b.wait_for(r"the session of player \S+ is held by process", BACKSTOP)
        second.player, second.pending, second.hold = there, None, False
        again = there.request("move", move=sent[1])
        assert again["type"] == "ok", f"the move held by B was played meanwhile: {again}"
        second.acked.append(sent[1])
        _ends_keeping_every_ack([first, second], a)
        assert len(_record(a)) == len(first.acked) + len(second.acked)


def test_a_process_woken_past_its_lease_lists_its_tables_again(
        redis: RedisAt, tmp_path: Path) -> None:
    """Each process on a file of its own, so nobody can take A's table over. SIGSTOP
    of A past its lease: B takes A for gone and its lobby drops A's table. Woken, A
    still holds the table (its host still connected), and B's lobby lists it again (an
    `add` to its subscribers, a page read there) with nothing at the table changed to
    tell it. A finds its lease lapsed at its next beat, or, its replies overdue after
    the pause, makes its link to Redis again first: either way it writes its keys again
    and tells its row."""
    procs: list[subprocess.Popen[str]] = []
    with ExitStack() as stack:
        (a, _), (b, _) = (stack.enter_context(server(redis.url, tmp_path / f"{n}.db",
                                                     n, procs))
                          for n in range(2))
        watcher, host, table, told = watched_table(b, a)
        added = told("add", 0)
        procs[0].send_signal(signal.SIGSTOP)
        try:
            since = len(watcher.seen)
            told("remove", since)
            assert table not in listed(b)
        finally:
            procs[0].send_signal(signal.SIGCONT)
        again = told("add", len(watcher.seen))
        assert again["summary"] == added["summary"]
        assert table in listed(b)
        host.ok("ping")  # (its connection at A lived through the pause)


def test_a_process_woken_past_its_lease_lets_go_of_a_session_taken_over(
        redis: RedisAt, postgres: pg_kit.Cluster) -> None:
    """A player in the lobby of A, which is paused (SIGSTOP) past its lease: the
    player's token resumes through B, which rebuilds the session from the journal.
    Woken, A finds the session B's: it hangs up on the player's old connection
    (`shutting_down`) and keeps nothing of it, so the token resumed through A again
    moves the session from B (its connection there is told `replaced`): one home."""
    db = postgres.store()
    procs: list[subprocess.Popen[str]] = []
    with ExitStack() as stack:
        (a, log_a), (b, _) = (stack.enter_context(server(redis.url, db, n, procs))
                              for n in range(2))
        player = Player(a)
        welcome = player.hello("Ayşe")
        held = PREFIX + f"session:{token_hash(welcome['token']).hex()}"
        home = redis.eventually(lambda r: r.hash(held).get("process"))
        procs[0].send_signal(signal.SIGSTOP)
        try:
            poll_until(lambda: redis.command("EXISTS", PREFIX + f"process:{home}") == 0,
                       BACKSTOP, "the paused process's lease to run out")
            there, moved = _resume(b, welcome)
            assert (moved["resumed"], moved["player"]) == (True, welcome["player"]), moved
        finally:
            procs[0].send_signal(signal.SIGCONT)
        log_a.wait_for(r"the session of player \S+ is held by process", BACKSTOP)
        while player.recv() is not None:
            pass
        assert any(m.get("code") == "shutting_down" for m in player.seen), player.seen[-3:]
        _, back = _resume(a, welcome)
        assert (back["resumed"], back["player"]) == (True, welcome["player"]), back
        while there.recv() is not None:
            pass
        assert there.seen[-1]["type"] == "replaced", there.seen[-3:]


def test_a_resume_read_as_its_process_wakes_is_welcomed_once_it_checked_its_keys(
        redis: RedisAt, postgres: pg_kit.Cluster) -> None:
    """SIGSTOP of the table's process (A) past its lease: B takes the table over, and
    with it the host's session. The host's token is sent to A while A is still
    stopped, so A reads it as it wakes, in doubt of what it holds, its copy of the
    session still there. A welcomes it only once it checked its keys: the session is
    B's, so A has B hand it over; the welcome names the table, at B now, whose
    snapshot follows, and the connection is not hung up. The session's record names
    A, and the match ends with every move acknowledged."""
    db = postgres.store()
    procs: list[subprocess.Popen[str]] = []
    with ExitStack() as stack:
        (a, log_a), (b, _) = (stack.enter_context(server(redis.url, db, n, procs))
                              for n in range(2))
        host, guest, table = _one_deal_started(a, b)
        rng = random.Random(37)
        first, second = Mover(host, rng), Mover(guest, rng)
        _play([first, second], lambda: len(first.acked) + len(second.acked) >= 4)
        first.hold = second.hold = True  # nothing on its way to A's copy of the table
        _play([first, second], lambda: first.pending is None and second.pending is None)
        held = PREFIX + f"session:{token_hash(host.welcome['token']).hex()}"
        home = redis.hash(held).get("process")
        procs[0].send_signal(signal.SIGSTOP)
        try:
            _taken_over(second)
            assert redis.hash(held).get("process") not in (None, home)
            woken = Player(a)  # (the kernel takes the connection in; A reads it awake)
            woken.send("hello", protocol=PROTOCOL_VERSION, token=host.welcome["token"],
                       name=host.welcome["name"])
        finally:
            procs[0].send_signal(signal.SIGCONT)
        log_a.wait_for(r"the session of player \S+ is held by process", BACKSTOP)
        welcome = woken.wait(lambda m: m.get("id") == woken.rid)
        assert (welcome["type"], welcome.get("resumed"), welcome.get("table")) == (
            "welcome", True, table), welcome
        woken.welcome = welcome
        snapshot = woken.wait(lambda m: m["type"] == "table" and m["table"]["id"] == table)
        assert redis.hash(held).get("process") == home
        first.player, first.pending, first.hold = woken, None, False
        second.hold = False
        if snapshot.get("moves"):  # the host's turn, offered in the snapshot read here
            first.move(snapshot["moves"])
        if second.offered is not None:  # the guest's turn: offered while it held
            second.move(second.offered)
        _ends_keeping_every_ack([first, second], b)
        assert not any(m.get("code") == "shutting_down" for m in woken.seen)
