"""A process paused (SIGSTOP) and woken says what happened: it was paused. Redis
never went away, so its log says nothing of a lost Redis, and the replies it read too
late because of the pause leave no traceback."""

from __future__ import annotations

import re
import signal
import subprocess
from contextlib import ExitStack
from pathlib import Path

from poll_kit import poll_until

from cluster.cluster_kit import BACKSTOP
from cluster.outage_kit import server
from cluster.redis_kit import RedisAt
from pisyedili.server.cluster.redis import PREFIX


def _blocked(redis: RedisAt) -> int:
    """Redis's clients whose commands wait (`CLIENT PAUSE`)."""
    info = str(redis.command("INFO", "clients"))
    return int(re.search(r"blocked_clients:(\d+)", info).group(1))  # type: ignore[union-attr]


def test_a_process_paused_and_woken_logs_its_pause_and_no_lost_redis(
        redis: RedisAt, tmp_path: Path) -> None:
    """Redis holds every write for 4 s (`CLIENT PAUSE ... WRITE`) until the process's
    lease renewal waits on it; the process is then stopped, Redis answers the renewal
    (into a socket nobody reads) once its pause ends, and the process is woken once
    its lease key has run out since.
    Its log says it was paused for a few seconds, has no traceback, and does not say
    it lost the cluster's Redis; its link is back."""
    procs: list[subprocess.Popen[str]] = []
    with ExitStack() as stack:
        _, log = stack.enter_context(server(redis.url, tmp_path / "a.db", 0, procs))
        joined = re.search(r"joined the cluster at \S+ as process (p\d+)", log.text)
        assert joined is not None, log.text
        process = joined.group(1)
        lease = PREFIX + f"process:{process}"
        redis.command("CLIENT", "PAUSE", "4000", "WRITE")
        poll_until(lambda: _blocked(redis) > 0, BACKSTOP, "a renewal held by Redis")
        procs[0].send_signal(signal.SIGSTOP)
        try:
            redis.command("SET", PREFIX + "test:written", "1")  # (held until Redis's pause ends)
            poll_until(lambda: redis.command("EXISTS", lease) == 0, BACKSTOP,
                       "the paused process's lease to run out")
        finally:
            procs[0].send_signal(signal.SIGCONT)
        paused = log.wait_for(r"this process was paused for ([\d.]+) s \(SIGSTOP, a "
                              r"debugger, or a starved machine\)")
        assert float(paused.group(1)) >= 2.5
        log.wait_for(r"the cluster's Redis at \S+ is back")
        assert "Traceback" not in log.text, log.text
        assert "lost the cluster's Redis" not in log.text, log.text
        assert len(re.findall("this process was paused for", log.text)) == 1, log.text
