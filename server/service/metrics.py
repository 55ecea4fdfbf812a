"""The server's state as Prometheus gauges, read when Prometheus scrapes, and the
`/metrics` resource of the `--health` port.

prometheus_client's Twisted resource answers a scrape on the reactor's thread pool, so
`collect` runs off the reactor's thread: it reads the server's containers through one
`list(...)` each (a copy made under the GIL, whole) and then reads only attributes.
The counters and histograms counted as things happen are in `pisyedili.server.metrics`.
"""

from __future__ import annotations

import weakref
from collections import Counter
from collections.abc import Iterator
from typing import TYPE_CHECKING, cast

from prometheus_client import REGISTRY
from prometheus_client.core import GaugeMetricFamily
from prometheus_client.registry import Collector
from twisted.web.resource import Resource

from pisyedili.server.table.core import TablePhase

if TYPE_CHECKING:
    from pisyedili.server.net.tcp import ServerFactory
    from pisyedili.server.store.journal import StoreJournal

TRANSPORTS = ("tcp", "websocket", "relayed")
"""A connection's transport, as the `transport` label says it: TCP (with or without
TLS), a browser's WebSocket, or a player connected to another process of the cluster,
at a table of this one (a visitor)."""


class ServerCollector(Collector):
    """Connections and sessions by transport, tables by phase and the journal's backlog,
    summed over the servers watched (one, except in tests that run several)."""

    def __init__(self) -> None:
        self._servers: weakref.WeakKeyDictionary[ServerFactory, StoreJournal | None] = \
            weakref.WeakKeyDictionary()

    def watch(self, server: ServerFactory, journal: StoreJournal | None) -> None:
        self._servers[server] = journal

    def forget(self, server: ServerFactory) -> None:
        self._servers.pop(server, None)

    def collect(self) -> Iterator[GaugeMetricFamily]:
        connections: Counter[str] = Counter()
        sessions: Counter[str] = Counter()
        tables: Counter[str] = Counter()
        backlog = away = 0
        for server, journal in list(self._servers.items()):
            connected = 0
            for conn in list(server.protocols):
                transport = conn.TRANSPORT
                connections[transport] += 1
                if conn.session is not None:
                    sessions[transport] += 1
                    connected += 1
            away += max(len(server.sessions) - connected, 0)
            # A visitor's connection is not opened here: its process holds the socket.
            visiting = server.relay.visiting if server.relay is not None else 0
            connections["relayed"] += visiting
            sessions["relayed"] += visiting
            for table in server.lobby.tables():
                tables[table.core.phase.value] += 1
            backlog += journal.backlog_rows if journal is not None else 0
        yield _by("pisyedili_connections", "Open client connections, by transport",
                  "transport", TRANSPORTS, connections)
        yield _by("pisyedili_sessions", "Players' sessions, by the transport of their "
                  "connection; `away`: disconnected, kept for a resume",
                  "transport", (*TRANSPORTS, "away"), {**sessions, "away": away})
        yield _by("pisyedili_tables", "Open tables held by this process, by phase",
                  "state", tuple(phase.value for phase in TablePhase), tables)
        yield GaugeMetricFamily("pisyedili_journal_backlog_rows", "Journal rows written "
                                "but not committed yet (a growing figure: the store is "
                                "slow or away)", value=backlog)

    def describe(self) -> Iterator[GaugeMetricFamily]:
        """The families, without reading any server (registering reads this)."""
        return iter(())


def _by(name: str, documentation: str, label: str, values: tuple[str, ...],
        counts: Counter[str] | dict[str, int]) -> GaugeMetricFamily:
    """A gauge with one sample per label value, 0 for those not counted."""
    family = GaugeMetricFamily(name, documentation, labels=[label])
    for value in values:
        family.add_metric([value], counts.get(value, 0))
    return family


COLLECTOR = ServerCollector()
REGISTRY.register(COLLECTOR)


def metrics_resource() -> Resource:
    """`/metrics`: the process's registry in Prometheus's text format.

    prometheus_client's Twisted module takes the global reactor as it is imported, so
    it is imported only here, once a server with `--health` is built: importing this
    module (or `tap`) installs no reactor, and the client's asyncio reactor can still
    be installed after it."""
    from prometheus_client.twisted import MetricsResource

    return cast(Resource, MetricsResource())  # type: ignore[no-untyped-call]
