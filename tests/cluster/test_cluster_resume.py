"""A session outlives a pause of its home: a player whose process was stopped (SIGSTOP)
past its lease resumes with its token on another process, at its table, as the
player of a killed process does, even while its table is being taken over. A table
whose process is gone is never said not to exist while it waits to be taken over."""

from __future__ import annotations

import random
import signal
import subprocess
from contextlib import ExitStack
from pathlib import Path

import msgpack
import pg_kit
from poll_kit import poll_until

from cluster.cluster_kit import BACKSTOP, LEASE, Msg, Player
from cluster.outage_kit import GRACE, server
from cluster.redis_kit import RedisAt
from cluster.test_cluster_drain import LONG
from cluster.test_cluster_failover import (
    Mover,
    _ends_keeping_every_ack,
    _one_deal_started,
    _resume,
)
from cluster.test_cluster_outage import _split
from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.cluster.redis import PREFIX
from pisyedili.server.cluster.redis.scripts import TAKE_SESSION
from pisyedili.server.interproc.messages import VERSION
from pisyedili.server.store.journal import token_hash


def _guest_connected(msg: Msg) -> bool | None:
    """Whether a `table_update` shows the guest's seat (seat 1) connected."""
    if msg["type"] != "table_update":
        return None
    connected: bool | None = msg["table"]["seats"][1].get("connected")
    return connected


