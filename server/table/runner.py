"""The Twisted side of a table: carries out a `TableCore`'s effects, feeds it commands.

Thin on purpose: `Send` goes to the member's session, `SetTimer` becomes a `callLater`
on the injected clock (tests pass `task.Clock`), `AskBot` a policy's decision — in the
reactor's thread pool for a `hard` search, so a search never stalls other tables. The
decisions all live in the core; this module only does what they say, in order.

Commands are handled one at a time: effects that produce further commands (a bot that
answers inline) queue them, so a table of bots never recurses and never re-enters
the core while it is handling something.
"""

from __future__ import annotations

import random
from collections import deque
from collections.abc import Callable
from typing import Any

from twisted.internet.defer import Deferred
from twisted.internet.threads import deferToThread
from twisted.logger import Logger
from twisted.python.failure import Failure

from pisyedili.protocol.messages import make_error
from pisyedili.server import metrics
from pisyedili.server.clock import Clock, Delayed
from pisyedili.server.table.commands import (
    BotMoved,
    Command,
    Join,
    Leave,
    MemberId,
    Start,
    TimerFired,
)
from pisyedili.server.table.core import TableCore
from pisyedili.server.table.effects import (
    AskBot,
    CancelTimer,
    Changed,
    Closed,
    MatchOver,
    MemberLeft,
    Message,
    Reply,
    Send,
    SetTimer,
    SharedAddress,
)
from pisyedili.server.table.journal import NO_JOURNAL, Journal
from pisyedili.server.table.stand_in import make_bot

log = Logger()

Deliver = Callable[[MemberId, Message], None]
ReplyTo = Callable[[Message], None]

_LOGGED = (Join, Leave, Start)
"""Commands logged as they happen (a tuple: `A | B` builds a union every time)."""


