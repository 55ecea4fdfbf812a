"""One lobby over three processes: a table held by one, players and a spectator
connected to the others, a whole match in each rule set, the lobby's deltas everywhere."""

from __future__ import annotations

import random
import signal
from pathlib import Path
from typing import Any

import pytest

from cluster.cluster_kit import Msg, Player, cluster, play_out
from cluster.redis_kit import RedisAt
from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.rules.events import PRIVATE_KEYS


def _hidden(msg: Msg) -> list[Any]:
    """What a spectator must never see in `msg`: a hand, or an event's private part."""
    view = msg.get("view") or {}
    found: list[Any] = [view["hand"]] if view.get("hand") else []
    for event in msg.get("events", ()):
        key = PRIVATE_KEYS.get(event.get("event", ""))
        if key is not None and key in event:
            found.append(event)
    return found


@pytest.mark.parametrize("rules", ["classic", "cardiva"])
def test_players_on_two_processes_play_a_table_held_by_one(
        redis: RedisAt, tmp_path: Path, rules: str) -> None:
    # A player here answers at once, faster than any person: the rate allows it.
    with cluster(redis.url, tmp_path, 3, "--rate", "500", "--burst", "500") \
            as [(_, a), (_, b), (_, c)]:
        watchers = [Player(port) for port in (a, b, c)]
        for n, watcher in enumerate(watchers):
            watcher.hello(f"watcher {n}")
            watcher.ok("lobby_subscribe")
        host, guest, spectator = Player(a), Player(b), Player(c)
        host.hello("Ayşe")
        guest.hello("Ayşe")  # on another process: the name is taken there too
        assert guest.welcome["name"] == "Ayşe 2"
        spectator.hello("Can")
        opened = host.ok("create_table", rules=rules, seats=3,
                         options={"match_end": "deals:1"})["table"]
        table = opened["id"]
        for watcher in watchers:  # every process's subscribers hear of the new table
            watcher.wait(lambda m: m["type"] == "lobby_update" and m["op"] == "add"
                         and m["table"] == table)
        listed = watchers[1].ok("lobby_subscribe")  # a page lists every process's tables
        assert [row["id"] for row in listed["tables"]] == [table]
        joined = guest.ok("join_table", table=table)
        assert joined["type"] == "table" and joined["table"]["id"] == table
        guest.ok("stand")  # joining took the first open seat: stand, then sit again
        guest.ok("sit", seat=1)
        host.ok("add_bot", seat=2, level="easy")
        watched = spectator.ok("join_table", table=table, spectate=True)
        assert watched["table"]["id"] == table
        watchers[1].ok("chat", text="merhaba", scope="lobby")  # to every process's lobby
        for watcher in watchers:
            watcher.wait(lambda m: m["type"] == "chat" and m["text"] == "merhaba")
        guest.ok("chat", text="iyi oyunlar")
        guest.ok("ready", ready=True)
        host.ok("start")
        play_out([host, guest], [spectator], random.Random(7))
        said = [m for m in host.seen if m["type"] == "chat"]
        assert said and said[0]["text"] == "iyi oyunlar" and said[0]["name"] == "Ayşe 2"
        guest_views = [m for m in guest.seen if (m.get("view") or {}).get("hand")]
        assert guest_views, "the guest was never shown its hand"
        spectated = [m for m in spectator.seen if m["type"] == "update"]
        assert spectated, "the spectator saw nothing of the match"
        assert [h for m in spectator.seen for h in _hidden(m)] == []
        guest.ok("leave_table")
        assert guest.ok("join_table", table=table)["type"] == "table"  # back again
        for someone in (guest, spectator, host):  # the last to leave closes the table
            someone.ok("leave_table")
        deltas = []
        for watcher in watchers:  # the same deltas, in the same order, on every process
            watcher.wait(lambda m: m["type"] == "lobby_update" and m["op"] == "remove")
            deltas.append([m for m in watcher.seen if m["type"] == "lobby_update"])
        assert deltas[0] == deltas[1] == deltas[2]
        assert [d["op"] for d in deltas[0]][::len(deltas[0]) - 1] == ["add", "remove"]
        assert len(deltas[0]) > 4  # seats taken, the match begun and over...


def test_a_table_whose_process_died_leaves_every_lobby(redis: RedisAt,
                                                       tmp_path: Path) -> None:
    """Each process on a file of its own, so no takeover (docs/operating.md, "Running a
    cluster"): its lease runs out, the other processes drop its rows, and their players
    there are at no table, and told so (test_cluster_failover.py: on a shared
    journal)."""
    with cluster(redis.url, tmp_path, 2) as [(owner, a), (_, b)]:
        host, guest = Player(a), Player(b)
        host.hello("Ayşe")
        guest.hello("Mehmet")
        guest.ok("lobby_subscribe")
        table = host.ok("create_table", rules="classic", seats=2)["table"]["id"]
        guest.ok("join_table", table=table)
        owner.send_signal(signal.SIGKILL)
        owner.wait()
        guest.wait(lambda m: m["type"] == "lobby_update" and m["op"] == "remove"
                   and m["table"] == table)
        lost = guest.wait(lambda m: m["type"] == "table_lost")
        assert lost == {"type": "table_lost", "table": table, "cause": "server_gone"}
        assert guest.request("stand")["code"] == "not_at_table"
        assert guest.ok("create_table", rules="classic", seats=2)["table"]["id"] > table


