"""Faults a cluster lives through (its store or its Redis out of reach, and back) are
logged as what they are, with what the process does about them, and no traceback: a
traceback in a process's log is kept for a defect."""

from __future__ import annotations

from contextlib import ExitStack
from pathlib import Path

import pg_kit
from process_output import add_operator

from cluster.cluster_kit import Player
from cluster.test_cluster_outage import PASSWORD, redis_process, server


def test_the_sanctions_unread_as_the_store_is_away_are_read_once_it_is_back(
        tmp_path: Path) -> None:
    """Redis goes, an operator bans a player connected to the other process (nobody can
    tell it), then PostgreSQL stops too, and Redis comes back: that process cannot read
    the sanctions again. It says so, with no traceback, and reads them again until
    PostgreSQL is back, then closes the banned player's connection."""
    features = ("chat", "accounts", "moderation")
    with pg_kit.own_cluster() as postgres, ExitStack() as stack:
        db = postgres.store()
        add_operator(db, "Zeynep", PASSWORD)
        redis, _ = stack.enter_context(redis_process(keep=False))
        (a, log_a), (b, log_b) = (stack.enter_context(server(redis.url, db, n))
                                  for n in range(2))
        operator, target = Player(a), Player(b)
        operator.hello("z", features)
        operator.ok("login", name="Zeynep", password=PASSWORD)
        target.hello("Mehmet", features)
        target.ok("register", password=PASSWORD)
        redis.kill()
        log_a.wait_for("lost the cluster's Redis")
        log_b.wait_for("lost the cluster's Redis")
        operator.ok("ban", name="Mehmet")
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
