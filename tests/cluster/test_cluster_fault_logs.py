"""Faults a cluster lives through (its store or its Redis out of reach, and back) are
logged as what they are, with what the process does about them, and no traceback: a
traceback in a process's log is kept for a defect."""

from __future__ import annotations

import re
import signal
import subprocess
from contextlib import ExitStack
from pathlib import Path

import pg_kit
from poll_kit import poll_until

from cluster.cluster_kit import BACKSTOP, Player
from cluster.outage_kit import banned_while_redis_is_away, server
from cluster.redis_kit import LostRedisReply, RedisAt, SilentRedis
from cluster.test_cluster_failover import _one_deal_started
from cluster.test_cluster_outage import _hello_refused
from pisyedili.server.cluster.redis import PREFIX
from pisyedili.server.store.journal import token_hash


def test_the_sanctions_unread_as_the_store_is_away_are_read_once_it_is_back(
        tmp_path: Path) -> None:
    """Redis goes, an operator bans a player connected to the other process (nobody can
    tell it), then PostgreSQL stops too, and Redis comes back: that process cannot read
    the sanctions again. It says so, with no traceback, and reads them again until
    PostgreSQL is back, then closes the banned player's connection."""
    with pg_kit.own_cluster() as postgres, \
            banned_while_redis_is_away(postgres.store()) as away:
        redis, log_b, target = away.redis, away.log_b, away.target
        postgres.halt()
        redis.start()
        log_b.wait_for(r"the cluster's Redis at \S+ is back")
        log_b.wait_for(r"the sanctions could not be read from the store again \(.+\): a "
                       r"ban or mute made while the cluster was out of reach is not in "
                       r"force here yet; reading them again every \d+ s")
        assert target.ok("ping")["type"] == "pong", "B read the ban from a store that is away"
        postgres.resume()
        log_b.wait_for(r"the sanctions are read from the store again: 1 new in force here")
        closed = target.wait(lambda m: m.get("code") == "banned")
        assert closed["type"] == "error"
        assert "Traceback" not in log_b.text, log_b.text


def test_redis_lost_again_as_the_keys_are_written_again_is_said_so(
        redis: RedisAt, tmp_path: Path) -> None:
    """The process's link to Redis is cut as it renews its lease, and cut again as it
    writes its keys again once it is back (a Redis that went again, or a network that
    flapped). The process says Redis went again before its keys were all written, with
    no traceback, and writes them once the link holds."""
    relay = LostRedisReply(redis.url)
    with ExitStack() as stack:
        _, log = stack.enter_context(server(relay.url, tmp_path / "a.db", 0))
        joined = re.search(r"joined the cluster at \S+ as process (p\d+)", log.text)
        assert joined is not None, log.text
        lease = f"{PREFIX}process:{joined.group(1)}".encode()
        relay.arm(lease, b"SET\r\n$%d\r\n%s" % (len(lease), lease))
        log.wait_for(r"lost the cluster's Redis")
        log.wait_for(r"the cluster's Redis at \S+ is back")
        log.wait_for(r"cluster: Redis at \S+ went again before this process's keys were "
                     r"all written again: they are written again once it is back")
        log.wait_for(r"the cluster's Redis at \S+ is back")
        assert relay.cut.is_set()
        assert redis.eventually(lambda r: r.command("EXISTS", lease.decode())) == 1
        assert "Traceback" not in log.text, log.text
    relay.close()


def test_a_connection_counted_as_redis_goes_is_counted_here(
        redis: RedisAt, tmp_path: Path) -> None:
    """The link to Redis is cut as the process counts a new connection in the cluster
    (the per-address cap): the connection is counted by this process alone, as while
    Redis is away, with no traceback; it is served, and counted in Redis once the link
    is back."""
    relay = LostRedisReply(redis.url)
    conns = f"{PREFIX}conns:127.0.0.1"
    with ExitStack() as stack:
        port, log = stack.enter_context(server(relay.url, tmp_path / "a.db", 0))
        joined = re.search(r"joined the cluster at \S+ as process (p\d+)", log.text)
        assert joined is not None, log.text
        relay.arm(conns.encode())
        player = Player(port)
        log.wait_for(r"lost the cluster's Redis")
        log.wait_for(r"the cluster's Redis at \S+ is back")
        assert relay.cut.is_set()
        player.hello("Elif")
        assert redis.eventually(lambda r: r.command("HGET", conns, joined.group(1))) == "1"
        assert "Traceback" not in log.text, log.text
    relay.close()


def test_a_resume_that_needs_the_store_while_it_is_away_is_refused_for_now(
        redis: RedisAt, tmp_path: Path) -> None:
    """A token no process holds is looked for in the shared journal, which is out of
    reach: the resume is refused with `cluster_unavailable` and when to try again (not
    `internal_error`), and the process says why, with no traceback. Once the store is
    back the same token is answered: unknown."""
    with pg_kit.own_cluster() as postgres, ExitStack() as stack:
        port, log = stack.enter_context(server(redis.url, postgres.store(), 0))
        postgres.halt()
        refused = _hello_refused(port, name="Elif", token="0" * 32)
        assert refused["code"] == "cluster_unavailable" and refused["retry_after"] > 0, refused
        log.wait_for(r"hello from 127\.0\.0\.1 refused for now: the store could not be "
                     r"read \(.+\); told cluster_unavailable, to try again")
        postgres.resume()
        assert poll_until(lambda: _hello_refused(port, name="Elif", token="0" * 32)["code"] != (
            "cluster_unavailable"), BACKSTOP, "the store read again")
        assert _hello_refused(port, name="Elif", token="0" * 32)["code"] == "bad_token"
        assert "Traceback" not in log.text, log.text


