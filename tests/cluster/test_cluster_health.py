"""A cluster process's readiness (`--health`) follows its Redis: not ready while Redis
is away (`cluster`), ready again once it is back; live all along."""

from __future__ import annotations

from pathlib import Path

from health_kit import check, ready_turns

from cluster.cluster_kit import server
from cluster.redis_kit import own_redis
from pisyedili.server.bench.services import free_port


def test_a_process_is_not_ready_while_its_redis_is_away(tmp_path: Path) -> None:
    redis = own_redis()
    try:
        health = free_port()
        with server(redis.url, str(tmp_path / "p0.db"), 0, "--health", str(health)):
            assert ready_turns(health, 200) == {"ready": True, "failed": []}
            redis.kill()
            assert ready_turns(health, 503) == {"ready": False, "failed": ["cluster"]}
            assert check(health, "/live") == (200, {"live": True})
            redis.start()
            assert ready_turns(health, 200) == {"ready": True, "failed": []}
    finally:
        redis.stop()
