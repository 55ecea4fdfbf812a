"""Play now and invitations in a cluster of two processes: `play_now` opens its table
under an id the cluster hands out (the other process lists it), and an invitation to a
player of the other process, or from a player whose table the other process holds, is
refused with `player_elsewhere` (invitations do not cross processes), while one between
two players of one process goes through."""

from __future__ import annotations

from pathlib import Path

from poll_kit import poll_until

from cluster.cluster_kit import BACKSTOP, Player, cluster, listed
from cluster.redis_kit import RedisAt

FEATURES = ("chat", "invites")


def test_invitations_stop_at_the_process_and_play_now_opens_a_cluster_table(
        redis: RedisAt, tmp_path: Path) -> None:
    with cluster(redis.url, tmp_path, 2) as [(_, a), (_, b)]:
        ann, ben, cem = Player(a), Player(b), Player(a)
        ann.hello("Ann", FEATURES)
        ben.hello("Ben", FEATURES)
        cem.hello("Cem", FEATURES)
        quick = ann.ok("play_now", rules="classic", seats=3, bots_after=0)
        table = quick["table"]["id"]
        assert quick["table"]["quick"]
        poll_until(lambda: table in listed(b), BACKSTOP, "B to list A's quick table")
        refused = ann.request("invite", name="Ben")
        assert refused["code"] == "player_elsewhere", refused
        assert ann.request("invite", name="Nobody")["code"] == "no_such_player"
        ann.ok("invite", name="Cem")  # the same process: it goes through
        invited = cem.wait(lambda m: m["type"] == "invited")
        seated = cem.ok("answer_invite", invite=invited["invite"], accept=True)
        assert seated["table"]["id"] == table
        # Ben sits at A's table through B: his table is another process's.
        ben.ok("join_table", table=table)
        dan = Player(b)
        dan.hello("Dan", FEATURES)
        across = ben.request("invite", name="Dan")
        assert across["code"] == "player_elsewhere", across
        assert not [m for m in ben.seen + dan.seen if m["type"] == "invited"]
        for player in (ann, ben, cem, dan):
            player.close()
