"""Bot accounts across the processes of a cluster on one shared PostgreSQL store: an
account registered as a bot on one process is a bot's on the other too, so a table
there shows its seat as a bot's and a table refusing bot accounts refuses it."""

from __future__ import annotations

from pathlib import Path

import pg_kit

from cluster.cluster_kit import Player, cluster
from cluster.redis_kit import RedisAt

PASSWORD = "a long enough password 7"
FEATURES = ("chat", "accounts", "ratings", "history")


def _registered(port: int, name: str, bot: bool = False) -> Player:
    player = Player(port)
    player.hello(name, FEATURES)
    reply = player.ok("register", password=PASSWORD, **({"bot": True} if bot else {}))
    assert (reply["name"], reply.get("bot", False)) == (name, bot), reply
    return player


def test_a_bot_account_is_a_bot_at_another_processes_table(
        redis: RedisAt, postgres: pg_kit.Cluster, tmp_path: Path) -> None:
    db = postgres.store()
    with cluster(redis.url, tmp_path, 2, db=db) as [(_, a), (_, b)]:
        host = _registered(a, "Ayşe")
        robo = _registered(b, "Robo", bot=True)
        table = int(host.ok("create_table", rules="classic", seats=2)["table"]["id"])
        robo.ok("join_table", table=table)
        shown = host.wait(lambda m: m["type"] == "table_update"
                          and m["table"]["seats"][1]["kind"] != "open")
        assert shown["table"]["seats"][1]["bot"] is True, shown
        robo.ok("leave_table")

        other = _registered(a, "Deniz")
        closed = int(other.ok("create_table", rules="classic", seats=2,
                              bot_accounts=False)["table"]["id"])
        refused = robo.request("join_table", table=closed)
        assert refused["code"] == "bot_account_refused", refused
