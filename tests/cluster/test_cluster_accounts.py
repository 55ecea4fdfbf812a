"""Accounts and sessions across the processes of a cluster on one shared PostgreSQL
store: an account is known everywhere, has one session wherever its player logs in,
plays rated at any process's table, and outlives a killed process with its session."""

from __future__ import annotations

import random
import signal
import subprocess
from collections.abc import Callable
from pathlib import Path

import pg_kit
from process_output import add_operator

from cluster.cluster_kit import PASSWORD, Msg, Player, cluster, operated, play_out
from cluster.redis_kit import RedisAt
from cluster.test_cluster_failover import Mover, _play
from pisyedili.protocol.version import PROTOCOL_VERSION

FEATURES = ("chat", "accounts", "ratings", "history")


def _player(port: int, name: str) -> Player:
    player = Player(port)
    player.hello(name, FEATURES)
    return player


def _registered(port: int, name: str) -> Player:
    player = _player(port, name)
    reply = player.ok("register", password=PASSWORD)
    assert (reply["name"], reply["registered"]) == (name, True), reply
    return player



def _table_of_two(host: Player, guest: Player) -> int:
    """The id of a classic table of two seats that `host` opens and `guest` joins."""
    table = int(host.ok("create_table", rules="classic", seats=2)["table"]["id"])
    guest.ok("join_table", table=table)
    return table


def _resume(port: int, welcome: Msg) -> tuple[Player, Msg]:
    """The token at once, on the process at `port`: no retry on `bad_token`."""
    back = Player(port)
    resumed = back.request("hello", protocol=PROTOCOL_VERSION, token=welcome["token"],
                           name=welcome["name"], features=list(FEATURES))
    assert resumed["type"] == "welcome", resumed
    back.welcome = resumed
    return back, resumed


def _resume_at_once(*to: tuple[int, Msg]) -> list[tuple[Player, Msg]]:
    """Each token at once on its process, all together (as clients whose process
    died reconnect): no retry on `bad_token`."""
    backs = []
    for port, welcome in to:
        back = Player(port)
        back.send("hello", protocol=PROTOCOL_VERSION, token=welcome["token"],
                  name=welcome["name"], features=list(FEATURES))
        backs.append(back)
    resumed = []
    for back in backs:
        back.welcome = back.wait(lambda m: m.get("id") == 1)
        assert back.welcome["type"] == "welcome", back.welcome
        resumed.append((back, back.welcome))
    return resumed


def _seat(player: Player) -> int | None:
    """The seat the table's snapshot gives `player` (None: a watcher)."""
    seat: int | None = player.wait(lambda m: m["type"] == "table")["you"]["seat"]
    return seat


def _kill(proc: subprocess.Popen[str]) -> None:
    proc.send_signal(signal.SIGKILL)
    proc.wait()


def test_an_account_is_one_across_processes(redis: RedisAt, postgres: pg_kit.Cluster,
                                             tmp_path: Path) -> None:
    """Registered on one process: reserved on the other at once, and a login there
    works; logged in on one while its session lives on the other: that session moves,
    its old connection is told `replaced`; made on the store by the operator command
    while both run: a login finds it in the store."""
    db = postgres.store()
    with cluster(redis.url, tmp_path, 2, db=db) as [(_, a), (_, b)]:
        ayse = _registered(a, "Ayşe")
        assert ayse.ok("logout")["registered"] is False  # its name is free in Redis now
        assert _player(b, "Ayşe").welcome["name"] != "Ayşe"  # ...but reserved on B
        there = _player(b, "somebody")
        logged = there.ok("login", name="ayşe", password=PASSWORD)
        assert (logged["name"], logged["registered"]) == ("Ayşe", True), logged
        # The account's session lives on B: a login on A takes it over from there.
        moved = ayse.ok("login", name="Ayşe", password=PASSWORD)
        assert (moved["player"], moved["name"], moved["registered"]) == \
            (logged["player"], "Ayşe", True), moved
        assert there.wait(lambda m: m["type"] == "replaced")
        assert there.recv() is None  # closed: one account, one session
        assert moved["token"] != logged["token"]
        stale = Player(b)
        assert stale.request("hello", protocol=PROTOCOL_VERSION, token=logged["token"],
                             name="x")["code"] == "bad_token"
        # An account neither process was told of (made on the store directly).
        add_operator(db, "Zeynep", PASSWORD)
        zeynep = _player(b, "z")
        assert zeynep.ok("login", name="Zeynep", password=PASSWORD)["name"] == "Zeynep"
        assert _player(a, "Zeynep").welcome["name"] != "Zeynep"  # known there too now


