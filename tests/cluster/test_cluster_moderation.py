"""An operator's acts reach every process of a cluster, and their counts add up: an
operator on A mutes, bans and kicks a guest connected to B by its name, and the
confirmation counts what B did; a process that does not answer in time is named."""

from __future__ import annotations

import re
import signal
from pathlib import Path

import pg_kit

from cluster.cluster_kit import PASSWORD, Player, operated
from cluster.redis_kit import RedisAt

FEATURES = ("chat", "accounts")
ELSEWHERE = "127.0.0.2"
"""The guest's source address: a ban of its address must not cover the operator's."""



def _guest(port: int, name: str = "Troll") -> Player:
    guest = Player(port, source=ELSEWHERE)
    guest.hello(name, FEATURES)
    return guest


def test_a_guest_on_another_process_is_banned_by_name_and_counted(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """The ban of a guest connected to B, by its name, bans its address: B closes its
    connection with `banned`, the confirmation counts that connection, and a new one
    from that address is refused at B."""
    with operated(redis.url, postgres.store(), tmp_path, FEATURES) as (operator, _, _, b):
        troll = _guest(b)
        done = operator.ok("ban", name="Troll", reason="spam")["done"]
        assert done == f"banned Troll (address {ELSEWHERE}/32) until lifted: spam; " \
            "1 connection closed"
        closed = troll.wait(lambda m: m.get("code") == "banned")
        assert "spam" in closed["message"]
        assert troll.recv() is None
        again = Player(b, source=ELSEWHERE)
        assert again.request("hello", protocol=troll.welcome["protocol"], name="Troll2",
                             features=list(FEATURES))["code"] == "banned"


def test_a_ban_of_an_account_counts_its_connection_on_another_process(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """The ban of an account logged in on B: B closes its connection, and the
    confirmation counts it."""
    with operated(redis.url, postgres.store(), tmp_path, FEATURES) as (operator, _, _, b):
        mehmet = _guest(b, "Mehmet")
        mehmet.ok("register", password=PASSWORD)
        done = operator.ok("ban", name="Mehmet")["done"]
        assert done == "banned Mehmet until lifted; 1 connection closed"
        mehmet.wait(lambda m: m.get("code") == "banned")


def test_a_guest_on_another_process_is_muted_and_unmuted_by_name(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """The mute of a guest connected to B, by its name: once the operator has its
    `ok`, B refuses the guest's chat (`muted`); once unmuted, B lets it chat again."""
    with operated(redis.url, postgres.store(), tmp_path, FEATURES) as (operator, _, _, b):
        troll = _guest(b)
        assert operator.ok("mute", name="Troll")["done"] == "muted Troll until lifted"
        refused = troll.request("chat", text="still here?", scope="lobby")
        assert refused["code"] == "muted", refused
        assert operator.ok("unmute", name="Troll")["done"] == "unmuted Troll"
        assert troll.ok("chat", text="back", scope="lobby")["type"] == "ok"


def test_a_guest_on_another_process_is_kicked_by_name(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """The kick of a guest connected to B closes its connection with `kicked`; the
    name is free at once for a new player."""
    with operated(redis.url, postgres.store(), tmp_path, FEATURES) as (operator, _, _, b):
        troll = _guest(b)
        assert operator.ok("kick", name="Troll", reason="spam")["done"] == "kicked Troll: spam"
        closed = troll.wait(lambda m: m.get("code") == "kicked")
        assert "spam" in closed["message"]
        assert troll.recv() is None
        assert operator.request("mute", name="Troll")["code"] == "no_such_player"


def test_an_announcement_counts_the_players_of_every_process(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """An announcement made on A counts A's players (the operator) and B's (two), and
    each of them hears it."""
    with operated(redis.url, postgres.store(), tmp_path, FEATURES) as (operator, _, _, b):
        listeners = [_guest(b, "Mehmet"), _guest(b, "Elif")]
        done = operator.ok("announce", text="Restart at ten")["done"]
        assert done == "announced to 3 players"
        for player in (operator, *listeners):
            player.wait(lambda m: m["type"] == "announcement")


def test_a_process_that_does_not_answer_is_named_and_not_counted(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """B paused (SIGSTOP) within its lease: A's announcement is answered with what A
    did once B's time to answer ran out, naming B; B's player hears it once B wakes."""
    with operated(redis.url, postgres.store(), tmp_path, FEATURES) as (operator, _, proc_b, b):
        idle = _guest(b, "Mehmet")
        proc_b.send_signal(signal.SIGSTOP)
        try:
            done = operator.ok("announce", text="Restart at ten")["done"]
        finally:
            proc_b.send_signal(signal.SIGCONT)
        assert re.fullmatch(r"announced to 1 player; process p\d+ did not answer in time "
                            r"\(not counted\)", done), done
        idle.wait(lambda m: m["type"] == "announcement")