def test_a_player_whose_home_was_paused_past_its_lease_resumes_elsewhere_at_its_table(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """Three processes on one journal: the table on C, its guest's home A. A is stopped
    until its lease and the guest's session key (renewed with it) ran out in Redis:
    nothing there names the guest's home any more, and C holds the guest's seat as a
    visitor's. The guest resumes through B: welcomed with its token, its table named
    in the welcome (C answered for it first), and the table's snapshot follows, its
    seat connected. Woken, A finds the guest's old connection closed, and says so to
    C, which takes no such word from a former home: the seat stays connected."""
    db = postgres.store()
    procs: list[subprocess.Popen[str]] = []
    with ExitStack() as stack:
        (a, log_a), (b, _), (c, _) = (stack.enter_context(server(redis.url, db, n, procs))
                                      for n in range(3))
        host, guest, table = _one_deal_started(c, a)
        session = PREFIX + f"session:{token_hash(guest.welcome['token']).hex()}"
        assert redis.hash(session), "the guest's session is in Redis"
        home = redis.hash(session)["process"]
        procs[0].send_signal(signal.SIGSTOP)
        try:
            poll_until(lambda: redis.command("EXISTS", PREFIX + f"process:{home}") == 0
                       and redis.command("EXISTS", session) == 0, BACKSTOP,
                       "the paused home's lease and the guest's session key to run out")
            guest.close()
            gone = host.wait(lambda m: _guest_connected(m) is False)  # (its home gone)
            mark = host.seen.index(gone) + 1
            back, welcome = _resume(b, guest.welcome)
            assert (welcome["resumed"], welcome.get("table")) == (True, table), welcome
            snapshot = back.wait(lambda m: m["type"] == "table")
            assert snapshot["table"]["id"] == table
            assert snapshot["you"]["seat"] == 1
            assert [s["connected"] for s in snapshot["table"]["seats"]] == [True, True]
            host.wait(lambda m: _guest_connected(m) is True, since=mark)
            since = len(host.seen)
        finally:
            procs[0].send_signal(signal.SIGCONT)
        # Woken, A finds the guest's old connection closed: the table, which hears the
        # guest's new home now, takes no word of that from A.
        log_a.wait_for(rf"session {guest.welcome['player']} disconnected")
        back.ok("resync")  # through B to C, after A's word there
        host.ok("ping")  # answered by C after that
        assert not [m for m in host.seen[since:] if _guest_connected(m) is False], \
            "the table took the guest for gone on its woken former home's word"


def test_a_join_of_a_table_waiting_to_be_taken_over_is_refused_for_a_while_not_denied(
        redis: RedisAt, tmp_path: Path) -> None:
    """The table's process (A) is killed while PostgreSQL is away: B cannot take the
    table over yet, and no process holds it in the cluster (its key ran out). A player
    on B who joins it by its id is told to try again (`cluster_unavailable`, with
    `retry_after`), not that there is no such table; once PostgreSQL is back and B
    took the table over, the same join lets the player watch its match."""
    with pg_kit.own_cluster() as postgres, ExitStack() as stack:
        run = _split(stack, redis.url, postgres.store(), 29)
        joiner = Player(run.b)
        joiner.hello("Zeynep")
        run.hold()  # (no move acknowledged from memory alone while the store is away)
        postgres.halt()
        run.procs[0].send_signal(signal.SIGKILL)
        run.procs[0].wait()
        run.log_b.wait_for(r"process p\d+ \(.+\) is gone, with 1 tables")
        poll_until(lambda: redis.command("EXISTS", PREFIX + f"table:{run.table}") == 0,
                   BACKSTOP, "the dead process's table key to run out")
        refused = joiner.request("join_table", table=run.table)
        assert refused["code"] == "cluster_unavailable", refused
        assert refused["retry_after"] >= 1
        postgres.resume()
        run.log_b.wait_for(rf"took table {run.table} over")
        assert joiner.ok("join_table", table=run.table)["table"]["id"] == run.table


def _home_killed_its_record_naming_another(
        redis: RedisAt, postgres: pg_kit.Cluster, stack: ExitStack, expires_ms: int
) -> tuple[int, Player, str, dict[str, str]]:
    """Three processes (A, B, C) and a player at home in A's lobby, A killed; the
    session's record in Redis made to name C, alive, which does not hold it, for
    `expires_ms` more: as after a race where a woken process let a session go while the
    process taking its table over called the session home there. B's port, the
    player, its record's key and C's own player's record."""
    db = postgres.store()
    procs: list[subprocess.Popen[str]] = []
    a, b, c = (stack.enter_context(server(redis.url, db, n, procs))[0] for n in range(3))
    player, other = Player(a), Player(c)
    player.hello("Ayşe")
    other.hello("Mehmet")
    session = PREFIX + f"session:{token_hash(player.welcome['token']).hex()}"
    live = redis.hash(PREFIX + f"session:{token_hash(other.welcome['token']).hex()}")
    poll_until(lambda: redis.hash(session), BACKSTOP, "the session's record")
    procs[0].send_signal(signal.SIGKILL)
    procs[0].wait()
    redis.command("HSET", session, "process", live["process"])
    redis.command("PEXPIRE", session, str(expires_ms))
    return b, player, session, live


def test_a_session_whose_record_names_a_live_process_that_lets_it_be_resumes_once_it_ran_out(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """A player's home (A) is killed; its session's record in Redis names C, alive,
    which does not hold it, as after a race where a woken process let a session go
    while the process taking its table over called the session home there. A resume
    through B asks C, which says no: the journal still keeps the session, so B asks
    again until the record runs out, then rebuilds the session (the same player)."""
    with ExitStack() as stack:
        b, player, session, live = _home_killed_its_record_naming_another(
            redis, postgres, stack, expires_ms=2000)
        _, welcome = _resume(b, player.welcome)
        assert (welcome["resumed"], welcome["player"]) == (True, player.welcome["player"])
        assert redis.hash(session)["process"] not in (live["process"], "")


def test_a_player_rebuilt_elsewhere_while_its_table_is_being_taken_over_is_welcomed_at_it(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """The table and its host's session are A's, its guest's B's; A is killed. B takes
    the table over, and stalls there: Redis's answer to where the host's session lives
    is held back. C, started meanwhile, rebuilds the host's session from the journal as
    the host resumes through it, and asks every process which table seats the host: B,
    placing that table's members, says its own. The host is welcomed at its table, and
    once B goes on (it calls the host home to C), the snapshot follows, its seat
    connected."""
    db = postgres.store()
    held = pg_kit.HeldReply(redis.url)
    procs: list[subprocess.Popen[str]] = []
    with ExitStack() as stack:
        a, _ = stack.enter_context(server(redis.url, db, 0, procs, extra=LONG))
        b, _ = stack.enter_context(server(held.url, db, 1, procs, extra=LONG))
        host, _, table = _one_deal_started(a, b)
        held.arm(f"{PREFIX}session:{token_hash(host.welcome['token']).hex()}".encode())
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait()
        try:
            poll_until(held.cut.is_set, BACKSTOP, "B to ask where the host's session lives")
            c, _ = stack.enter_context(server(redis.url, db, 2, procs, extra=LONG))
            back, welcome = _resume(c, host.welcome)
            assert (welcome["resumed"], welcome.get("table")) == (True, table), welcome
        finally:
            held.release()
        back.seated_again(table)
    held.close()


def test_a_player_rebuilt_elsewhere_before_its_table_s_taker_placed_anyone_is_welcomed_at_it(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """The table and its host's session are A's, its guest's B's; A is killed. B claims
    the table, and stalls as it counts itself the table's holder in the journal (the
    answer held back): it has not read who sits there yet. C, started meanwhile,
    rebuilds the host's session from the journal as the host resumes through it, and
    asks every process which table seats the host: B says it is taking tables over, so
    C asks again until B placed their members. The host is welcomed at its table, and
    the snapshot follows."""
    db = postgres.store()
    held = pg_kit.HeldReply(db)
    procs: list[subprocess.Popen[str]] = []
    with ExitStack() as stack:
        a, _ = stack.enter_context(server(redis.url, db, 0, procs, extra=LONG))
        b, _ = stack.enter_context(server(redis.url, held.url, 1, procs, extra=LONG))
        host, _, table = _one_deal_started(a, b)
        held.arm(b"UPDATE live_tables SET holder = holder + 1")
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait()
        try:
            poll_until(held.cut.is_set, BACKSTOP, "B to count itself the table's holder")
            c, log_c = stack.enter_context(server(redis.url, db, 2, procs, extra=LONG))
            back = Player(c)
            back.send("hello", protocol=PROTOCOL_VERSION, token=host.welcome["token"],
                      name=host.welcome["name"])
            log_c.wait_for(rf"session {host.welcome['player']} rebuilt here waits for its "
                           "welcome")
        finally:
            held.release()
        welcome = back.wait(lambda m: m.get("id") == back.rid)
        assert (welcome["type"], welcome.get("table")) == ("welcome", table), welcome
        snapshot = back.wait(lambda m: m["type"] == "table")
        assert (snapshot["table"]["id"], snapshot["you"]["seat"]) == (table, 0)
    held.close()


def test_a_player_rebuilt_elsewhere_whose_table_s_taker_restored_it_is_welcomed_at_it(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """The table and its host's session are A's, its guest's B's; A is killed. B takes
    the table over and restores the host's session from the journal, its own from
    then on. The session's record in Redis is then made to name A again, as a woken A
    writes it as it resumes the host once more, just before it is killed for good. C
    rebuilds the host's session (its record names a gone process) as the host resumes
    through it, and asks every process which table seats the host: B, which holds a
    copy of the session, lets it go to C and says its table. The host is welcomed at
    its table, and the snapshot follows, its seat connected."""
    db = postgres.store()
    procs: list[subprocess.Popen[str]] = []
    with ExitStack() as stack:
        a, _ = stack.enter_context(server(redis.url, db, 0, procs, extra=LONG))
        b, log_b = stack.enter_context(server(redis.url, db, 1, procs, extra=LONG))
        host, _, table = _one_deal_started(a, b)
        session = PREFIX + f"session:{token_hash(host.welcome['token']).hex()}"
        home = redis.hash(session)["process"]
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait()
        log_b.wait_for(rf"took table {table} over")
        # B's writes go to Redis in order: once a newcomer's id is read there, the
        # host's record B wrote as it restored the session is in.
        Player(b).hello("Zeynep")
        assert redis.hash(session)["process"] not in ("", home), "B holds the session"
        redis.command("HSET", session, "process", home)  # (for a lease of A's)
        redis.command("PEXPIRE", session, str(int(BACKSTOP * 1000)))
        c, _ = stack.enter_context(server(redis.url, db, 2, procs, extra=LONG))
        back, welcome = _resume(c, host.welcome)
        assert (welcome["resumed"], welcome.get("table")) == (True, table), welcome
        back.seated_again(table)
        log_b.wait_for(rf"session {host.welcome['player']} is held by another process now")


def test_a_former_home_s_late_request_leaves_a_session_homed_here_as_it_is(
        redis: RedisAt, postgres: pg_kit.Cluster) -> None:
    """The guest, homed on B at A's table, resumes through A, which takes its session
    in. A request B sent for it before it learnt that (here written into A's channel
    as B would have) comes late to A: it is a former home's word, and A makes no
    stand-in for the guest over its own session, which plays on at its seat."""
    db = postgres.store()
    with server(redis.url, db, 0) as (a, _), server(redis.url, db, 1) as (b, _):
        host, guest, table = _one_deal_started(a, b)
        held = PREFIX + f"session:{token_hash(guest.welcome['token']).hex()}"
        owner = redis.eventually(lambda r: r.hash(PREFIX + f"table:{table}").get("process"))
        former = redis.eventually(lambda r: r.hash(held).get("process"))
        assert former != owner
        back, welcome = _resume(a, guest.welcome)
        assert (welcome["resumed"], welcome["table"]) == (True, table), welcome
        poll_until(lambda: redis.hash(held).get("process") == owner, BACKSTOP,
                   "the guest's session to be homed at the table's process")
        player = str(guest.welcome["player"])
        late = {"k": "req", "v": VERSION, "from": former, "p": player,
                "name": guest.welcome["name"], "features": [], "type": "chat",
                "msg": {"type": "chat", "id": 99, "text": "late"}, "rid": 99, "n": 1}
        heard = redis.command("PUBLISH", f"{PREFIX}{redis.address.db}:to:{owner}",
                              msgpack.packb(late, use_bin_type=True))
        assert heard == 1
        # The guest at A plays the deal out as its own session, which the late request
        # would have left to a stand-in: the updates for it would go nowhere.
        rng = random.Random(37)
        first, second = Mover(host, rng), Mover(back, rng)
        offered = [m["moves"] for m in back.seen if "moves" in m and m["type"] != "error"]
        if offered and back.seen[-1].get("moves") is not None:
            second.move(offered[-1])
        _ends_keeping_every_ack([first, second], a)


def test_a_player_rebuilt_where_its_table_s_takeover_was_cut_short_is_welcomed_at_it(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """The table and its host's session are A's, its guest's B's; A is killed, and the
    host resumes through B at once. B's sweeps, the one A's end started and the one
    the resume waits for, each claim the table and are cut short as they count B its
    holder in the journal (the answer lost): the table is not taken over yet as B
    takes the host's session in the cluster and rebuilds it from the journal. B takes
    the table over before the welcome, which names it, and the snapshot follows, the
    host's seat connected."""
    db = postgres.store()
    lost = pg_kit.LostReply(db)
    procs: list[subprocess.Popen[str]] = []
    with ExitStack() as stack:
        a, _ = stack.enter_context(server(redis.url, db, 0, procs, extra=LONG))
        b, log_b = stack.enter_context(server(redis.url, lost.url, 1, procs, extra=LONG))
        host, _, table = _one_deal_started(a, b)
        count = b"UPDATE live_tables SET holder = holder + 1"
        lost.arm(count, count)
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait()
        back, welcome = _resume(b, host.welcome)
        assert (welcome["resumed"], welcome.get("table")) == (True, table), welcome
        log_b.wait_for(rf"took table {table} over")
        back.seated_again(table)
    lost.close()


def test_a_resume_whose_session_take_is_never_answered_is_told_to_try_again(
        redis: RedisAt, postgres: pg_kit.Cluster) -> None:
    """A player in the lobby of A, which is killed: its token resumes through B, which
    takes the session in Redis for itself (its home is gone). Redis does so, but its
    answer does not reach B in time (held back on B's link, as when B is paused with
    it unread): the resume is refused `cluster_unavailable`, to be tried again, not
    `internal_error`, which a client takes for its session lost; tried again, it is
    welcomed, the same player."""
    db = postgres.store()
    held = pg_kit.HeldReply(redis.url)
    procs: list[subprocess.Popen[str]] = []
    with ExitStack() as stack:
        a, _ = stack.enter_context(server(redis.url, db, 0, procs))
        b, _ = stack.enter_context(server(held.url, db, 1, procs))
        player = Player(a)
        welcome = player.hello("Ayşe")
        session = PREFIX + f"session:{token_hash(welcome['token']).hex()}"
        poll_until(lambda: redis.hash(session), BACKSTOP, "the session's record")
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait()
        held.arm(TAKE_SESSION.encode())
        try:
            first = Player(b)
            refused = first.request("hello", protocol=PROTOCOL_VERSION,
                                    token=welcome["token"], name=welcome["name"])
            assert held.cut.is_set(), refused
            assert refused["code"] == "cluster_unavailable", refused
        finally:
            held.release()
        _, back = _resume(b, welcome)
        assert (back["resumed"], back["player"]) == (True, welcome["player"]), back
    held.close()


def test_a_copy_of_a_session_another_process_homes_forgets_it_keeping_its_journal_row(
        redis: RedisAt, postgres: pg_kit.Cluster) -> None:
    """A player's session at B, its client gone, is a stale copy: its record in Redis
    is made to name A, as when A's takeover restored the session while B rebuilt it
    from the journal for a client that had hung up. B forgets its copy as its grace
    ends, and leaves the session's row in the shared journal: A's. A is killed, and
    the player's token still resumes, rebuilt from that row, not `bad_token`."""
    db = postgres.store()
    procs: list[subprocess.Popen[str]] = []
    with ExitStack() as stack:
        a, _ = stack.enter_context(server(redis.url, db, 0, procs))
        b, log_b = stack.enter_context(server(redis.url, db, 1, procs))
        there = Player(a).hello("Zeynep")
        player = Player(b)
        welcome = player.hello("Ayşe")
        key = PREFIX + f"session:{token_hash(welcome['token']).hex()}"
        other = redis.eventually(lambda r: r.hash(
            PREFIX + f"session:{token_hash(there['token']).hex()}").get("process"))
        assert redis.eventually(lambda r: r.hash(key).get("process")) != other
        player.close()
        poll_until(lambda: 0 < redis.command("PTTL", key) <= GRACE * 1000, BACKSTOP,
                   "B to keep the away session for its grace only")
        redis.command("HSET", key, "process", other)
        redis.command("PEXPIRE", key, str(int(BACKSTOP * 1000)))
        log_b.wait_for(rf"session {welcome['player']} expired")
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait()
        _, back = _resume(b, welcome)
        assert (back["resumed"], back["player"]) == (True, welcome["player"]), back


def test_a_resume_that_outlasts_its_wait_while_the_journal_keeps_the_session_is_retried(
        redis: RedisAt, postgres: pg_kit.Cluster) -> None:
    """A player's home (A) is killed; its session's record in Redis names C, alive,
    which does not hold it, and lasts longer than a resume waits (as an away session's
    record lasts its grace). A resume through B asks C, which says no, and asks again
    until its wait is over: the journal still keeps the session, so the player is told
    to try again (`cluster_unavailable`), not that its token is unknown; tried again
    once the record ran out, it is welcomed, the same player."""
    with ExitStack() as stack:
        b, player, _, _ = _home_killed_its_record_naming_another(
            redis, postgres, stack, expires_ms=int((4 * LEASE + 5) * 1000))
        first = Player(b)
        refused = first.request("hello", protocol=PROTOCOL_VERSION,
                                token=player.welcome["token"], name=player.welcome["name"])
        assert refused["code"] == "cluster_unavailable", refused
        _, welcome = _resume(b, player.welcome)
        assert (welcome["resumed"], welcome["player"]) == (True, player.welcome["player"])
