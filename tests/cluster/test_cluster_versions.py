"""Messages between processes of another version: refused and said, while the
processes go on serving each other (docs/operating.md, "Running a cluster")."""

from __future__ import annotations

from pathlib import Path

import msgpack

from cluster.cluster_kit import Player, cluster, log_of
from cluster.redis_kit import RedisAt
from pisyedili.server.interproc.messages import SPOKEN, VERSION


def test_a_message_of_another_version_is_refused_once_and_the_cluster_plays_on(
        redis: RedisAt, tmp_path: Path) -> None:
    with cluster(redis.url, tmp_path, 2) as [(proc_a, a), (proc_b, b)]:
        redis.eventually(lambda r: len(r.keys("pisyedili:process:*")) == 2)
        processes = redis.keys("pisyedili:process:*")
        later = {"k": "out", "v": VERSION + 1, "p": "1", "b": b"\x00"}
        for key in processes:  # as a process of a later version would, twice each
            channel = f"pisyedili:{redis.address.db}:to:{key.rsplit(':', 1)[1]}"
            for message in (later, later, {"k": "quit", "v": VERSION, "p": "1"}):
                redis.command("PUBLISH", channel, msgpack.packb(message, use_bin_type=True))
        for proc in (proc_a, proc_b):
            log = log_of(proc)
            spoken = ", ".join(map(str, sorted(SPOKEN)))
            log.wait_for(rf"cluster: a message refused, of version {VERSION + 1}, where this "
                         rf"process reads {spoken}: every process of a cluster must read "
                         r"the others'")
            log.wait_for(r"cluster: a message refused, of an unknown kind 'quit'")
            assert log.text.count(f"of version {VERSION + 1}") == 1  # said once, not a message
        host, guest = Player(a), Player(b)
        host.hello("Ayşe")
        guest.hello("Bora")
        table = host.ok("create_table", rules="classic", seats=2)["table"]["id"]
        joined = guest.ok("join_table", table=table)  # relayed to A and back
        assert joined["table"]["id"] == table
        guest.ok("leave_table")  # and the next request too