def test_redis_silent_past_the_reply_timeout_is_said_so(
        redis: RedisAt, tmp_path: Path) -> None:
    """Redis stops answering on the process's link (it hangs, or the network does):
    past the reply timeout the process says Redis did not answer and that it makes its
    link again, once, with no traceback, and is back once it did."""
    relay = SilentRedis(redis.url)
    with ExitStack() as stack:
        _, log = stack.enter_context(server(relay.url, tmp_path / "a.db", 0))
        joined = re.search(r"joined the cluster at \S+ as process (p\d+)", log.text)
        assert joined is not None, log.text
        relay.arm(f"{PREFIX}process:{joined.group(1)}".encode())
        log.wait_for(r"cluster: renewing the lease: Redis at \S+ did not answer within 3 "
                     r"s: its link is dropped and made again")
        log.wait_for(r"lost the cluster's Redis")
        log.wait_for(r"the cluster's Redis at \S+ is back")
        assert len(re.findall("did not answer within", log.text)) == 1, log.text
        assert "Traceback" not in log.text, log.text
    relay.close()


def test_a_link_lost_as_it_is_made_is_said_with_its_reason(
        redis: RedisAt, tmp_path: Path) -> None:
    """The link to Redis is cut, and cut again as it is made (the reply to its SELECT
    lost: Redis, or the network, went again): the process says why that link was not
    made, tries again, and is back."""
    relay = LostRedisReply(redis.url)
    with ExitStack() as stack:
        _, log = stack.enter_context(server(relay.url, tmp_path / "a.db", 0))
        joined = re.search(r"joined the cluster at \S+ as process (p\d+)", log.text)
        assert joined is not None, log.text
        relay.arm(f"{PREFIX}process:{joined.group(1)}".encode(), b"SELECT")
        log.wait_for(r"lost the cluster's Redis")
        log.wait_for(r"cluster: a link to Redis at \S+ was not made \(could not set "
                     r"dbid=0: Lost connection\): trying again")
        log.wait_for(r"the cluster's Redis at \S+ is back")
        assert "Traceback" not in log.text, log.text
    relay.close()


def test_a_takeover_cut_off_from_redis_as_it_places_a_member_is_said_so(
        redis: RedisAt, postgres: pg_kit.Cluster) -> None:
    """kill -9 of the table's process (A): B takes the table over, and its link to Redis
    is cut as it asks where the host's session lives (placing the members). B says
    that table could not be taken over for now, as the outage it is, with no
    traceback, and takes it over once the link is made again: the guest, connected to
    B, gets the table's snapshot."""
    relay = LostRedisReply(redis.url)
    db = postgres.store()
    procs: list[subprocess.Popen[str]] = []
    with ExitStack() as stack:
        (a, _), (b, log_b) = (stack.enter_context(server(url, db, n, procs))
                              for n, url in enumerate((redis.url, relay.url)))
        host, guest, table = _one_deal_started(a, b)
        relay.arm(f"{PREFIX}session:{token_hash(host.welcome['token']).hex()}".encode())
        since = len(guest.seen)
        procs[0].send_signal(signal.SIGKILL)
        procs[0].wait()
        log_b.wait_for(rf"table {table} could not be taken over for now: "
                       r"cluster_unavailable: ")
        log_b.wait_for(rf"took table {table} over")
        assert relay.cut.is_set()
        guest.wait(lambda m: m["type"] == "table" and m["table"]["id"] == table, since)
        assert "Traceback" not in log_b.text, log_b.text
    relay.close()


def test_a_process_stopped_as_it_reads_the_lobby_again_says_no_traceback(
        redis: RedisAt, tmp_path: Path) -> None:
    """A's link to Redis is cut as it renews its lease and made again; a lease later A
    reads the lobby's rows again (a table of B's among them), and is told to stop
    (SIGTERM) while Redis's answer is held back. It leaves the cluster (its lease key
    goes), then reads that answer: it gives the reading up, and stops with no
    traceback."""
    lost = LostRedisReply(redis.url)
    held = pg_kit.HeldReply(lost.url)
    procs: list[subprocess.Popen[str]] = []
    with ExitStack() as stack:
        _, log = stack.enter_context(server(held.url, tmp_path / "a.db", 0, procs))
        b, _ = stack.enter_context(server(redis.url, tmp_path / "b.db", 1))
        joined = re.search(r"joined the cluster at \S+ as process (p\d+)", log.text)
        assert joined is not None, log.text
        lease = f"{PREFIX}process:{joined.group(1)}"
        host = Player(b)
        host.hello("Ayşe")
        host.ok("create_table", rules="classic", seats=2)  # a row to read again
        lost.arm(lease.encode())
        log.wait_for(r"the cluster's Redis at \S+ is back")
        held.arm(b"SMEMBERS")
        try:
            poll_until(held.cut.is_set, BACKSTOP, "the lobby's rows read again")
            procs[0].send_signal(signal.SIGTERM)
            poll_until(lambda: redis.command("EXISTS", lease) == 0, BACKSTOP,
                       "A to leave the cluster")
        finally:
            held.release()
        assert procs[0].wait(BACKSTOP) == 0
        assert "Traceback" not in log.rest(), log.text
    held.close()
    lost.close()
