"""Play now: which waiting table a `play_now` seats its player at, and what a quick
table (one `play_now` opened) does by itself.

The best table is one the player could start playing at soonest: of the waiting public
tables of the rule set (and seat count, if asked) whose rated flag is the one asked
for, a quick table before one whose host starts by hand, then the fewest open seats,
then the oldest. A quick table starts its match as soon as every seat is filled and
every human ready (whoever comes through `play_now` or an accepted invitation is ready:
they asked to play now), and once its host's wait (`play_now.bots_after`) has run out,
bots take the seats still open. Both are ordinary table commands given in the host's
name, so the journal keeps them and a restart replays them as it replays a person's.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from twisted.logger import Logger

from pisyedili.server.clock import Clock, Delayed
from pisyedili.server.table.commands import AddBot, Start
from pisyedili.server.table.core import TableCore, TablePhase
from pisyedili.server.table.runner import TableRunner

log = Logger()


@dataclass(frozen=True)
class QuickSetup:
    """How a quick table fills: after `bots_after` seconds (None: never), with bots
    of `level`."""

    bots_after: float | None
    level: str

    def apply(self, core: TableCore, now: float) -> None:
        core.quick = True
        core.bots_at = None if self.bots_after is None else now + self.bots_after
        core.bot_level = self.level


@dataclass(frozen=True)
class Wish:
    """What a `play_now` asks for: a rule set, a seat count (None: any), rated or not;
    `bot`: the player is a bot account (a table that refuses those is no match)."""

    rules: str
    seats: int | None
    rated: bool
    bot: bool = False


def fits(core: TableCore, wish: Wish) -> bool:
    """Whether `wish`'s player may take a seat at `core` now."""
    return (not core.closed and not core.private and core.deck is None
            and core.phase == TablePhase.WAITING and core.options.rules == wish.rules
            and (wish.seats is None or core.options.players == wish.seats)
            and core.rated == wish.rated and (core.bot_accounts or not wish.bot)
            and bool(core.open_seats()))


class Pairing:
    """The quick tables' timers, and the choice of a table for `play_now`."""

    def __init__(self, clock: Clock, tables: Callable[[], list[TableRunner]]) -> None:
        self._clock = clock
        self._tables = tables
        self._timers: dict[int, Delayed] = {}

    def best(self, wish: Wish) -> TableRunner | None:
        """The table `wish` is best seated at (module docstring), or None."""
        fitting = [t for t in self._tables() if fits(t.core, wish)]
        if not fitting:
            return None
        return min(fitting, key=lambda t: (not t.core.quick, len(t.core.open_seats()), t.id))

    def arm(self, table: TableRunner) -> None:
        """Set a quick table's timer for its bots (at once if their time is past)."""
        core = table.core
        if core.bots_at is None or core.phase != TablePhase.WAITING or core.closed:
            return
        delay = max(0.0, core.bots_at - self._clock.seconds())
        self._timers[table.id] = self._clock.callLater(delay, self._fill, table)

    def forget(self, table: TableRunner) -> None:
        """The table closed or went to another process: its timer goes with it."""
        call = self._timers.pop(table.id, None)
        if call is not None and call.active():
            call.cancel()

    def _fill(self, table: TableRunner) -> None:
        """The host's wait ran out: bots take the seats still open (and `changed`
        starts the match once the last one sits)."""
        self._timers.pop(table.id, None)
        core = table.core
        core.bots_at = None  # shown no more; a seat opened later waits for a person
        host = core.host
        if core.closed or core.phase != TablePhase.WAITING or host is None:
            return
        seats = core.open_seats()
        log.info("table {table}: the wait is over, bots take seats {seats}",
                 table=table.id, seats=seats)
        for seat in seats:
            table.handle(AddBot(host, seat, core.bot_level, table.new_seed()))

    def changed(self, table: TableRunner) -> None:
        """A table changed: a quick one whose seats are all filled and ready starts."""
        core = table.core
        if core.quick and not core.closed and core.startable() and core.host is not None:
            table.handle(Start(core.host, table.new_seed()))
