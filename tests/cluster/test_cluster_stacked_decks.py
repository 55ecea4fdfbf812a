"""A stacked deck in a cluster (`--test-decks` on every process): the table a `deck`
opens is private there too, its invite code claimed in the cluster before the host hears
of it, so a player on another process joins it by that code and is dealt what the order
says."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

from cluster.cluster_kit import Player, cluster
from cluster.redis_kit import RedisAt
from pisyedili.server.rules import CARD_STR

FIRST = ["2h", "2d", "3h", "3d", "4h", "4d", "5h", "5d", "6h", "6d", "8h", "8d", "9h", "9d"]
ORDER = FIRST + [c for c in CARD_STR if c not in FIRST]


def test_a_stacked_table_is_joined_by_its_code_from_another_process(
        redis: RedisAt, tmp_path: Path) -> None:
    with cluster(redis.url, tmp_path, 2, "--test-decks") as [(_, a), (_, b)]:
        host, guest = Player(a), Player(b)
        assert host.hello("Ayşe")["test_decks"] is True
        guest.hello("Bora")
        opened = host.ok("create_table", rules="classic", seats=2, deck=" ".join(ORDER),
                         options={"match_end": "deals:1"})["table"]
        assert opened["private"] is True
        refused = guest.request("join_table", table=opened["id"])
        assert refused["code"] == "private_table"
        joined = guest.ok("join_table", code=opened["code"])
        assert (joined["table"]["id"], joined["you"]["seat"]) == (opened["id"], 1)
        guest.ok("ready", ready=True)
        host.ok("start")
        dealt = guest.wait(lambda m: m["type"] == "update" and bool(m["view"]["hand"]))
        assert Counter(dealt["view"]["hand"]) == Counter(ORDER[1:14:2])
