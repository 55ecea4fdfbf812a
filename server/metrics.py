"""The server's Prometheus metrics: what the layers count, in the process's registry.

Every layer counts here (the table runner its moves, the journal its commits, the
cluster its round trips), so this module sits at the bottom of the server's layers and
imports nothing of the server. What is counted as it happens is a plain counter or
histogram, or a labelled child bound once here: a hook on the move path is one
attribute load and one `inc()`, no label lookup. What is a state rather than an event
(connections, sessions, tables, the journal's backlog) is read when Prometheus scrapes
(`pisyedili.server.service.metrics`), so it costs nothing between scrapes.

The metrics live in prometheus_client's default registry, beside its process metrics
(CPU, memory, open files): one process is one scrape target.
"""

from __future__ import annotations

import time
from typing import TypeVar

from prometheus_client import Counter, Histogram
from twisted.internet.defer import Deferred

T = TypeVar("T")

MOVES = Counter("pisyedili_moves", "Moves the tables applied (a play, a draw, a pass, a "
                "pick: a seat's decision, by a person, a bot or a timeout)")
JOURNAL_COMMIT = Histogram(
    "pisyedili_journal_commit_seconds", "Time the store took to commit one journal "
    "transaction", buckets=(.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 10))
REDIS_ROUND_TRIP = Histogram(
    "pisyedili_redis_round_trip_seconds", "Time from sending the lease renewal to Redis to "
    "its answer (a cluster process, every beat)",
    buckets=(.0005, .001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 3))
RELAYED = Counter("pisyedili_relayed_messages", "Messages received from the cluster's other "
                  "processes (requests, commands, a client's frames, handovers)")
TAKEOVERS = Counter("pisyedili_takeovers", "Tables this process took over from a process "
                    "that was gone")
DRAINS = Counter("pisyedili_drains", "Stops begun (SIGTERM): the process turned not ready "
                 "and handed its sessions and tables on")
LEASE_MISSED = Counter("pisyedili_lease_renewals_missed", "Times this process found its "
                       "cluster lease had run out before it was renewed (paused or stalled "
                       "for longer than --cluster-lease)")
LOGIN_DELAY = Histogram("pisyedili_login_delay_seconds", "Delay imposed before a password "
                        "was checked (it grows with the account's recent failures)",
                        buckets=(0, 1, 2, 4, 8, 16, 30, 60))
LOGIN_REFUSALS = Counter("pisyedili_login_refusals", "Logins refused, by error code",
                         ["code"])


def login_refused(kind: str, code: str) -> None:
    """A request of `kind` was refused with `code`: counted if it was a login."""
    if kind == "login":
        LOGIN_REFUSALS.labels(code).inc()


def time_answer(d: Deferred[T], histogram: Histogram) -> Deferred[T]:
    """Observe in `histogram` the time from now until `d` fires (with a result or a
    failure, which goes on unchanged)."""
    started = time.perf_counter()

    def observed(result: T) -> T:
        histogram.observe(time.perf_counter() - started)
        return result

    return d.addBoth(observed)
