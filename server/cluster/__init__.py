"""The processes that serve one lobby: what they share, behind one interface (`base.py`)."""

from __future__ import annotations

from pisyedili.server.cluster.base import Cluster, ClusterAddress, unavailable, until_sure
from pisyedili.server.cluster.local import LOCAL, LocalCluster

__all__ = ["LOCAL", "Cluster", "ClusterAddress", "LocalCluster", "open_cluster",
           "unavailable", "until_sure"]


def open_cluster(address: ClusterAddress, clock: object, lease: float | None = None) -> Cluster:
    """The cluster `--cluster` names (today only Redis); imported here, so a server
    that joins none never loads the Redis client. `lease`: `--cluster-lease`."""
    from pisyedili.server.cluster.redis import RedisCluster

    return RedisCluster(address, clock) if lease is None else \
        RedisCluster(address, clock, lease)