def _guest_seat(m: Msg) -> dict[str, Any] | None:
    if m["type"] not in ("table", "table_update"):
        return None
    seat: dict[str, Any] = m["table"]["seats"][1]
    return seat if seat.get("name") == "Mehmet" else None


def test_a_player_whose_process_died_is_away_at_the_table_elsewhere(
        redis: RedisAt, tmp_path: Path) -> None:
    with cluster(redis.url, tmp_path, 2) as [(_, a), (home, b)]:
        host, guest = Player(a), Player(b)
        host.hello("Ayşe")
        guest.hello("Mehmet")
        table = host.ok("create_table", rules="classic", seats=2)["table"]["id"]
        guest.ok("join_table", table=table)
        host.wait(lambda m: (_guest_seat(m) or {}).get("connected") is True)
        home.send_signal(signal.SIGKILL)
        home.wait()
        host.wait(lambda m: (_guest_seat(m) or {}).get("connected") is False)


def test_a_player_resumes_at_a_table_elsewhere_with_its_token(redis: RedisAt,
                                                               tmp_path: Path) -> None:
    with cluster(redis.url, tmp_path, 2) as [(_, a), (_, b)]:
        host, guest = Player(a), Player(b)
        host.hello("Ayşe")
        token = guest.hello("Mehmet")["token"]
        table = host.ok("create_table", rules="classic", seats=2)["table"]["id"]
        guest.ok("join_table", table=table)
        guest.close()
        host.wait(lambda m: (_guest_seat(m) or {}).get("connected") is False)
        away = len(host.seen)
        back = Player(b)
        welcome = back.request("hello", protocol=PROTOCOL_VERSION, token=token,
                               name="Mehmet")
        assert welcome["type"] == "welcome", welcome
        assert (welcome["type"], welcome["resumed"], welcome["table"]) == \
            ("welcome", True, table)
        snapshot = back.wait(lambda m: m["type"] == "table")  # the seat, handed back
        assert snapshot["table"]["seats"][1]["connected"] is True
        host.wait(lambda m: (_guest_seat(m) or {}).get("connected") is True, since=away)
        back.ok("leave_table")
        assert back.request("stand")["code"] == "not_at_table"


def test_a_request_to_a_silent_process_is_answered_within_a_lease(redis: RedisAt,
                                                                  tmp_path: Path) -> None:
    """A table's process that stops (here: SIGSTOP) answers nothing: its players
    elsewhere get `cluster_unavailable` once it is taken for gone or their request has
    waited a lease, whichever comes first, and nothing waits on. (The answer comes
    while the process is still stopped: nothing else could end the wait.)"""
    with cluster(redis.url, tmp_path, 2) as [(owner, a), (_, b)]:
        host, guest = Player(a), Player(b)
        host.hello("Ayşe")
        guest.hello("Mehmet")
        table = host.ok("create_table", rules="classic", seats=2)["table"]["id"]
        guest.ok("join_table", table=table)
        owner.send_signal(signal.SIGSTOP)
        try:
            refused = guest.request("stand")
            assert refused["code"] == "cluster_unavailable", refused
            assert refused["retry_after"] >= 1
            assert refused["message"] in (
                "the server that holds this table did not answer",  # a lease waited
                "the server that held this table went away as it handled this request")
            assert guest.ok("ping")["type"] == "pong"  # the connection reads on
        finally:
            owner.send_signal(signal.SIGCONT)


def test_a_request_answered_at_home_shows_presence_at_the_table_elsewhere(
        redis: RedisAt, tmp_path: Path) -> None:
    """The guest lets its turns run out until a bot holds its seat; a request its own
    process answers (lobby chat) takes the seat back, as it would at a table there."""
    with cluster(redis.url, tmp_path, 2) as [(_, a), (_, b)]:
        host, guest = Player(a), Player(b)
        host.hello("Ayşe")
        guest.hello("Mehmet")
        table = host.ok("create_table", rules="classic", seats=2,
                        options={"turn_seconds": 1})["table"]["id"]
        guest.ok("join_table", table=table)
        guest.ok("ready", ready=True)
        host.ok("start")
        rng = random.Random(3)
        while not (_guest_seat(msg := host.recv() or {}) or {}).get("held_by_bot"):
            if "moves" in msg:  # the host plays; the guest lets its clock run out
                host.send("move", move=rng.choice(msg["moves"]))
        held = len(host.seen)
        guest.ok("chat", text="buradayım", scope="lobby")
        seat = _guest_seat(host.wait(lambda m: _guest_seat(m) is not None, since=held))
        assert seat is not None and "held_by_bot" not in seat  # the next word of it
