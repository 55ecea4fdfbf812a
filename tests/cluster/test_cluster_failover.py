"""A session moves with its player: a token resumes on whichever process the client
reaches, whichever process holds the table."""

from __future__ import annotations

import random
from pathlib import Path

from cluster.cluster_kit import Msg, Player, cluster
from cluster.redis_kit import RedisAt
from cluster.test_cluster_play import _play_out
from pisyedili.protocol.version import PROTOCOL_VERSION
from pisyedili.server.cluster.redis import PREFIX
from pisyedili.server.store.journal import token_hash


def _resume(port: int, welcome: Msg) -> tuple[Player, Msg]:
    back = Player(port)
    resumed = back.request("hello", protocol=PROTOCOL_VERSION, token=welcome["token"],
                           name=welcome["name"])
    assert resumed["type"] == "welcome", resumed
    back.welcome = resumed
    return back, resumed


def test_a_token_resumes_on_any_process(redis: RedisAt, tmp_path: Path) -> None:
    with cluster(redis.url, tmp_path, 3, "--rate", "500", "--burst", "500") \
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
        assert Player(a).hello("Zeynep")["name"] == "Zeynep 2"  # its name still held
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
        _play_out([host, guest], [], random.Random(5))
        guest.ok("leave_table")
        host.ok("leave_table")
        assert moved.ok("ping")["type"] == "pong"
        stranger = Player(b)
        assert stranger.request("hello", protocol=PROTOCOL_VERSION, token="no-such-token",
                                name="x")["code"] == "bad_token"
