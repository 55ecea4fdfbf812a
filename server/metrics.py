"""The server's Prometheus metrics: what the layers count, in the process's registry.

Every layer counts here (the table runner its moves, the journal its commits, the
cluster its round trips), so this module sits at the bottom of the server's layers and
imports nothing of the server. What is counted as it happens is a `Tally` or a
`Timings`: a plain attribute that the hook bumps (a move costs an `inc()` on a slotted
object, no lock and no label lookup) and that a scrape reads. prometheus_client's own
`Counter` takes a lock and checks exemplars on every `inc()`: several microseconds a
move, so it counts only what is rare and labelled (refused logins, by code). What is a
state rather than an event (connections, sessions, tables, the journal's backlog) is
read when Prometheus scrapes (`pisyedili.server.service.metrics`).

Each tally and timing has one writer thread (the reactor's; the journal's commits on a
database server, on the journal's thread), so `+=` needs no lock; a scrape, on another
thread, reads a value at most one event old.

The metrics live in prometheus_client's default registry, beside its process metrics
(CPU, memory, open files): one process is one scrape target.
"""

from __future__ import annotations

import time
from bisect import bisect_left
from collections.abc import Iterator
from typing import TypeVar

from prometheus_client import REGISTRY, Counter
from prometheus_client.core import CounterMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.registry import Collector
from twisted.internet.defer import Deferred

T = TypeVar("T")


class Tally:
    """A counter, exported as `NAME_total`."""

    __slots__ = ("count", "documentation", "name")

    def __init__(self, name: str, documentation: str) -> None:
        self.name = name
        self.documentation = documentation
        self.count = 0
        _PLAIN.append(self)

    def inc(self, n: int = 1) -> None:
        self.count += n

    def family(self) -> Metric:
        return CounterMetricFamily(self.name, self.documentation, value=self.count)


class Timings:
    """A histogram of durations (or delays) in seconds, with fixed bucket bounds."""

    __slots__ = ("bounds", "counts", "documentation", "name", "total")

    def __init__(self, name: str, documentation: str, bounds: tuple[float, ...]) -> None:
        self.name = name
        self.documentation = documentation
        self.bounds = bounds
        self.counts = [0] * (len(bounds) + 1)  # the last: above every bound
        self.total = 0.0
        _PLAIN.append(self)

    def observe(self, seconds: float) -> None:
        self.counts[bisect_left(self.bounds, seconds)] += 1  # bucket `le` its bound
        self.total += seconds

    def family(self) -> Metric:
        counts, running, buckets = list(self.counts), 0, []
        for bound, count in zip((*map(str, self.bounds), "+Inf"), counts, strict=True):
            running += count
            buckets.append((bound, running))
        return HistogramMetricFamily(self.name, self.documentation, buckets=buckets,
                                     sum_value=self.total)


class _PlainCollector(Collector):
    """Every `Tally` and `Timings`, as a scrape reads them."""

    def collect(self) -> Iterator[Metric]:
        return (plain.family() for plain in list(_PLAIN))


_PLAIN: list[Tally | Timings] = []
REGISTRY.register(_PlainCollector())

_SHORT = (.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10)

MOVES = Tally("pisyedili_moves", "Moves the tables applied (a play, a draw, a pass, a "
              "pick: a seat's decision, by a person, a bot or a timeout)")
JOURNAL_COMMIT = Timings("pisyedili_journal_commit_seconds", "Time the store took to "
                         "commit one journal transaction", _SHORT)
REDIS_ROUND_TRIP = Timings("pisyedili_redis_round_trip_seconds", "Time from sending the "
                           "lease renewal to Redis to its answer (a cluster process, every "
                           "beat)", _SHORT)
RELAYED = Tally("pisyedili_relayed_messages", "Messages received from the cluster's other "
                "processes (requests, commands, a client's frames, handovers)")
TAKEOVERS = Tally("pisyedili_takeovers", "Tables this process took over from a process "
                  "that was gone")
DRAINS = Tally("pisyedili_drains", "Stops begun (SIGTERM): the process turned not ready "
               "and handed its sessions and tables on")
LEASE_MISSED = Tally("pisyedili_lease_renewals_missed", "Times this process found its "
                     "cluster lease had run out before it was renewed (paused or stalled "
                     "for longer than --cluster-lease)")
LOGIN_DELAY = Timings("pisyedili_login_delay_seconds", "Delay imposed before a password "
                      "was checked (it grows with the account's recent failures)",
                      (0, 1, 2, 4, 8, 16, 30, 60))
LOGIN_REFUSALS = Counter("pisyedili_login_refusals", "Logins refused, by error code",
                         ["code"])


def login_refused(kind: str, code: str) -> None:
    """A request of `kind` was refused with `code`: counted if it was a login."""
    if kind == "login":
        LOGIN_REFUSALS.labels(code).inc()


def time_answer(d: Deferred[T], timings: Timings) -> Deferred[T]:
    """Observe in `timings` the time from now until `d` fires (with a result or a
    failure, which goes on unchanged)."""
    started = time.perf_counter()

    def observed(result: T) -> T:
        timings.observe(time.perf_counter() - started)
        return result

    return d.addBoth(observed)
