"""The nemesis's fault schedule: which fault comes next, on what, for how long.

Pure and seeded, so that a run is told again by its seed: `schedule(seed, ...)` yields
the same faults in the same order on any machine. Only the runner
(`pisyedili.server.bench.nemesis`) acts them out, one at a time; how long each one
took depends on the machine, so the schedule holds what the nemesis chooses (the kind,
its target, how long it holds the fault, the calm after it), never wall-clock times.
"""

from __future__ import annotations

import random
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

KILL = "kill"
"""SIGKILL of one process, started again after `hold` seconds."""
TERM = "term"
"""SIGTERM of one process (it stops as an operator's stop does), started again."""
PAUSE = "pause"
"""SIGSTOP of one process for longer than the lease, then SIGCONT."""
ROLLING = "rolling"
"""Every process in turn stopped with SIGTERM and started again."""
REDIS_KEEP = "redis_keep"
"""Redis killed and started again with its data (its append-only file)."""
REDIS_WIPE = "redis_wipe"
"""Redis killed and started again empty."""
PG_RESTART = "pg_restart"
"""PostgreSQL stopped (fast) and started again."""
CUT_REDIS = "cut_redis"
"""The link between one process and Redis cut for `hold` seconds."""
CUT_PG = "cut_pg"
"""The link between one process and PostgreSQL cut for `hold` seconds."""

KINDS: Sequence[str] = (KILL, TERM, PAUSE, ROLLING, REDIS_KEEP, REDIS_WIPE, PG_RESTART,
                        CUT_REDIS, CUT_PG)
ON_A_PROCESS = frozenset({KILL, TERM, PAUSE, CUT_REDIS, CUT_PG})
"""The kinds aimed at one process (`Fault.target`); the others hit the whole cluster."""

WEIGHTS = {KILL: 3, TERM: 2, PAUSE: 2, ROLLING: 1, REDIS_KEEP: 1, REDIS_WIPE: 1,
           PG_RESTART: 1, CUT_REDIS: 2, CUT_PG: 2}
"""How often each kind is drawn: the faults of one process, the commonest in practice,
more than the cluster-wide ones, which each take longer to act out."""


@dataclass(frozen=True)
class Fault:
    n: int
    """Its place in the schedule, from 0."""
    kind: str
    target: int | None
    """The process it is aimed at (an index), or None for a cluster-wide fault."""
    hold: float
    """Seconds the fault lasts before it is repaired: a process down, paused or cut
    off, Redis or PostgreSQL down."""
    calm: float
    """Seconds without a fault after this one is repaired."""


def schedule(seed: int, processes: int, lease: float,
             kinds: Sequence[str] = KINDS) -> Iterator[Fault]:
    """Faults without end, the same for the same arguments. A pause always outlasts
    the lease (so that the others take the paused process for dead), by 0.5 to 2 s; a
    cut outlasts it half the time."""
    if processes < 1 or not kinds or any(k not in WEIGHTS for k in kinds):
        raise ValueError(f"no schedule for {processes} processes and kinds {kinds!r}")
    rng = random.Random(seed)
    weights = [WEIGHTS[k] for k in kinds]
    n = 0
    while True:
        kind = rng.choices(kinds, weights)[0]
        target = rng.randrange(processes) if kind in ON_A_PROCESS else None
        if kind == PAUSE:
            hold = lease + rng.uniform(0.5, 2.0)
        elif kind in (CUT_REDIS, CUT_PG):
            hold = rng.uniform(0.5, 1.5 * lease)
        elif kind == ROLLING:
            hold = 0.0
        else:
            hold = rng.uniform(0.0, 1.5)
        yield Fault(n, kind, target, round(hold, 3), round(rng.uniform(0.3, 1.5), 3))
        n += 1