def test_a_logged_in_visitor_plays_rated_at_another_process(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """A rated table on A seats a player logged in on B (not a watcher), and the
    match is kept rated, for both accounts."""
    db = postgres.store()
    with cluster(redis.url, tmp_path, 2, "--rate", "500", "--burst", "500", db=db) \
            as [(_, a), (_, b)]:
        host, guest = _registered(a, "Ayşe"), _registered(b, "Mehmet")
        table = host.ok("create_table", rules="classic", seats=2, rated=True,
                        options={"match_end": "deals:1"})["table"]
        assert table["rated"] is True
        guest.ok("join_table", table=table["id"])
        assert _seat(guest) == 1
        guest.ok("ready", ready=True)
        host.ok("start")
        play_out([host, guest], [], random.Random(3))
        for port in (a, b):
            for name in ("Ayşe", "Mehmet"):
                profile = _player(port, "reader").ok("profile", name=name)
                assert [m["rated"] for m in profile["recent"]] == [True], profile
                assert [r["rules"] for r in profile["ratings"]] == ["classic"], profile


def test_a_rated_table_taken_over_keeps_its_logged_in_players(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """kill -9 of a rated table's process: its host resumes on the other process at
    once (no `bad_token` while the table is not taken over yet, nor a handshake
    timeout, shorter here than the wait), logged in, and the match, played out there,
    is kept rated."""
    db = postgres.store()
    with cluster(redis.url, tmp_path, 2, "--rate", "500", "--burst", "500",
                 "--handshake-seconds", "1", db=db) as [(owner, a), (_, b)]:
        host, guest = _registered(a, "Ayşe"), _registered(b, "Mehmet")
        table = host.ok("create_table", rules="classic", seats=2, rated=True,
                        options={"match_end": "deals:1"})["table"]["id"]
        guest.ok("join_table", table=table)
        assert _seat(guest) == 1
        guest.ok("ready", ready=True)
        host.ok("start")
        rng = random.Random(17)
        first, second = Mover(host, rng), Mover(guest, rng)
        _play([first, second], lambda: len(first.acked) + len(second.acked) >= 4)
        _kill(owner)
        back, welcome = _resume(b, host.welcome)
        assert (welcome["resumed"], welcome["table"], welcome.get("registered")) == \
            (True, table, True), welcome
        assert (welcome["player"], welcome["name"]) == (host.welcome["player"], "Ayşe")
        first.player, first.pending = back, None
        _play([first, second], lambda: first.over() and second.over())
        profile = _player(b, "reader").ok("profile", name="Ayşe")
        assert [m["rated"] for m in profile["recent"]] == [True], profile
        assert [r["rules"] for r in profile["ratings"]] == ["classic"], profile


def test_a_session_at_no_table_outlives_its_killed_process(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """A logged-in player and a guest at no table on A; A is killed: each token
    resumes on B (while its record in Redis lasts: the players reconnect at once),
    with its player id and name, the account still logged in."""
    db = postgres.store()
    with cluster(redis.url, tmp_path, 2, db=db) as [(owner, a), (_, b)]:
        ayse, guest = _registered(a, "Ayşe"), _player(a, "Mehmet")
        _kill(owner)
        resumed = _resume_at_once((b, ayse.welcome), (b, guest.welcome))
        for player, registered, (back, welcome) in zip((ayse, guest), (True, None), resumed,
                                                       strict=True):
            assert (welcome["resumed"], welcome["player"], welcome["name"],
                    welcome.get("table"), welcome.get("registered")) == \
                (True, player.welcome["player"], player.welcome["name"], None, registered)
            assert back.ok("ping")["type"] == "pong"
        # Its name stays held by the rebuilt session.
        assert _player(b, "Mehmet").welcome["name"] != "Mehmet"


def test_a_visitor_whose_home_is_killed_keeps_its_seat_at_a_live_process(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """Two players connected to A sit at a table of B; A is killed: one resumes on B,
    the table's own process (the seat is its own there now), the other on C (B's
    table relays to it from then on); both are in their seats."""
    db = postgres.store()
    with cluster(redis.url, tmp_path, 3, db=db) as [(home, a), (_, b), (_, c)]:
        host = _player(b, "Ayşe")
        table = host.ok("create_table", rules="classic", seats=3)["table"]["id"]
        first, second = _player(a, "Mehmet"), _player(a, "Zeynep")
        for player, seat in ((first, 1), (second, 2)):
            player.ok("join_table", table=table)
            assert _seat(player) == seat
        _kill(home)
        [(back, welcome), (there, elsewhere)] = _resume_at_once((b, first.welcome),
                                                               (c, second.welcome))
        assert (welcome["resumed"], welcome.get("table")) == (True, table), welcome
        assert _seat(back) == 1
        assert elsewhere["resumed"] and elsewhere["player"] == second.welcome["player"]
        assert _seat(there) == 2  # (its snapshot follows, once B heard where it is)
        assert there.ok("chat", text="still here")["type"] == "ok"
        host.wait(lambda m: m["type"] == "chat" and m.get("text") == "still here")


def test_a_ban_or_mute_made_on_one_process_holds_on_every_process(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """An operator on A mutes, then bans, an account whose player is connected to B:
    B refuses its chat at once, then closes its connection and refuses its logins,
    until the operator lifts the ban on A. (test_cluster_outage.py: one made while
    Redis is away.)"""
    with operated(redis.url, postgres.store(), tmp_path, FEATURES) as (operator, _, _, b):
        watcher = _player(b, "watcher")
        watcher.ok("lobby_subscribe")
        target = _registered(b, "Mehmet")
        assert target.ok("chat", text="hello", scope="lobby")
        operator.ok("mute", name="Mehmet", minutes=5)
        _told(operator, watcher)
        refused = target.request("chat", text="still here?", scope="lobby")
        assert refused["code"] == "muted", refused
        operator.ok("unmute", name="Mehmet")
        _told(operator, watcher)
        assert target.ok("chat", text="back", scope="lobby")
        operator.ok("ban", name="Mehmet", reason="flooding")
        closed = target.wait(lambda m: m.get("code") == "banned")
        assert "flooding" in closed["message"]
        assert target.recv() is None
        assert _player(b, "m").request("login", name="Mehmet",
                                       password=PASSWORD)["code"] == "banned"
        operator.ok("unban", name="Mehmet")
        _told(operator, watcher)
        assert _player(b, "m").ok("login", name="Mehmet", password=PASSWORD)["name"] == "Mehmet"


def _told(teller: Player, watcher: Player) -> None:
    """Wait until what `teller`'s process told every process so far (a sanction made
    or lifted) has reached `watcher`'s: a table it opens now is told on the same
    channel after it, and a process reads that channel in order. (The operator's `ok`
    says only that the tell went out, not that the other process has read it.)"""
    table = teller.ok("create_table", rules="classic", seats=2)["table"]["id"]
    watcher.wait(lambda m: m["type"] == "lobby_update" and m["op"] == "add"
                 and m["table"] == table)
    teller.ok("leave_table")


def _freed(seat: int) -> Callable[[Msg], bool]:
    """A `table_update` in which `seat` is open."""
    return lambda m: m["type"] == "table_update" and m["table"]["seats"][seat]["kind"] == "open"


def test_a_kick_made_on_one_process_reaches_a_player_on_another(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """An operator on A kicks two players connected to B: one at its own table on B
    (whose other member, on A, is told through B), one at a table on A (whose other
    member A tells); and one connected to A at a table on B (which B tells). Each is
    closed with `kicked` where it is connected, its table's other member reads
    `player_removed`, then sees the seat free; a name nobody holds is still
    `no_such_player`."""
    with operated(redis.url, postgres.store(), tmp_path, FEATURES) as (operator, a, _, b):
        mehmet, elif_ = _player(b, "Mehmet"), _player(a, "Elif")
        at_b = _table_of_two(mehmet, elif_)
        deniz, can = _player(a, "Deniz"), _player(b, "Can")
        at_a = _table_of_two(deniz, can)
        ece, ali = _player(b, "Ece"), _player(a, "Ali")
        also_b = _table_of_two(ece, ali)
        for kicked, seat, other, table in ((mehmet, 0, elif_, at_b), (can, 1, deniz, at_a),
                                           (ali, 1, ece, also_b)):
            name = kicked.welcome["name"]
            done = operator.ok("kick", name=name, reason="spam")["done"]
            assert done == f"kicked {name}: spam"
            closed = kicked.wait(lambda m: m.get("code") == "kicked")
            assert "spam" in closed["message"]
            assert kicked.recv() is None
            removed = other.wait(lambda m: m["type"] == "player_removed")
            assert (removed["table"], removed["name"], removed["seat"], removed["action"],
                    removed["reason"]) == (table, name, seat, "kick", "spam")
            other.wait(_freed(seat), since=other.seen.index(removed))  # then it left
        assert operator.request("kick", name="Nobody")["code"] == "no_such_player"


def test_a_ban_made_on_one_process_tells_the_table_of_another(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """An operator on A bans two accounts, as a kick removes a player: one connected
    to B at a table on A (whose other member A tells), one connected to A at a table
    on B (which B tells). Each is closed with `banned` where it is connected, its
    table's other member reads `player_removed` with the ban's reason, then sees the
    seat free."""
    with operated(redis.url, postgres.store(), tmp_path, FEATURES) as (operator, a, _, b):
        deniz, can = _player(a, "Deniz"), _registered(b, "Can")
        at_a = _table_of_two(deniz, can)
        ece, ali = _player(b, "Ece"), _registered(a, "Ali")
        at_b = _table_of_two(ece, ali)
        for banned, other, table in ((can, deniz, at_a), (ali, ece, at_b)):
            name = banned.welcome["name"]
            operator.ok("ban", name=name, reason="cheating")
            closed = banned.wait(lambda m: m.get("code") == "banned")
            assert "cheating" in closed["message"]
            assert banned.recv() is None
            removed = other.wait(lambda m: m["type"] == "player_removed")
            assert (removed["table"], removed["name"], removed["seat"], removed["action"],
                    removed["reason"]) == (table, name, 1, "ban", "cheating")
            other.wait(_freed(1), since=other.seen.index(removed))  # then it left


def test_an_announcement_reaches_every_process_once(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """An operator on A announces: a player on B at no table hears it, and so does one
    on B at a table on A, once (from its own process, not again through the table's);
    a player on A hears it too."""
    with operated(redis.url, postgres.store(), tmp_path, FEATURES) as (operator, a, _, b):
        idle, host, visitor = _player(b, "Mehmet"), _player(a, "Elif"), _player(b, "Can")
        _table_of_two(host, visitor)
        done = operator.ok("announce", text="Restart at ten")["done"]
        assert done == "announced to 4 players"  # 2 on A, 2 on B: each told by its own
        for player in (idle, host, visitor):
            heard = player.wait(lambda m: m["type"] == "announcement")
            assert (heard["text"], heard["by"]) == ("Restart at ten", "Zeynep")
        # A's table answers the visitor on the link a second copy would have taken.
        visitor.ok("chat", text="heard", scope="table")
        assert sum(m["type"] == "announcement" for m in visitor.seen) == 1


def test_an_operator_closes_a_table_another_process_holds(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    """An operator on A closes a table B holds: its members, on B and on A, are told
    `table_closed` with the reason and are at no table after it; a table nobody holds
    is still `no_such_table`."""
    with operated(redis.url, postgres.store(), tmp_path, FEATURES) as (operator, a, _, b):
        host, guest = _player(b, "Mehmet"), _player(a, "Elif")
        table = _table_of_two(host, guest)
        done = operator.ok("close_table", table=table, reason="test over")["done"]
        assert done == f"closed table {table} (held by another process; 2 members " \
            "told): test over"
        for member in (host, guest):
            closed = member.wait(lambda m: m["type"] == "table_closed")
            assert (closed["table"], closed["reason"]) == (table, "test over")
            member.ok("create_table", rules="classic", seats=2)  # at no table now
        assert operator.request("close_table", table=table + 100)["code"] == "no_such_table"