class TableRunner:
    """One table on the reactor: its core, its timers and its bots' searches."""

    def __init__(self, core: TableCore, clock: Clock, deliver: Deliver, *,
                 rng: random.Random,
                 on_change: Callable[[TableRunner], None],
                 on_close: Callable[[TableRunner], None],
                 on_left: Callable[[TableRunner, MemberId], None],
                 on_match: Callable[[MatchOver], object] | None = None,
                 journal: Journal = NO_JOURNAL) -> None:
        self.core = core
        self._journal = journal
        self._clock = clock
        self._deliver = deliver
        self._rng = rng  # match seeds and the bots' own randomness
        self._on_change = on_change
        self._on_close = on_close
        self._on_left = on_left
        self._on_match = on_match
        self._snapshot_at = core.deals_begun  # a snapshot is taken when this changes
        self._calls: dict[str, Delayed] = {}
        self._queue: deque[tuple[Command, ReplyTo | None]] = deque()
        self._busy = False
        self._let_go = False

    @property
    def id(self) -> int:
        return self.core.id

    @property
    def closed(self) -> bool:
        return self.core.closed

    def stop(self) -> None:
        """Cancel every timer: the server is stopping. The core is left as it is (a
        restart that keeps tables rebuilds it from its commands and re-arms its timers)."""
        for key in list(self._calls):
            self._cancel(key)

    def let_go(self) -> None:
        """Another process holds this table now: it does nothing more here, whatever
        comes (a bot's search that ends, a request already on its way)."""
        self.stop()
        self._let_go = True

    def replay(self, commands: list[tuple[float, Command]]) -> None:
        """Bring a fresh core to where the stored `commands` left it, doing nothing of
        what they said then (it was done): a restart's first step, before `Restored`."""
        for at, command in commands:
            try:
                self.core.handle(command, at)
            except Exception:  # as it failed live: logged then, and again now
                log.failure("table {table}: replaying {command} failed", table=self.id,
                            command=type(command).__name__)
        self._snapshot_at = self.core.deals_begun

    def new_seed(self) -> int:
        """A shuffle seed for a command that may start a match (it never leaves here)."""
        return self._rng.getrandbits(64)

    def handle(self, command: Command, reply: ReplyTo | None = None) -> None:
        """Hand `command` to the core and carry out what it says; `reply` gets the answer
        to a request (before any message the request causes)."""
        if self._let_go:
            return
        self._queue.append((command, reply))
        if self._busy:
            return
        self._busy = True
        try:
            while self._queue and not self._let_go:
                self._run(*self._queue.popleft())
        finally:
            self._busy = False

    def _run(self, command: Command, reply: ReplyTo | None) -> None:
        now = self._clock.seconds()
        # Written before anything it caused is sent (the journal holds sends back until
        # it has committed this), and even if the core fails on it: a replay then
        # fails the same way and leaves the core as the live one was left.
        if not self.core.closed:  # a closed table's commands change nothing
            self._journal.command(self.id, now, command)
        # Moves are counted by what the deal in play gained: a refused play, a stale
        # bot's answer or a timer that was no turn's deadline adds none.
        match = self.core.match
        deal = match.deal if match is not None else None
        made = len(deal.moves) if deal is not None else 0
        try:
            effects = self.core.handle(command, now)
        except Exception:
            log.failure("table {table}: {command} failed", table=self.id,
                        command=type(command).__name__)
            if reply is not None:
                reply(make_error("internal_error", "the server failed to handle this "
                                 "request"))
            return
        if deal is not None and len(deal.moves) != made:
            metrics.MOVES.inc(len(deal.moves) - made)
        if self.core.deals_begun != self._snapshot_at and not self.core.closed:
            self._snapshot_at = self.core.deals_begun
            self._journal.snapshot(self.core)
        if isinstance(command, _LOGGED):
            log.info("table {table}: {command} by player {player}", table=self.id,
                     command=type(command).__name__.lower(), player=command.member)
        unset: dict[str, Delayed] = {}  # calls this step cancelled: set again, moved
        try:
            for effect in effects:
                if isinstance(effect, Send):
                    self._deliver(effect.to, effect.msg)
                elif isinstance(effect, Reply):
                    if reply is not None:
                        reply(effect.msg)
                elif isinstance(effect, SetTimer):
                    self._set(effect, unset.pop(effect.key, None))
                elif isinstance(effect, CancelTimer):
                    call = self._calls.pop(effect.key, None)
                    if call is not None:
                        unset[effect.key] = call
                elif isinstance(effect, AskBot):
                    self._ask(effect)
                elif isinstance(effect, Changed):
                    self._on_change(self)
                elif isinstance(effect, MemberLeft):
                    self._on_left(self, effect.member)
                elif isinstance(effect, MatchOver):
                    if self._on_match is not None:
                        self._journal.after_commit(self._match_over, effect)
                elif isinstance(effect, SharedAddress):
                    self._warn_shared(effect)
                elif isinstance(effect, Closed):
                    for key in list(self._calls):
                        self._cancel(key)
                    log.info("table {table} closed", table=self.id)
                    self._on_close(self)
        finally:
            for call in unset.values():
                if call.active():
                    call.cancel()

    def _set(self, timer: SetTimer, unset: Delayed | None) -> None:
        """Arm `timer`, moving its call if it has one (`unset`: cancelled earlier in this
        step; a turn's timer is, by every move). Twisted moves a call to a later time
        for much less than cancelling it and making a new one; to an earlier one it
        searches every pending call, so that is a new call."""
        # (A call is in `unset` or in `_calls`, never both: a cancel moved it.)
        call = self._calls.pop(timer.key, None) or unset
        if call is not None and call.active():
            if call.getTime() <= self._clock.seconds() + timer.delay:
                call.reset(timer.delay)
                self._calls[timer.key] = call
                return
            call.cancel()
        self._calls[timer.key] = self._clock.callLater(timer.delay, self._fire, timer.key)

    def _warn_shared(self, shared: SharedAddress) -> None:
        """For operators (docs/operating.md, "Two accounts from one address"): allowed,
        but worth a look if the same accounts keep meeting."""
        log.warn("table {table}: a rated match starts with accounts {accounts} from one "
                 "address {address}", table=shared.table_id, address=shared.address,
                 accounts=[name for _, name in shared.seats],
                 seats=[seat for seat, _ in shared.seats], shared_address=True)

    def _match_over(self, match: MatchOver) -> None:
        """A match is kept (and rated) once the journal has the command that ended it:
        a table let go meanwhile (its holder moved on, and that command with it) never
        ended this match. What `on_match` answers, if a Deferred message, is told to the
        match's players and the table's members once it fires (a rated match's
        `rating_change`)."""
        if self._on_match is not None and not self._let_go:
            told = self._on_match(match)
            if isinstance(told, Deferred):
                told.addCallback(self._tell_players, match)

    def _tell_players(self, msg: object, match: MatchOver) -> None:
        """Send `msg` to the sessions that held the match's seats, wherever they are
        now, and to whoever is at the table (spectators, and players who came back)."""
        if not isinstance(msg, dict):
            return
        to = {str(p["player"]) for p in match.players if p.get("player") is not None}
        if not self._let_go and not self.core.closed:
            to.update(self.core.members())
        for member in sorted(to):
            self._deliver(member, msg)

    def _cancel(self, key: str) -> None:
        call = self._calls.pop(key, None)
        if call is not None and call.active():
            call.cancel()

    def _fire(self, key: str) -> None:
        self._calls.pop(key, None)
        self.handle(TimerFired(key))

    # -- bots ------------------------------------------------------------------------------

    def _ask(self, ask: AskBot) -> None:
        settings = self.core.settings
        budget = settings.hard_budget_s if ask.level == "hard" else None
        bot = make_bot(ask.level, random.Random(self._rng.getrandbits(64)), budget)

        def choose() -> Any:
            bot.observe(ask.events)
            return bot.choose(ask.view, ask.legal)

        if settings.bot_thread and ask.level == "hard":
            # A search spends its whole budget; in a thread it does not stall the reactor.
            # The bot is this decision's alone, so nothing else touches it meanwhile.
            d = deferToThread(choose)
            d.addCallbacks(lambda move: self.handle(BotMoved(ask.serial, int(move))),
                           self._bot_failed, errbackArgs=(ask,))
            return
        self._queue.append((BotMoved(ask.serial, int(choose())), None))

    def _bot_failed(self, failure: Failure, ask: AskBot) -> None:
        log.failure("table {table}: a bot's search failed", failure, table=self.id)
        # The core plays the default move for an answer that is not legal.
        self.handle(BotMoved(ask.serial, -1))
