"""Who holds what when a process leaves: the cluster's decisions, with no I/O.

A process that stops hands the sessions it homes to the live ones (`hand_targets`);
a process that died is seen before its lease runs out, by its subscription to its own
channel, gone with its connections to Redis (`DeathWatch`). These only decide: the
callers read the state they need (`net/relay.py`, `redis/`) and act on the answer,
so each decision is tested with plain values.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field


def hand_targets(tables: Mapping[str, str | None], live: Sequence[str]) -> dict[str, str]:
    """Where a stopping process hands each session it homes, by player id. `tables`
    says which process holds each one's table: None for a player at no table or at a
    table of the stopping process itself (whoever takes that table over calls its
    member home). A player at a table of a live process goes to that process, where it
    is then a member of a table of its own process (nothing to relay); the others go to
    the live processes in turn, in player order, to share the load. Nobody is handed
    anywhere when no process is live."""
    ordered = sorted(set(live))
    if not ordered:
        return {}
    targets: dict[str, str] = {}
    turn = 0
    for player in sorted(tables, key=_by_number):
        owner = tables[player]
        if owner in ordered:
            targets[player] = owner
        else:
            targets[player] = ordered[turn % len(ordered)]
            turn += 1
    return targets


def _by_number(player: str) -> tuple[int, str]:
    return (int(player), "") if player.isdigit() else (0, player)


@dataclass(frozen=True)
class Verdict:
    """What one probe of the processes' subscriptions decided: those `dead` now, and
    those `suspect` (found unsubscribed, not for long enough yet: probed again once
    `DeathWatch.settle` has passed)."""

    dead: tuple[str, ...] = ()
    suspect: tuple[str, ...] = ()


@dataclass
class DeathWatch:
    """Processes whose subscription to their own channel is gone. A process that dies
    (kill -9, a crash) has its connections to Redis closed by its kernel at once, long
    before its lease runs out; a paused one keeps them, and waits for its lease.

    A process is taken for dead once every probe for `settle` seconds found no
    subscriber on its channel: a link being made again is back within that (Redis
    coming back is another matter: nobody is judged for a lease after it). A probe
    that finds it subscribed starts it over. A wrong guess (a process whose
    subscribing link stays down while it lives) is safe: what it held is taken over
    and fenced as from a process paused past its lease."""

    settle: float = 1.0
    _since: dict[str, float] = field(default_factory=dict)

    def probed(self, subscribers: Mapping[str, int], now: float) -> Verdict:
        """One probe's subscriber counts by process, read at `now`."""
        dead, suspect = [], []
        for process, count in sorted(subscribers.items()):
            if count > 0:
                self._since.pop(process, None)
                continue
            since = self._since.setdefault(process, now)
            if now - since >= self.settle:
                del self._since[process]
                dead.append(process)
            else:
                suspect.append(process)
        return Verdict(tuple(dead), tuple(suspect))

    def forget(self, processes: Iterable[str]) -> None:
        """No longer watched (gone by their lease, or told they left)."""
        for process in processes:
            self._since.pop(process, None)
